import type {Path} from '../input/yaml-source.js'
import {formatPath} from '../input/yaml-source.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {runbookFromFlags, type Runbook} from './load.js'
import type {RunbookInput} from './schema.js'

/** Targets for a rehearsal: every scenario pool is a weighted set and a target group of the same name. */
export function scenarioTargets(scenario: Scenario): RunbookInput['targets'] {
  const pools = scenario.pools
  return {
    dns: {
      zone: 'simulated',
      record: `${scenario.name}.simulated.`,
      ttl: scenario.dns.ttl,
      sets: Object.fromEntries(pools.map((p) => [p.name, p.name])),
    },
    targetGroups: Object.fromEntries(pools.filter((p) => p.kind === 'servers').map((p) => [p.name, `simulated:${p.name}`])),
    listener: 'simulated',
    metrics: {source: 'cloudwatch'},
  }
}

/**
 * A one-step runbook for the single-action commands (`sluice ramp`, `sluice cycle`, ...): against
 * a scenario's pools in a rehearsal, or against targets named by flags live. Errors name the flag
 * that supplied the bad value.
 */
export function singleStepRunbook(
  step: Record<string, unknown>,
  targets: RunbookInput['targets'],
  rehearsal: {scenario: string; setup?: string; startAt?: number} | undefined,
  flags: Record<string, string>,
): Runbook {
  const input: RunbookInput = {
    name: `${String(step.action)}-from-the-command-line`,
    description: `sluice ${String(step.action)} from the command line`,
    targets,
    ...(rehearsal ? {rehearsal} : {}),
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
