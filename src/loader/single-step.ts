import {formatPath, type Path} from '../input/problems.js'
import type {Runbook} from './runbook.js'
import {runbookFromFlags} from './load-runbook.js'
import type {RunbookInput} from './runbook-schema.js'

/**
 * A one-step runbook for the single-action commands (`sluice ramp`, `sluice cycle`, ...): against
 * a scenario's pools in a rehearsal, or against targets named by flags live. Errors name the flag
 * that supplied the bad value.
 */
export function singleStepRunbook(step: Record<string, unknown>, targets: RunbookInput['targets'], flags: Record<string, string>): Runbook {
  const input: RunbookInput = {
    name: `${String(step.action)}-from-the-command-line`,
    description: `sluice ${String(step.action)} from the command line`,
    targets,
    steps: [step as RunbookInput['steps'][number]],
  }
  const flagFor = (path: Path): string | undefined => {
    const key = formatPath(path)
    // The most specific path wins: steps[0].gate.threshold before steps[0].gate before steps[0].
    const byLength = Object.entries(flags).sort(([a], [b]) => b.length - a.length)
    for (const [prefix, flag] of byLength) if (key === prefix || key.startsWith(`${prefix}.`) || key.startsWith(`${prefix}[`)) return flag
    return undefined
  }
  return runbookFromFlags(input, flagFor)
}
