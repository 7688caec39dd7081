import {z} from 'zod'
import type {TargetsData} from '../runbook/schema.js'
import type {MetricsPort, WeightMap} from '../ports/control-plane.js'
import {duration} from '../runbook/units.js'
import {poolShares} from './room.js'

// Weights set are not weights served: a weighted DNS change reaches clients over the TTL, an ALB
// applies a change when it has, a shim may hold a HAProxy map change back. A gate that bakes
// before the split reached the data plane judges the old split (Argo Rollouts users lost traffic
// that way). So after each change a ramp reads the share each pool serves, and the bake starts
// once it is within a tolerance of the share set.

/** How close the served share must come, in points, and how long the change may take to get there. */
export interface SplitRule {
  tolerance: number
  deadline: number
}

export const defaultSplit: SplitRule = {tolerance: 5, deadline: 300}

export const splitSchema = z
  .union([
    z
      .strictObject({
        tolerance: z.number().gt(0).max(50).optional().describe(`Points the served share may be off the share set (default ${defaultSplit.tolerance}).`),
        deadline: duration.optional().describe(`Seconds a change may take to be served before the ramp holds (default ${defaultSplit.deadline}).`),
      })
      .describe(
        "After each change, the bake starts once the pools' request counts show the split set, within the tolerance (where the metrics count each pool).",
      ),
    z
      .literal('off')
      .describe('Each bake starts at the change, unmeasured: for counts that lag minutes behind the data plane, with a bake long enough to cover it.'),
  ])
  .describe("Whether each change's split is seen served before its bake, and how closely.")

/**
 * Why the runbook's metrics cannot show the split between `pools`, or null when they count each
 * pool's requests alone. Decided from the runbook, not from the source at hand, so that a
 * rehearsal (whose simulator counts every pool) waits exactly where a live run can.
 */
export function splitUnseen(targets: TargetsData, pools: string[]): string | null {
  const m = targets.metrics
  if (!m) return 'the runbook names no metrics'
  const unseen =
    m.source === 'cloudwatch'
      ? pools.filter((p) => targets.targetGroups?.[p] === undefined)
      : m.source === 'haproxy'
        ? pools.filter((p) => targets.haproxy?.backends[p] === undefined)
        : m.queries?.['request-rate']?.includes('$pool')
          ? []
          : pools
  if (unseen.length === 0) return null
  const how =
    m.source === 'cloudwatch'
      ? 'no target group in targets.targetGroups to count its requests by'
      : m.source === 'haproxy'
        ? 'no backend in targets.haproxy.backends'
        : 'the Prometheus request-rate query has no $pool to scope it by'
  return `${unseen.join(', ')}: ${how}`
}

/** What a change reached: the share set and served of the pool gaining traffic, and how long after the change. */
export interface SplitSeen {
  pool: string
  set: number
  served: number
  totalRps: number
  seconds: number
}

const round = (n: number) => Math.round(n * 10) / 10
const pct = (n: number) => `${round(n)}%`

export const seenText = (s: SplitSeen): string =>
  `${s.pool} served ${pct(s.served)} of ${Math.round(s.totalRps).toLocaleString('en-US')} rps against ${pct(s.set)} set, ${Math.round(s.seconds)} s after the change`

/**
 * The served share of `pool` among `pools` over the last `window` s: each pool's request rate
 * over their sum. A pool with no requests in the window counts 0 (it has been moved off); null when
 * none had any.
 */
export async function readServed(
  metrics: MetricsPort,
  pool: string,
  pools: string[],
  window: number,
  signal?: AbortSignal,
): Promise<{served: number; totalRps: number} | null> {
  const rates = await Promise.all(pools.map((p) => metrics.read('request-rate', window, p, signal)))
  const total = rates.reduce((sum, r) => sum + (r.value ?? 0), 0)
  if (total <= 0) return null
  return {served: ((rates[pools.indexOf(pool)].value ?? 0) / total) * 100, totalRps: total}
}

/** How a ramp step meets the split: measured among its pools, or not (with why, for the plan). */
export type SplitPlan = {kind: 'measure'; rule: SplitRule; poolOf: Record<string, string>; pools: string[]} | {kind: 'unseen'; why: string} | {kind: 'off'}

/** A ramp's split plan from its runbook: each key's pool, and whether the metrics count them. */
export function planSplit(targets: TargetsData, poolOf: Record<string, string>, rule: Partial<SplitRule> | 'off' | undefined): SplitPlan {
  if (rule === 'off') return {kind: 'off'}
  const pools = [...new Set(Object.values(poolOf))].sort()
  const why = splitUnseen(targets, pools)
  if (why !== null) return {kind: 'unseen', why}
  return {kind: 'measure', rule: {...defaultSplit, ...rule}, poolOf, pools}
}

/** The plan's line for it. */
export function splitPlanText(plan: SplitPlan, ttl: number | undefined): string {
  if (plan.kind === 'off') return `split: off, so each bake starts at the change, unmeasured${ttl ? `, and lasts at least the TTL of ${ttl} s` : ''}`
  if (plan.kind === 'unseen')
    return `the metrics cannot show the split served (${plan.why}), so each bake starts at the change${ttl ? ` and lasts at least the TTL of ${ttl} s` : ''}`
  return `after each change the bake starts once ${plan.pools.join(' and ')}'s requests show the split within ±${plan.rule.tolerance} points of it (and at least half the step), waiting up to ${plan.rule.deadline} s`
}

const noneYet = 'no requests counted yet'

export interface SplitContext {
  metrics: () => MetricsPort
  now: () => number
  signal: AbortSignal
  hold(seconds: number, where: string): Promise<'done' | 'promoted' | 'interrupted'>
}

export type SplitOutcome =
  {kind: 'seen'; seen: SplitSeen} | {kind: 'late'; why: string} | {kind: 'interrupted'} | {kind: 'promoted'; why: string} | {kind: 'empty'; why: string}

/**
 * Waits until the share `key`'s pool serves is within the tolerance of what `weights` set, reading
 * each pool's requests over the last `window` s at once and then every `window` s. Late past the deadline: the
 * change did not reach the data plane (a held-back config, a name server that did not answer),
 * and nothing judged on it would mean anything.
 */
export async function waitForSplit(
  plan: Extract<SplitPlan, {kind: 'measure'}>,
  before: WeightMap,
  weights: WeightMap,
  key: string,
  ctx: SplitContext,
  window: number,
): Promise<SplitOutcome> {
  const pool = plan.poolOf[key] ?? key
  const shareOf = (w: WeightMap) => (poolShares(w, (k) => plan.poolOf[k] ?? k).get(pool) ?? 0) * 100
  const set = shareOf(weights)
  // A small step is seen served once at least half of it is: 0.1% served of a 1% step is not the step.
  const tolerance = Math.min(plan.rule.tolerance, Math.abs(set - shareOf(before)) / 2)
  const started = ctx.now()
  let last = noneYet
  for (;;) {
    // Read at once, then every window: a source that averages the window just gone (the
    // simulator, CloudWatch) shows the old split at first, never within half the step of the new
    // one; one that samples from now (HAProxy's counters, on a first read) shows the change itself.
    const readAt = ctx.now()
    const served = await readServed(ctx.metrics(), pool, plan.pools, window, ctx.signal)
    const seconds = ctx.now() - started
    // Not one request counted on any pool of the split: there is nothing to see the split in
    // (no traffic, or a source that has counted none yet), and nothing judged on it either: a
    // gate reads no data as inconclusive. The bake goes on, saying so, rather than wait for traffic.
    if (served === null && last === noneYet)
      return {kind: 'empty', why: `no request counted on ${plan.pools.join(' or ')} over the last ${window} s, so the split served cannot be seen`}
    if (served !== null) {
      const seen: SplitSeen = {pool, set, served: served.served, totalRps: served.totalRps, seconds}
      if (Math.abs(served.served - set) <= tolerance) return {kind: 'seen', seen}
      last = seenText(seen)
    }
    if (seconds >= plan.rule.deadline)
      return {kind: 'late', why: `the split set did not reach the data plane within ${plan.rule.deadline} s: ${last} (±${round(tolerance)} points)`}
    // A window from the last read's start, not its end: a read that waited out its window (HAProxy's
    // counters, for a pool with no sample a window old) already took that much of it, and the next
    // then finds the samples it took a window before, rather than waiting again. At least a second,
    // in which a pause or a promote is taken up.
    const waited = await ctx.hold(Math.max(Math.min(1, window), window - (ctx.now() - readAt)), `waiting for ${pool}'s share to reach ${pct(set)}`)
    if (waited === 'interrupted') return {kind: 'interrupted'}
    if (waited === 'promoted') return {kind: 'promoted', why: `promoted before the split was seen served (${last})`}
  }
}
