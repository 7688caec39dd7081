import {metricUnits} from '../ports/control-plane.js'
import type {GateData} from './schema.js'

/** A gate with every field filled in from the gate, the runbook's defaults and sluice's own. */
export interface Gate {
  metric: GateData['metric']
  threshold: number
  window: number
  interval: number
  failureLimit: number
  inconclusiveLimit: number
  successes: number
  pool?: string
  /** Requests a window must hold for its verdict to count. */
  minRequests?: number
  /** What a relative threshold is measured from: the window before the step's change, or a pool's same window. */
  baseline?: Baseline
  /** How a relative threshold is read (with baseline only). */
  compare?: 'points' | 'ratio'
  /** How verdicts are reached: each window against the threshold, or the bake's counts (src/judge/counts.ts). */
  judge: 'threshold' | 'counts'
  /** With judge counts: how sure a verdict must be, in %, over the bake's looks together. */
  confidence: number
  /** Failed verdicts in a row that fail the gate, beside failureLimit. */
  consecutiveFailures?: number
}

export type Baseline = 'before' | {pool: string}

/** `before the step`, `pool legacy` */
export function describeBaseline(baseline: Baseline): string {
  return baseline === 'before' ? 'before the step' : `pool ${baseline.pool}`
}

/** `error-rate ≤ 1% over 60 s (mailbox)`, `error-rate ≤ pool legacy + 2 points over 60 s (canary), 200+ requests` */
export function describeGate(gate: Gate): string {
  const unit = metricUnits[gate.metric]
  const op = gate.metric === 'healthy-targets' ? '≥' : '≤'
  const amount = `${gate.threshold}${unit === '%' ? '%' : ` ${unit}`}`
  const bound = !gate.baseline
    ? amount
    : gate.compare === 'ratio'
      ? `${gate.threshold} × ${describeBaseline(gate.baseline)}`
      : `${describeBaseline(gate.baseline)} + ${gate.threshold}${unit === '%' ? ` point${gate.threshold === 1 ? '' : 's'}` : ` ${unit}`}`
  const least = gate.minRequests === undefined ? '' : `, ${gate.minRequests}+ requests`
  if (gate.judge === 'counts') return `${gate.metric} ${op} ${bound}, ${gate.confidence}% sure on the bake's counts${gate.pool ? ` (${gate.pool})` : ''}`
  return `${gate.metric} ${op} ${bound} over ${gate.window} s${gate.pool ? ` (${gate.pool})` : ''}${least}`
}

export const gateDefaults = {window: 60, interval: 10, failureLimit: 1, inconclusiveLimit: 3, successes: 3, confidence: 99, judge: 'threshold' as const}

/** The looks a counts gate relative to before takes of the pool before the change: one each interval of its window. */
export const beforeLooks = (gate: Gate): number => Math.floor(gate.window / gate.interval)

/** The most looks a counts gate takes over a bake: its intervals, and inconclusiveLimit more. Its confidence is spent over all of them. */
export const countsLooks = (gate: Gate, bake: number): number => Math.ceil(Math.max(bake, gate.interval) / gate.interval) + gate.inconclusiveLimit
