import {Flags} from '@oclif/core'
import {InputError} from '../errors.js'
import {scenarioTargets, singleStepRunbook} from '../runbook/single-step.js'
import type {RunbookInput} from '../runbook/schema.js'
import {loadScenario} from '../sim/scenario/load.js'
import {numberFlag} from './flags.js'
import {runFlags} from './run-flags.js'
import {executeRunbook, type Printer, type RunJson} from './run-runbook.js'

/**
 * Flags of the single-action commands: the run flags; for a rehearsal, a scenario and where in it
 * to start; live, the AWS resources the step touches.
 */
export const stepCommandFlags = {
  ...runFlags,
  listener: Flags.string({description: 'Live: the listener ARN restrictions go on.', helpValue: 'ARN'}),
  'load-balancer': Flags.string({description: 'Live: the CloudWatch LoadBalancer dimension for gates (app/NAME/ID).', helpValue: 'DIMENSION'}),
  record: Flags.string({description: 'Live: the weighted record name.', helpValue: 'NAME'}),
  'record-type': Flags.string({description: 'Live: the weighted record type.', options: ['A', 'AAAA', 'CNAME'], default: 'A'}),
  scenario: Flags.string({char: 's', description: 'The scenario to rehearse against.', default: 'outlook-2026', helpValue: 'NAME|FILE'}),
  sets: Flags.string({description: 'Live: the record\'s weighted set identifiers, comma-separated (each is also a pool name for gates).', helpValue: 'ID,ID'}),
  'start-at': numberFlag({description: 'Scenario second at which the step starts (default 0).'}),
  'target-group': Flags.string({description: 'Live: POOL=ARN of a target group (repeatable).', multiple: true, helpValue: 'POOL=ARN'}),
  zone: Flags.string({description: 'Live: the Route 53 hosted zone id.', helpValue: 'ID'}),
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
  'break-lock'?: string
  'dry-run': boolean
  'endpoint-url'?: string
  listener?: string
  'load-balancer'?: string
  profile?: string
  record?: string
  'record-type': string
  region?: string
  sets?: string
  state?: string
  'target-group'?: string[]
  zone?: string
  scenario: string
  setup?: string
  'start-at'?: number
  pace?: number
  yes: boolean
  svg?: string
  html?: string
}

/** Live targets from the resource flags; what a step needs and no flag gives is caught by the runbook checks. */
function liveTargets(flags: StepCommandFlagValues): RunbookInput['targets'] {
  const groups: Record<string, string> = {}
  for (const value of flags['target-group'] ?? []) {
    const eq = value.indexOf('=')
    if (eq <= 0) throw new InputError(`--target-group: expected POOL=ARN, got "${value}"`)
    groups[value.slice(0, eq)] = value.slice(eq + 1)
  }
  const sets = (flags.sets ?? '').split(',').map((s) => s.trim()).filter(Boolean)
  if ((flags.zone || flags.record) && !(flags.zone && flags.record && sets.length > 0))
    throw new InputError('--zone, --record and --sets go together: the hosted zone, the weighted record and its set identifiers')
  return {
    ...(flags.zone ? {dns: {zone: flags.zone, record: flags.record!, type: flags['record-type'] as 'A', sets: Object.fromEntries(sets.map((s) => [s, s]))}} : {}),
    ...(Object.keys(groups).length > 0 ? {targetGroups: groups} : {}),
    ...(flags.listener ? {listener: flags.listener} : {}),
    ...(flags['load-balancer'] ? {metrics: {source: 'cloudwatch' as const, loadBalancer: flags['load-balancer']}} : {}),
  }
}

/** Live, a step needs the resources it touches named by flags; say which ones, and the alternative. */
function requireLiveFlags(action: string, flags: StepCommandFlagValues): void {
  const missing: Record<string, string | undefined> = {
    ramp: flags.zone && flags.record && flags.sets ? undefined : '--zone, --record and --sets',
    cycle: flags['target-group']?.length ? undefined : '--target-group POOL=ARN',
    restrict: flags.listener ? undefined : '--listener',
    lift: flags.listener ? undefined : '--listener',
  }
  const need = missing[action]
  if (need) throw new InputError(`sluice ${action}: live, it needs ${need} to name what it changes; or rehearse with --dry-run`)
}

/** Runs one step as a runbook of its own: the same engine, gates and report as `sluice run`. */
export async function runSingleStep(
  step: Record<string, unknown>,
  flags: StepCommandFlagValues,
  flagPaths: Record<string, string>,
  json: boolean,
  out: Printer,
): Promise<RunJson> {
  const paths = {
    'steps[0]': `sluice ${String(step.action)}`, 'targets.dns': '--zone/--record/--sets', 'targets.targetGroups': '--target-group',
    'targets.listener': '--listener', 'targets.metrics': '--load-balancer', ...flagPaths,
  }
  let runbook
  if (flags['dry-run']) {
    const {scenario} = loadScenario(flags.scenario)
    runbook = singleStepRunbook(step, scenarioTargets(scenario), {scenario: flags.scenario, setup: flags.setup, startAt: flags['start-at']}, paths)
  } else {
    requireLiveFlags(String(step.action), flags)
    runbook = singleStepRunbook(step, liveTargets(flags), undefined, paths)
  }
  return executeRunbook(runbook, {
    dryRun: flags['dry-run'], scenario: undefined, setup: flags.setup, pace: flags.pace, yes: flags.yes, json, svg: flags.svg, html: flags.html,
    profile: flags.profile, region: flags.region, endpointUrl: flags['endpoint-url'], state: flags.state, breakLock: flags['break-lock'],
  }, out)
}
