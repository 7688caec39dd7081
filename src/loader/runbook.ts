import type {Step} from '../actions/registry.js'
import type {Path} from '../input/problems.js'
import type {RehearsalData, TargetsData} from '../runbook/schema.js'
import type {RunbookInput} from './runbook-schema.js'

/** What a loaded runbook is: its steps with every default filled in. The loader makes it; the engine, the live side and the rehearsal read it. */
export interface Runbook {
  file: string
  name: string
  description: string
  targets: TargetsData
  rehearsal: RehearsalData
  steps: Step[]
  /** Where a field came from (`file:line:column`), for errors found later, e.g. against a rehearsal scenario. */
  locate: (path: Path) => string
  /** What it was made from, so a journal can tell a resume exactly which runbook to run. */
  source: {kind: 'file'; text: string} | {kind: 'flags'; input: RunbookInput}
}
