import type {LiveView} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import {describeWeights, shareOf} from '../actions/weights-ramp.js'
import {firstStepNow} from '../pacing/pacer.js'
import {countsNow} from './counts-now.js'
import {describeRestrictions, restricts} from '../actions/restrict/restriction.js'
import {planRunbook} from '../engine/plan.js'
import {FailedError, InputError, RefusedError} from '../errors.js'
import {problemLine, type Problem} from '../input/problems.js'
import {endpointVariable} from '../input/endpoint-url.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import type {PlannedStep} from '../ports/io.js'
import type {Runbook} from '../loader/runbook.js'
import {backendOf} from '../runbook/targets.js'
import type {AwsOptions} from '../aws/clients.js'
import type {CallerIdentity} from '../aws/identity.js'
import type {StateStore} from '../ports/state-store.js'
import {liveAws, liveControlPlane, liveIdentity} from '../wiring/live.js'

/**
 * Reads everything the runbook will touch before anything changes: the record's weighted sets,
 * each target group, the listener's rules. An unknown resource or a missing permission stops the
 * run here (exit 1), with nothing changed; so does a step the live system makes impossible (a
 * hook naming {ip} for targets with no address: exit 2, at its place in the runbook). Returns
 * what it found, and the run's one plan told in the live numbers, for the person to confirm.
 */
export async function preflight(
  runbook: Runbook,
  control: ControlPlane,
  signal?: AbortSignal,
  fromStep = 0,
  options: {demandNow?: boolean} = {},
): Promise<Preflight> {
  const lines: string[] = []
  const live: LiveView = {groupSizes: new Map(), rulesLabel: control.restrictions?.label}
  if (control.weights) {
    live.weights = await control.weights.readWeights(signal)
    const ttl = await control.weights.ttl(signal)
    const backend = backendOf(runbook.targets)
    for (const set of Object.keys(backend.weightedSets ?? {}))
      if (!(set in live.weights))
        throw new FailedError(`${control.weights.label} has no ${backend.sets.noun} "${set}"; it has ${Object.keys(live.weights).join(', ')}`)
    lines.push(`${control.weights.label} (TTL ${ttl} s) now: ${describeWeights(live.weights)}`)
  }
  for (const [pool, group] of control.pools) {
    const targets = await group.targets(signal)
    live.groupSizes.set(pool, targets.length)
    lines.push(`${group.label} now: ${targets.filter((t) => t.health === 'healthy').length} of ${targets.length} targets healthy`)
  }
  const refused: Problem[] = []
  for (const step of runbook.steps.slice(fromStep)) for (const problem of (await actionOf(step).refusals?.(step, control, signal)) ?? []) refused.push(problem)
  if (refused.length > 0) throw new InputError(refused.map((p) => problemLine(runbook.locate(p.path), p)))
  if (control.restrictions) {
    const rules = await control.restrictions.list()
    live.restricted = rules.filter(restricts).map((r) => r.type)
    live.restrictingNothing = rules.filter((r) => !restricts(r)).map((r) => r.type)
    lines.push(`${control.restrictions.label} now: ${describeRestrictions(rules)}`)
  }
  // A damaged freeze record is shown, not fatal here: `unfreeze --force` must be able to clear it.
  const freeze = await control.freeze.get().catch((error: Error) => error)
  lines.push(
    freeze instanceof Error
      ? `freeze now: damaged: ${freeze.message}`
      : freeze
        ? `freeze now: frozen since ${freeze.since} by ${freeze.by}: ${freeze.reason}`
        : 'freeze now: none',
  )
  if (!(freeze instanceof Error)) live.freeze = freeze
  // What a gate on this source cannot see, said before anything is asked.
  if (runbook.steps.some((s) => 'gate' in s && s.gate) && control.metrics?.caveats)
    for (const caveat of await control.metrics.caveats(signal)) lines.push(`! ${control.metrics.label}: ${caveat}`)
  // Both read demand over the same seconds: at once, so a runbook with both waits for one read.
  // What a counts gate's bake would hold is asked of `plan --live` only: on HAProxy the read takes
  // its 10 s, which a run or a resume in an outage should not wait before it asks.
  const [paced, counts] = await Promise.all([
    pacedNow(runbook, control, live.weights, fromStep, signal),
    options.demandNow ? countsNow(runbook, control, fromStep, planDemandWindow, signal) : new Map<number, string>(),
  ])
  live.pacedNow = paced
  live.countsNow = counts
  // Who reads it: the plan tells this run's own freeze (or, typed by hand, this operator's) from another's.
  live.planner = {operator: control.operator, ...(control.runId === undefined ? {} : {runId: control.runId}), ...(control.byHand ? {byHand: true} : {})}
  return {now: lines, plan: planRunbook(runbook, live, fromStep)}
}

/**
 * What each paced ramp would do if it started now, from the weights now: its rule read against the
 * pool's room and demand this moment (demand over 10 s, not the gate's window: HAProxy's counters
 * answer a first read only after the whole window, and a plan should not wait for it).
 */
async function pacedNow(
  runbook: Runbook,
  control: ControlPlane,
  weights: WeightMap | undefined,
  fromStep: number,
  signal?: AbortSignal,
): Promise<Map<number, string>> {
  const found = new Map<number, string>()
  for (const step of runbook.steps.slice(fromStep)) {
    if ((step.action !== 'ramp' && step.action !== 'weighted-target-groups') || !step.pace) continue
    const now = async (): Promise<string> => {
      const split = step.action === 'ramp' ? weights : await control.poolWeights?.(step.at).readWeights(signal)
      const share = split ? shareOf(split, step.action === 'ramp' ? step.set : step.pool) : 0
      const ttl = step.action === 'ramp' ? ((await control.weights?.ttl(signal)) ?? 0) : 0
      return firstStepNow(step.pace!, control, share, planDemandWindow, ttl, signal)
    }
    found.set(step.index, await now().catch((error: Error) => `now: cannot tell: ${error.message}`))
  }
  return found
}

const planDemandWindow = 10

export interface Preflight {
  /** What is true now, one line per resource the run touches. */
  now: string[]
  /** The steps still to run, told in live numbers, each from the state the ones before leave. */
  plan: PlannedStep[]
}

/**
 * `sluice plan --live`: what a run would read before it asks, and nothing more. Every call is a
 * read (`sluice iam-policy --read-only` lists them), so a role that may only look can plan.
 */
export async function planLive(runbook: Runbook, aws: AwsOptions, store: StateStore): Promise<Preflight & {on: string; identity: CallerIdentity | null}> {
  const resolved = await liveAws(runbook, aws)
  const identity = await liveIdentity(runbook, resolved)
  const {control, clients} = liveControlPlane(runbook, resolved, {operator: 'plan', freeze: store.freeze})
  try {
    const read = await preflight(runbook, control, undefined, 0, {demandNow: true})
    return {...read, now: [...callerLine(identity), ...read.now], on: liveTarget(runbook, resolved, identity), identity}
  } finally {
    clients.destroy()
  }
}

/**
 * What a live run drives, as its question and a live plan name it: `AWS account 123456789012
 * (eu-west-1) at the endpoint …`, `HAProxy /run/haproxy/admin.sock`.
 */
export function liveTarget(runbook: Runbook, aws: AwsOptions, identity: CallerIdentity | null): string {
  const backend = backendOf(runbook.targets)
  const name = identity ? `${backend.name} account ${identity.account}` : backend.name
  const region = backend.actsThroughAws && aws.region ? `${name} (${aws.region})` : name
  const endpoint = backend.actsThroughAws ? endpointOverride(aws.endpoint) : null
  return endpoint ? `${region} at ${endpoint}` : region
}

/**
 * The account a resume or a rollback acts in, checked against the one its run started in (its
 * run-start entry; journals from before sluice asked have none): with credentials for another
 * account, the run's zone and target groups are not there or are someone else's, and what a
 * resume or rollback reads would settle the run's changes from the wrong world. Refused (exit 4)
 * before any lock or read, naming both accounts.
 */
export async function sameAccount(
  runId: string,
  runbook: Runbook,
  aws: AwsOptions,
  started: CallerIdentity | undefined,
  signal?: AbortSignal,
): Promise<CallerIdentity | null> {
  const identity = await liveIdentity(runbook, aws, signal)
  if (started && identity && started.account !== identity.account)
    throw new RefusedError(
      `run ${runId} was started in AWS account ${started.account} (as ${started.arn}), but these credentials are for account ${identity.account} (${identity.arn}). ` +
        `Nothing was changed; use credentials for account ${started.account} (--profile or AWS_PROFILE)`,
    )
  return identity
}

/** Who the calls act as, the first line of what a live run and a live plan read. */
export function callerLine(identity: CallerIdentity | null): string[] {
  return identity ? [`calls as ${identity.arn} (account ${identity.account})`] : []
}

/**
 * Where the AWS calls go when it is not AWS's own endpoints: --endpoint-url, or the SDK's
 * AWS_ENDPOINT_URL and per-service AWS_ENDPOINT_URL_* variables, which the SDK honours by itself.
 * The confirmation says so: a run pointed somewhere unusual (a test emulator, a proxy) by a
 * variable left in a shell must not look like a run on the real account.
 */
export function endpointOverride(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  if (flag) return `the endpoint ${flag} (--endpoint-url)`
  const set = Object.entries(env).filter(([k, v]) => endpointVariable.test(k) && v)
  if (set.length === 0 || env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS === 'true') return null
  const urls = [...new Set(set.map(([, v]) => v!))]
  const names = set.map(([k]) => k).sort((a, b) => a.length - b.length)
  const from = names.length === 1 ? names[0] : `${names[0]} and ${names.length - 1} more AWS_ENDPOINT_URL_* variables`
  return `${urls.length === 1 ? 'the endpoint' : 'the endpoints'} ${urls.join(', ')} (${from}), not AWS's own`
}
