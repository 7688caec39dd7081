import type {WeightMap} from '../ports/control-plane.js'
import {describeWeights, shareOf as share} from '../actions/weights-ramp.js'

/**
 * A step back may add at most this share of what the receiving pool can serve in rotation. A pool
 * traffic left is cold (caches, connection pools, JIT), and a cold server serves less than its
 * stated capacity at first: a quarter leaves a pool at half its warm capacity two steps before it
 * is full, each judged by the gate before the next.
 */
export const wayBackStepShare = 0.25

/** What the receiving side can take, when the runbook states a capacity and the live pool can be counted. */
export interface ReceivingCapacity {
  pool: string
  healthy: number
  perTarget: number
  /** Requests per second now, over every pool. */
  demand: number
}

export interface WayBack {
  /** The weights of each step, the last being where the run found them. */
  steps: WeightMap[]
  /** Why these steps: the capacity sum, or that they are the weights the run passed. */
  why: string
  /** Set when the receiving pool cannot serve its final share at today's demand. */
  shortfall?: string
}

/** The one key whose weight rises on the way from `from` to `to`; null when none or several do. */
export function receivingKey(from: WeightMap, to: WeightMap): string | null {
  const rising = Object.keys(to).filter((k) => (to[k] ?? 0) > (from[k] ?? 0))
  return rising.length === 1 ? rising[0] : null
}

/**
 * The weights between `from` and `to` with `key` at `percent` of the traffic, the others sharing
 * the rest as they do at `to`, or as at `from` where `to` gives them none, in whole weights
 * summing to 100.
 */
export function weightsWith(key: string, percent: number, from: WeightMap, to: WeightMap): WeightMap {
  const others = Object.keys({...from, ...to})
    .filter((k) => k !== key)
    .sort()
  const basis = others.some((k) => (to[k] ?? 0) > 0) ? to : from
  const total = others.reduce((sum, k) => sum + (basis[k] ?? 0), 0)
  const weights: WeightMap = {[key]: Math.round(percent)}
  const rest = 100 - weights[key]
  let given = 0
  others.forEach((k, i) => {
    const w = i === others.length - 1 ? rest - given : Math.round(rest * (total > 0 ? (basis[k] ?? 0) / total : 1 / others.length))
    weights[k] = w
    given += w
  })
  return weights
}

/**
 * The way back from `from` (the weights the run left) to `to` (where it found them), step by step.
 * With the receiving pool's capacity: steps that each send it at most a quarter of what its healthy
 * targets serve, in shares of today's demand. Without: the weights the run passed on its way
 * (`passed`, oldest first), in reverse. A way back that needs no steps between is one step.
 */
export function wayBack(from: WeightMap, to: WeightMap, passed: WeightMap[], capacity: ReceivingCapacity | null): WayBack {
  const key = receivingKey(from, to)
  if (key === null) return {steps: [to], why: 'no one pool gains traffic on the way back, so there is no receiving side to pace'}
  const start = share(from, key)
  const end = share(to, key)
  if (capacity && capacity.demand > 0) {
    const serves = capacity.healthy * capacity.perTarget
    const stepPercent = Math.max(1, Math.floor(((wayBackStepShare * serves) / capacity.demand) * 100))
    const steps: WeightMap[] = []
    for (let p = start + stepPercent; p < end - 0.5; p += stepPercent) steps.push(weightsWith(key, p, from, to))
    steps.push(to)
    const rps = (n: number) => `${Math.round(n).toLocaleString('en-US')} rps`
    const why = `${capacity.pool} has ${capacity.healthy} healthy targets × ${rps(capacity.perTarget)} = ${rps(serves)} against ${rps(capacity.demand)} of demand: each step adds at most a quarter of that (${stepPercent} point${stepPercent === 1 ? '' : 's'})`
    const needs = (end / 100) * capacity.demand
    const shortfall =
      needs > serves ? `${capacity.pool} would get ${rps(needs)} at ${Math.round(end)}% of today's demand, more than its ${rps(serves)} in rotation` : undefined
    return {steps: distinct(steps, key), why, ...(shortfall ? {shortfall} : {})}
  }
  // The ramp's own steps, in reverse: each was judged on the way there.
  const between = passed.filter((w) => {
    const s = share(w, key)
    return s > start + 0.5 && s < end - 0.5
  })
  const steps = distinct(
    [...between, to].sort((a, b) => share(a, key) - share(b, key)),
    key,
  )
  return {
    steps,
    why:
      steps.length > 1
        ? `back through the weights the run passed (no capacity of ${key} stated in targets.capacityPerTarget to size steps by)`
        : `the run passed no weights between ${describeWeights(from)} and ${describeWeights(to)}`,
  }
}

/**
 * Steps that each move the receiving pool's share on, in order: the same share twice (a run that
 * was resumed passes its weights again, perhaps written with other keys) is one step, baked once.
 * The last step, where the run found the weights, is always kept whole.
 */
function distinct(steps: WeightMap[], key: string): WeightMap[] {
  const last = steps.at(-1)!
  const kept: WeightMap[] = []
  for (const w of steps.slice(0, -1)) {
    const previous = kept.at(-1)
    if (previous === undefined || share(w, key) > share(previous, key) + 0.5) kept.push(w)
  }
  while (kept.length > 0 && share(kept.at(-1)!, key) >= share(last, key) - 0.5) kept.pop()
  return [...kept, last]
}
