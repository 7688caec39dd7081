import type {ActionDefinition} from '../actions/action.js'
import {actionNamed} from '../actions/registry.js'
import {InputError} from '../errors.js'
import type {Step} from '../actions/registry.js'
import type {RunbookInput} from '../loader/runbook-schema.js'
import {singleStepRunbook} from '../loader/single-step.js'
import {awsFlags, lockFlags, rehearsalOnly, reportFlags, runFlags, stateFlags, stepRehearsalFlags, type FlagValues, type targetFlags} from './flags.js'
import {executeRunbook, modeOf, type Printer, type RunJson} from './run-runbook.js'
import type {StepNeeds} from '../wiring/step-fleet.js'

/**
 * The flags of the single-action commands that change traffic (ramp, cycle, restrict, lift):
 * rehearse or run, the rehearsal's scenario and reports, and live, where AWS and state are. Each
 * adds the target flags for what it changes.
 */
export const trafficCommandFlags = {...runFlags, ...rehearsalOnly({...stepRehearsalFlags, ...reportFlags}), ...awsFlags, ...stateFlags, ...lockFlags}

/**
 * The freeze lives in sluice's state, so freeze and unfreeze need only that and --dry-run; they
 * ask nothing, and take --yes anyway, so a script that passes --yes to every command that changes
 * something never breaks on these two.
 */
export const freezeCommandFlags = {'dry-run': runFlags['dry-run'], yes: runFlags.yes, ...awsFlags, ...stateFlags}

type TargetValues = Partial<
  FlagValues<typeof targetFlags.dns & typeof targetFlags.targetGroup & typeof targetFlags.listener & typeof targetFlags.metrics & typeof targetFlags.haproxy>
>

export type StepCommandValues = Pick<FlagValues<typeof runFlags>, 'dry-run'> &
  Partial<FlagValues<typeof runFlags & typeof stepRehearsalFlags & typeof reportFlags & typeof awsFlags & typeof stateFlags & typeof lockFlags>> &
  TargetValues

/**
 * Live targets from the resource flags; what a step needs and no flag gives is caught by the
 * runbook checks (a --sets of no set identifiers among them). Which flags go together is declared
 * on them (targetFlags), so oclif has refused half a weighted record, or a HAProxy socket without
 * its map or backends.
 */
function liveTargets(flags: TargetValues): RunbookInput['targets'] {
  const groups = Object.fromEntries((flags['target-group'] ?? []).map(({key, value}) => [key, value]))
  const sets = (flags.sets ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (flags['haproxy-socket'] && flags['restrict-map']) {
    const backends = Object.fromEntries((flags.backend ?? []).map(({key, value}) => [key, value]))
    return {
      haproxy: {socket: flags['haproxy-socket'], backends, restrictMap: flags['restrict-map']},
      metrics: {source: 'haproxy'},
    }
  }
  return {
    ...(flags.zone
      ? {dns: {zone: flags.zone, record: flags.record!, type: (flags['record-type'] ?? 'A') as 'A', sets: Object.fromEntries(sets.map((s) => [s, s]))}}
      : {}),
    ...(Object.keys(groups).length > 0 ? {targetGroups: groups} : {}),
    ...(flags.listener ? {listener: flags.listener} : {}),
    ...(flags['load-balancer'] ? {metrics: {source: 'cloudwatch' as const, loadBalancer: flags['load-balancer']}} : {}),
  }
}

/** The flags that name each thing a step can change, live, and whether they were given. */
const resourceFlags: Record<NonNullable<ActionDefinition['changes']>, {flags: string; given: (f: TargetValues) => boolean}> = {
  weights: {flags: '--zone, --record and --sets', given: (f) => Boolean(f.zone && f.record && f.sets)},
  pools: {flags: '--target-group POOL=ARN', given: (f) => Boolean(f['target-group']?.length)},
  restrictions: {flags: '--listener (or --haproxy-socket and --restrict-map)', given: (f) => Boolean(f.listener || f['haproxy-socket'])},
}

/**
 * Live, a step needs what it changes named by flags; say which ones, and the alternative. Not
 * declared with oclif: which flags a step needs live is its action's (`changes` in the action
 * registry), and only without --dry-run.
 */
function requireLiveFlags(action: Step['action'], flags: TargetValues): void {
  const changes = (actionNamed(action) as ActionDefinition).changes
  const named = changes && resourceFlags[changes]
  if (named && !named.given(flags)) throw new InputError(`sluice ${action}: live, it needs ${named.flags} to name what it changes; or rehearse with --dry-run`)
}

/** What a step's flags name that its rehearsal fleet must have. */
function needsOf(step: Record<string, unknown>): StepNeeds {
  const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  const gate = (step.gate ?? {}) as {pool?: unknown}
  const pools = [text(step.pool), text(gate.pool)].filter((p): p is string => p !== undefined && p !== text(step.set))
  return {
    ...(step.action === 'ramp' && text(step.set) ? {set: text(step.set)} : {}),
    ...(pools.length > 0 ? {pools} : {}),
    ...(text(step.type) ? {type: text(step.type), restricted: step.action === 'lift'} : {}),
  }
}

/** Runs one step as a runbook of its own: the same engine, gates and report as `sluice run`. */
export async function runSingleStep(
  step: Record<string, unknown>,
  flags: StepCommandValues,
  flagPaths: Record<string, string>,
  json: boolean,
  out: Printer,
): Promise<RunJson> {
  const paths = {
    'steps[0]': `sluice ${String(step.action)}`,
    'targets.dns': '--zone/--record/--sets',
    'targets.targetGroups': '--target-group',
    'targets.listener': '--listener',
    'targets.haproxy': '--haproxy-socket/--restrict-map',
    'targets.haproxy.backends': '--backend',
    'targets.metrics': '--load-balancer',
    ...flagPaths,
  }
  const mode = modeOf(flags)
  let targets: RunbookInput['targets']
  if (mode.kind === 'rehearsal') {
    // Loaded once here, and handed to the rehearsal: its pools are the step's targets.
    const [{loadRehearsalScenario, scenarioTargets}, {fleetForStep}] = await Promise.all([import('../wiring/rehearsal.js'), import('../wiring/step-fleet.js')])
    let scenario = loadRehearsalScenario(flags.scenario ?? 'outlook-2026')
    // With no scenario named, the fleet is the default one made to have what the flags name.
    if (flags.scenario === undefined) {
      const built = fleetForStep(scenario, needsOf(step))
      scenario = built.scenario
      // What was assumed is said under --json too: a figure from a fleet the user did not write needs its caveat beside it.
      for (const line of built.made) process.stderr.write(`rehearsal fleet: ${line}\n`)
    }
    Object.assign(mode, {scenario, startAt: flags['start-at']})
    // A share turned away, or a lift by degrees, is rehearsed as HAProxy does it: an ALB cannot.
    const partial =
      (step.action === 'restrict' && typeof step.share === 'number' && step.share < 100) || (step.action === 'lift' && step.schedule !== undefined)
    targets = scenarioTargets(scenario, partial ? 'haproxy' : 'aws')
  } else {
    requireLiveFlags(step.action as Step['action'], flags)
    targets = liveTargets(flags)
  }
  const runbook = singleStepRunbook(step, targets, paths)
  const single = {name: String(step.action), changesTraffic: (actionNamed(step.action as Step['action']) as ActionDefinition).changes !== undefined}
  return executeRunbook(runbook, mode, {yes: flags.yes ?? false, json, svg: flags.svg, html: flags.html, single}, out)
}
