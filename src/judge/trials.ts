import {judgeCounts, type Counts, type CountsQuestion} from './counts.js'
import {Random} from '../sim/random.js'
import {normalCdf} from './distributions.js'

/**
 * Simulated gates, to measure a judge's false failures and misses before it judges a real step:
 * a receiving pool and a baseline over a bake of `intervals` windows, each window's requests and
 * errors drawn (seeded) as a binomial, or more varied than one (each window's rate drawn from a
 * beta, as bursts and retries make it), and the same windows judged by each judge.
 */

/** One pool's windows: requests a window, its error rate, and how much more than a binomial the windows vary. */
export interface PoolModel {
  requests: number
  /** Error rate in %. */
  rate: number
  /**
   * Windows' rates drawn from a beta of this concentration around `rate` (smaller: more varied;
   * undefined: every window at `rate`, a plain binomial).
   */
  concentration?: number
  /** Windows (0-based) whose rate is this many times `rate`: a burst. */
  bursts?: Record<number, number>
}

export interface TrialCase {
  intervals: number
  receiving: PoolModel
  baseline: PoolModel
  /**
   * A baseline from before the change (relativeTo: before): this many windows, all read before
   * the bake and judged whole at every look. Without it, the baseline is a pool beside the
   * receiving one, a window a look.
   */
  baselineBefore?: number
}

export type JudgeOutcome = 'pass' | 'fail' | 'inconclusive'

/**
 * A judge over a whole bake: it sees the receiving pool's windows one at a time and ends at its
 * first pass or fail, or is inconclusive at the end. `before`: the baseline's windows were all read
 * before the bake (relativeTo: before), not one beside each of the pool's.
 */
export type Judge = (receiving: Counts[], baseline: Counts[], before: boolean) => JudgeOutcome

const baselineAt = (baseline: Counts[], k: number, before: boolean) => (before ? baseline : baseline.slice(0, k))

/** The counts judge looking after every window. */
export function countsJudge(question: Omit<CountsQuestion, 'looks'>): Judge {
  return (receiving, baseline, before) => {
    for (let k = 1; k <= receiving.length; k++) {
      const verdict = judgeCounts(receiving.slice(0, k), baselineAt(baseline, k, before), {...question, looks: receiving.length})
      if (verdict.outcome !== 'inconclusive') return verdict.outcome
    }
    return 'inconclusive'
  }
}

/**
 * Today's gate, relative to a baseline in points, as a user would set it to the same margin: a
 * window fails when its rate is above the baseline's by more than the threshold (failureLimit 1);
 * a window with fewer than `minRequests` is inconclusive, three of them fail the gate (missing
 * data is never a pass); otherwise it passes once the bake is over with its last three windows passed.
 */
export function thresholdJudge(thresholdPoints: number, minRequests = 100): Judge {
  return (receiving, baseline, before) => {
    // Before the change: one reading over the whole window, as the threshold gate reads it.
    const whole = before ? baseline.reduce((a, c) => ({requests: a.requests + c.requests, errors: a.errors + c.errors}), {requests: 0, errors: 0}) : null
    let inconclusive = 0
    for (let k = 0; k < receiving.length; k++) {
      const r = receiving[k]
      const b = whole ?? baseline[k]
      if (r.requests < minRequests || b.requests < minRequests) {
        if (++inconclusive >= 3) return 'fail'
        continue
      }
      if ((100 * r.errors) / r.requests > (100 * b.errors) / b.requests + thresholdPoints) return 'fail'
    }
    return 'pass'
  }
}

/**
 * A Mann–Whitney judge on the windows' error rates, as Kayenta's NetflixACAJudge compares a
 * canary's metric with its control's: at the end of the bake, it fails when the receiving pool's
 * windows are higher than the baseline's with one-sided p below `alpha` (normal approximation,
 * ties shared), and passes otherwise. It knows nothing of how many requests each window held.
 */
export function mannWhitneyJudge(alpha = 0.01): Judge {
  return (receiving, baseline) => {
    const rate = (c: Counts) => (c.requests > 0 ? c.errors / c.requests : 0)
    const xs = receiving.map(rate)
    const ys = baseline.map(rate)
    const all = [...xs.map((v) => ({v, x: true})), ...ys.map((v) => ({v, x: false}))].sort((a, b) => a.v - b.v)
    let rankSumX = 0
    let tieTerm = 0
    for (let i = 0; i < all.length;) {
      let j = i
      while (j < all.length && all[j].v === all[i].v) j++
      const rank = (i + 1 + j) / 2
      for (let k = i; k < j; k++) if (all[k].x) rankSumX += rank
      const t = j - i
      tieTerm += t ** 3 - t
      i = j
    }
    const n1 = xs.length
    const n2 = ys.length
    const u = rankSumX - (n1 * (n1 + 1)) / 2
    const n = n1 + n2
    const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))))
    if (sd === 0) return 'pass'
    const p = 1 - normalCdf((u - (n1 * n2) / 2 - 0.5) / sd)
    return p < alpha ? 'fail' : 'pass'
  }
}

/** How a judge fared over many simulated gates of one case, as shares in %. */
export interface TrialTally {
  pass: number
  fail: number
  inconclusive: number
}

/** Runs `gates` simulated gates of a case (seeded), each judged by every judge on the same windows. */
export function runTrials(c: TrialCase, judges: Record<string, Judge>, gates: number, seed: number): Record<string, TrialTally> {
  const random = new Random(seed)
  const counts = Object.fromEntries(Object.keys(judges).map((name) => [name, {pass: 0, fail: 0, inconclusive: 0}]))
  for (let g = 0; g < gates; g++) {
    const receiving = windows(c.receiving, c.intervals, random)
    const baseline = windows(c.baseline, c.baselineBefore ?? c.intervals, random)
    for (const [name, judge] of Object.entries(judges)) counts[name][judge(receiving, baseline, c.baselineBefore !== undefined)]++
  }
  return Object.fromEntries(
    Object.entries(counts).map(([name, t]) => [
      name,
      {pass: (100 * t.pass) / gates, fail: (100 * t.fail) / gates, inconclusive: (100 * t.inconclusive) / gates},
    ]),
  )
}

function windows(pool: PoolModel, intervals: number, random: Random): Counts[] {
  const out: Counts[] = []
  for (let k = 0; k < intervals; k++) {
    const mean = Math.min(1, (pool.rate / 100) * (pool.bursts?.[k] ?? 1))
    const p = pool.concentration === undefined ? mean : beta(random, mean * pool.concentration, (1 - mean) * pool.concentration)
    out.push({requests: pool.requests, errors: binomial(random, pool.requests, p)})
  }
  return out
}

/** A binomial draw: exact by trials when small, by Poisson when rare, by the normal otherwise. */
function binomial(random: Random, n: number, p: number): number {
  if (p <= 0 || n <= 0) return 0
  if (p >= 1) return n
  if (n <= 60) {
    let k = 0
    for (let i = 0; i < n; i++) if (random.next() < p) k++
    return k
  }
  if (n * p < 30) return Math.min(n, random.poisson(n * p))
  if (n * (1 - p) < 30) return Math.max(0, n - random.poisson(n * (1 - p)))
  return Math.min(n, Math.max(0, Math.round(n * p + Math.sqrt(n * p * (1 - p)) * random.normal())))
}

/** A beta draw, from two gammas: the simulator's spread is a gamma of mean 1 and shape 1 / cv². */
function beta(random: Random, a: number, b: number): number {
  if (a <= 0) return 0
  if (b <= 0) return 1
  const gamma = (shape: number) => random.spread(1 / Math.sqrt(shape)) * shape
  const x = gamma(a)
  return x / (x + gamma(b))
}
