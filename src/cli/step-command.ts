import {Flags} from '@oclif/core'
import {InputError} from '../input/errors.js'
import {singleStepRunbook} from '../runbook/single-step.js'
import {loadScenario} from '../scenario/load.js'
import {numberFlag} from './flags.js'
import {runFlags} from './run-flags.js'
import {executeRunbook, liveModeNotYet, type Printer, type RunJson} from './run-runbook.js'

/** Flags of the single-action commands: the run flags, with a scenario to rehearse on and where in it to start. */
export const stepCommandFlags = {
  ...runFlags,
  scenario: Flags.string({char: 's', description: 'The scenario to rehearse against.', default: 'outlook-2026', helpValue: 'NAME|FILE'}),
  'start-at': numberFlag({description: 'Scenario second at which the step starts (default 0).'}),
}

/** Gate flags for the steps that take a gate. */
export const gateFlags = {
  'gate-metric': Flags.string({description: 'Gate metric.', options: ['error-rate', 'latency-p99', 'healthy-targets']}),
  'gate-threshold': numberFlag({description: 'Gate threshold: % for error-rate and healthy-targets, ms for latency-p99.'}),
  'gate-window': numberFlag({description: 'Seconds of data each verdict looks at (default 60).'}),
  'gate-interval': numberFlag({description: 'Seconds between verdicts (default 10).'}),
  'gate-successes': numberFlag({description: 'Passing verdicts in a row the gate needs (default 3).', integer: true}),
  'gate-pool': Flags.string({description: 'Pool the gate metric is scoped to.'}),
}

type GateFlagValues = {[K in keyof typeof gateFlags]?: string | number}

export function gateFromFlags(flags: GateFlagValues): Record<string, unknown> | undefined {
  if (flags['gate-metric'] === undefined) {
    const stray = Object.entries(flags).find(([k, v]) => k.startsWith('gate-') && v !== undefined)
    if (stray) throw new InputError(`--${stray[0]}: needs --gate-metric to say what the gate measures`)
    return undefined
  }
  return {
    metric: flags['gate-metric'],
    ...(flags['gate-threshold'] === undefined ? {} : {threshold: flags['gate-threshold']}),
    ...(flags['gate-window'] === undefined ? {} : {window: flags['gate-window']}),
    ...(flags['gate-interval'] === undefined ? {} : {interval: flags['gate-interval']}),
    ...(flags['gate-successes'] === undefined ? {} : {successes: flags['gate-successes']}),
    ...(flags['gate-pool'] === undefined ? {} : {pool: flags['gate-pool']}),
  }
}

export const gateFlagPaths = {
  'steps[0].gate.threshold': '--gate-threshold',
  'steps[0].gate.window': '--gate-window',
  'steps[0].gate.interval': '--gate-interval',
  'steps[0].gate.successes': '--gate-successes',
  'steps[0].gate.pool': '--gate-pool',
  'steps[0].gate': '--gate-metric',
}

/** Splits a hook given as one flag value into argv. No shell is involved, so nothing is interpreted. */
export function hookArgv(flag: string, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined
  const argv = value.split(/\s+/).filter(Boolean)
  if (argv.length === 0) throw new InputError(`--${flag}: expected a command, got an empty string`)
  return argv
}

export interface StepCommandFlagValues {
  'dry-run': boolean
  scenario: string
  setup?: string
  'start-at'?: number
  pace?: number
  yes: boolean
  svg?: string
  html?: string
}

/** Runs one step as a runbook of its own: the same engine, gates and report as `sluice run`. */
export async function runSingleStep(
  step: Record<string, unknown>,
  flags: StepCommandFlagValues,
  flagPaths: Record<string, string>,
  json: boolean,
  out: Printer,
): Promise<RunJson> {
  if (!flags['dry-run']) throw new InputError(liveModeNotYet)
  const {scenario} = loadScenario(flags.scenario)
  const runbook = singleStepRunbook(step, scenario, {scenario: flags.scenario, setup: flags.setup, startAt: flags['start-at']}, {'steps[0]': `sluice ${String(step.action)}`, ...flagPaths})
  return executeRunbook(runbook, {dryRun: true, scenario: undefined, setup: flags.setup, pace: flags.pace, yes: flags.yes, json, svg: flags.svg, html: flags.html}, out)
}
