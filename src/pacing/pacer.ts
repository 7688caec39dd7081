import type {ControlPlane, MetricsPort} from '../ports/control-plane.js'
import {atOnce, largestShare, roomOf, roomText, rps, stepWork, usable, type MoveCost, type PoolRoom} from './room.js'
import type {PaceRule} from './rule.js'

const pct = (share: number) => `${Math.round(share * 10) / 10}%`

// How `schedule: auto` picks each next share, live and in rehearsal alike (the simulator's ports
// answer the same reads). With a stated capacity: the largest share the receiving pool can take
// now. Without: a probe that grows its step while the pool stays in its band, as TCP does.

/** What the pool can take now, and the demand it is measured against. */
export interface PaceReading {
  room: PoolRoom
  /** The demand a share is a share of, rps, and how it was read. */
  demandRps: number
  demandFrom?: string
}

/**
 * Reads the receiving pool's room (targets in rotation, each at its warm-up) and the demand over
 * `window` seconds; a sentence instead when one of them cannot be read (never guessed). Once the
 * pool carries a share, the demand is what it receives scaled to the whole: the total the load
 * balancer counts also holds the retries of clients turned away elsewhere (a maintenance page's
 * 503s), which end once they are served, so it overstates what a share of it will bring.
 */
export async function readRoom(
  rule: PaceRule & {perTarget: number},
  control: ControlPlane,
  window: number,
  share: number,
  signal?: AbortSignal,
): Promise<PaceReading | string> {
  const port = control.pools.get(rule.pool)
  if (!port) return `the runbook has no target group or backend for ${rule.pool} to count`
  if (!control.metrics) return 'the runbook has no metrics to read demand from'
  const metrics = control.metrics
  const [targets, total, pool] = await Promise.all([
    port.targets(signal),
    metrics.read('request-rate', window, undefined, signal),
    share >= 1 ? metrics.read('request-rate', window, rule.pool, signal) : Promise.resolve(null),
  ])
  const warmths = targets.filter((t) => t.health === 'healthy').map((t) => t.warmth ?? 1)
  const room = roomOf(rule.pool, warmths, rule.perTarget)
  if (pool?.value != null && pool.value > 0) {
    const scaled = pool.value / (share / 100)
    if (total.value === null || scaled < total.value)
      return {room, demandRps: scaled, demandFrom: `${rule.pool}'s ${rps(pool.value)} at ${pct(share)}, scaled to the whole`}
  }
  if (total.value === null) return `no request-rate data over the last ${window} s to pace by (missing data is never room)`
  return {room, demandRps: total.value}
}

export type PaceDecision = {kind: 'step'; to: number; why: string} | {kind: 'wait'; why: string}

/**
 * The next share (%) from `from` (%) to at most `end`: the largest the pool can take with the
 * headroom kept, at most maxStep on, and at least minStep on (or the end, when nearer); a wait,
 * with the numbers, when even that is more than the pool can take now.
 */
export function nextShare(rule: PaceRule, from: number, end: number, reading: PaceReading, ttl = 0): PaceDecision {
  const {room, demandRps} = reading
  const cost = moveCost(rule, ttl)
  const headroom = rule.headroom / 100
  const largest = largestShare(from / 100, demandRps, room, headroom, cost) * 100
  const minTo = Math.min(end, from + rule.minStep)
  const may = `${rps(usable(room, headroom))} with ${rule.headroom}% headroom`
  const at = `${rps(demandRps)} of demand${reading.demandFrom ? ` (${reading.demandFrom})` : ''}`
  if (largest + 1e-9 < minTo) {
    const work = stepWork(from / 100, minTo / 100, demandRps, cost)
    return {
      kind: 'wait',
      why: `${roomText(room)}; ${pct(minTo)} of ${at} would ask it for ${rps(work)}, more than the ${may}`,
    }
  }
  // Whole percentages, as weights are; never below the smallest step the rule allows.
  let to = Math.min(end, from + rule.maxStep, Math.floor(largest))
  if (to < minTo) to = minTo
  // A last step smaller than minStep is taken with the one before when the pool has room for both.
  if (end - to < rule.minStep && largest >= end) to = end
  return {
    kind: 'step',
    to,
    why: `${roomText(room)}; ${pct(to)} of ${at} asks it for ${rps(stepWork(from / 100, to / 100, demandRps, cost))} of the ${may}${to < from + rule.maxStep && to < end ? ` (room for ${pct(largest)})` : ''}`,
  }
}

/**
 * What moving traffic costs under the rule: its handshakes all in one second, or behind a DNS TTL,
 * for clients that ask every clientInterval s, the share of them whose answers expire in it.
 */
export function moveCost(rule: Pick<PaceRule, 'handshakeCost' | 'clientInterval'>, ttl: number): MoveCost {
  const spread = rule.clientInterval === undefined || ttl <= 0 ? 1 : Math.min(1, rule.clientInterval / ttl)
  return {...atOnce, handshakeCost: rule.handshakeCost, spread}
}

/** The receiving pool's latency and errors over a window: the band a probe keeps to. */
export interface Band {
  latency: number | null
  errors: number | null
}

/**
 * The pool's band now. A source without latency percentiles (HAProxy's counters) bands on errors
 * alone: its read of latency fails, and that is no band, not a failed step.
 */
export async function readBand(metrics: MetricsPort, pool: string, window: number, signal?: AbortSignal): Promise<Band> {
  const [latency, errors] = await Promise.all([
    metrics.read('latency-p99', window, pool, signal).catch(() => ({value: null})),
    metrics.read('error-rate', window, pool, signal),
  ])
  return {latency: latency.value, errors: errors.value}
}

/** Why the pool left its band between `before` and `after`, or null when it stayed in it (or nothing was there to compare). */
export function bandRise(rule: PaceRule, before: Band, after: Band): string | null {
  if (before.latency !== null && after.latency !== null && before.latency > 0 && after.latency > before.latency * (1 + rule.latencyRise / 100))
    return `${rule.pool}'s p99 latency rose from ${Math.round(before.latency)} to ${Math.round(after.latency)} ms, more than ${rule.latencyRise}%`
  if (before.errors !== null && after.errors !== null && after.errors > before.errors + rule.errorRise)
    return `${rule.pool}'s error rate rose from ${before.errors.toFixed(2)}% to ${after.errors.toFixed(2)}%, more than ${rule.errorRise} points`
  return null
}

/**
 * A probe's step (points) as TCP's congestion window: it starts at minStep, doubles after a step the
 * pool took within its band, and halves after one it did not, within minStep and maxStep.
 */
export class ProbeStep {
  points: number
  constructor(private readonly rule: PaceRule) {
    this.points = rule.minStep
  }
  grow(): void {
    this.points = Math.min(this.rule.maxStep, this.points * 2)
  }
  halve(): void {
    this.points = Math.max(this.rule.minStep, this.points / 2)
  }
  /** The next share from `from` to at most `end`, whole, never less than a point on. */
  next(from: number, end: number): number {
    const to = Math.min(end, Math.round(from + this.points))
    return end - to < this.rule.minStep ? end : Math.max(to, Math.min(end, from + 1))
  }
}

/** What a paced ramp would do if it started now, from `share` (%): for the live plan. */
export async function firstStepNow(rule: PaceRule, control: ControlPlane, share: number, window: number, ttl: number, signal?: AbortSignal): Promise<string> {
  if (rule.perTarget === null) return `now: it would probe, a first step of ${rule.minStep} points to ${Math.min(rule.to, Math.round(share) + rule.minStep)}%`
  if (share >= rule.to - 0.5) return `now: ${rule.pool} already has ${Math.round(share)}%, the ramp's end; it changes nothing`
  const reading = await readRoom({...rule, perTarget: rule.perTarget}, control, window, share, signal)
  if (typeof reading === 'string') return `now: it would hold: ${reading}`
  const decision = nextShare(rule, Math.round(share), rule.to, reading, ttl)
  return decision.kind === 'step' ? `now: its first step would be to ${decision.to}%: ${decision.why}` : `now: it would wait for room: ${decision.why}`
}
