import {readFileSync} from 'node:fs'
import {rulesOf} from '../actions/registry.js'
import type {ControlPlane} from '../ports/control-plane.js'
import {RefusedError} from '../errors.js'
import type {Runbook} from '../loader/runbook.js'
import {loadRunbookFile, runbookFromFlags} from '../loader/load-runbook.js'
import type {RunbookInput} from '../loader/runbook-schema.js'
import {mutations, sha256, type JournalWriter, type RunStart} from '../state/journal.js'
import type {RecordedMutation} from '../ports/io.js'
import type {JournalRead, StateStore} from '../ports/state-store.js'

// What resume and rollback read back of a run before either acts: its journal (never a torn one),
// the runbook it ran (never a changed one), and what became of changes it never saw finish.

/** Reads a journal for resume or rollback, refusing to guess when its last line was cut off. */
export async function readForRecovery(store: StateStore, runId: string, what: 'resume' | 'rollback'): Promise<JournalRead> {
  const read = await store.read(runId)
  if (read.torn) {
    const last = [...mutations(read)].reverse().find((m) => m.outcome === undefined) ?? mutations(read).at(-1)
    throw new RefusedError(
      `the journal of run ${runId} ends in a torn write at line ${read.torn.line} (${read.torn.bytes} bytes: ${JSON.stringify(read.torn.text.slice(0, 60))}…): ` +
        `the entry was cut off while it was written, so sluice cannot tell what happened after entry ${read.entries.at(-1)?.seq ?? 0}. ` +
        `It will not ${what} on a guess. Check ${last ? `${last.resource} (last change: ${last.kind})` : "the runbook's targets"} with \`sluice status\`, ` +
        `then set it right by hand or remove the torn line from the journal and run \`sluice ${what} ${runId}\` again`,
    )
  }
  return read
}

/** The runbook a run ran: the same file, unchanged, or the input its flags made. */
export function runbookOf(start: RunStart): Runbook {
  if (start.runbookFile) {
    let text: string
    try {
      text = readFileSync(start.runbookFile, 'utf8')
    } catch {
      throw new RefusedError(`run ${start.runId} ran ${start.runbookFile}, which cannot be read any more`)
    }
    if (sha256(text) !== start.runbookSha256)
      throw new RefusedError(`${start.runbookFile} has changed since run ${start.runId} started; sluice resumes a run only with the runbook it started with`)
    return loadRunbookFile(start.runbookFile)
  }
  return runbookFromFlags(start.runbookInput as RunbookInput, () => 'journal')
}

/**
 * Settles every change whose outcome was never recorded (the run died between intent and outcome)
 * by reading the real state, the way the action that made it says, and records the finding. Resume
 * and rollback both start here, so neither acts on a guess. A change whose resource now matches
 * neither side is refused, with what to check.
 */
export async function settleUnknown(
  recorded: RecordedMutation[],
  control: ControlPlane,
  journal: JournalWriter,
  what: 'resume' | 'rollback',
): Promise<string[]> {
  const findings: string[] = []
  for (const m of recorded.filter((r) => r.outcome === undefined)) {
    const found = await rulesOf(m).settle(m, control)
    const change = `${m.kind} on ${m.resource} (${JSON.stringify(m.before)} → ${JSON.stringify(m.after)})`
    if (found === null)
      throw new RefusedError(
        `run ${journal.runId} was stopped during ${change}, and ${m.resource} now matches neither side; check it with \`sluice status\` and set it by hand before you ${what}`,
      )
    m.outcome = {ok: found === 'applied', found: what}
    await journal.write('mutation', {mutation: {...m, phase: 'outcome', ok: found === 'applied'}, found: `${found} (found on ${what})`})
    findings.push(`${change}: ${found}`)
  }
  return findings
}
