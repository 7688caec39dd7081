import {normalCdf, normalQuantile, studentCdf, studentQuantile} from './distributions.js'

/** Requests and the errors among them, over one interval or many. */
export interface Counts {
  requests: number
  errors: number
}

/** What a counts gate asks, and how often it will look. */
export interface CountsQuestion {
  /** How much worse than the baseline's the receiving pool's error rate may be, in points (1 = one percentage point). */
  marginPoints: number
  /** How sure each verdict must be, over all the gate's looks together (0.99: at most 1% of verdicts wrong). */
  confidence: number
  /** The most looks the gate takes over its bake: the error rate is kept across all of them by spending it evenly (Bonferroni). */
  looks: number
}

export interface CountsVerdict {
  outcome: 'pass' | 'fail' | 'inconclusive'
  /** Error rates in %, with the requests they are of, over every interval so far. */
  receiving: {rate: number; requests: number}
  baseline: {rate: number; requests: number}
  /** The receiving pool's rate less the baseline's, in points (negative: better). */
  worseBy: number
  /**
   * How sure the data are of the verdict's side, in %: that the receiving pool is worse by more
   * than the margin (fail), or not (pass); for an inconclusive verdict, of whichever side they lean to.
   */
  sure: number
  /** The sureness a verdict needs at each look, in %: the confidence asked, spent over the looks. */
  needs: number
  /** How much more the receiving pool's windows vary than a binomial's would (1: not at all). */
  dispersion: number
  /** The same of the baseline's windows. */
  baselineDispersion: number
  /** Why no verdict could be reached yet, when that is not just too few requests. */
  why?: string
}

/** Intervals a verdict needs at the least: how much windows vary cannot be told from fewer. */
export const leastIntervals = 3

/**
 * The counts judge: is the receiving pool's error rate worse than the baseline's by more than a
 * margin? It fails when the data show that with the confidence asked, passes when they rule it out
 * with that confidence, and is otherwise inconclusive (the bake goes on).
 *
 * - Counts, not rates: a window's rate says nothing of how many requests it is of. Each pool's
 *   rate is taken over every interval since the bake began (the more requests, the surer), with
 *   one error and one success added to each (Agresti and Caffo), so that a pool with no errors
 *   still has a width, and a handful of requests never passes.
 * - Windows vary more than a binomial does (bursts, retries, a client that fails all its calls at
 *   once). The excess is measured per pool from its intervals (Pearson's χ² over k − 1, at least 1)
 *   and widens that pool's variance; the limits are Student's t with the Welch-Satterthwaite
 *   degrees of freedom, since the dispersion is estimated from a few intervals, not known.
 * - A baseline from before the change (relativeTo: before) is the intervals watched before it,
 *   the same throughout the bake; the degrees of freedom then take each side's own count.
 * - A gate looks again and again. The confidence asked is spent evenly over the bake's looks, so
 *   the chance of any wrong verdict over the whole bake stays within it.
 */
export function judgeCounts(receiving: Counts[], baseline: Counts[], question: CountsQuestion): CountsVerdict {
  const r = total(receiving)
  const b = total(baseline)
  const rate = (c: Counts) => (c.requests > 0 ? (100 * c.errors) / c.requests : 0)
  const base = {
    receiving: {rate: rate(r), requests: r.requests},
    baseline: {rate: rate(b), requests: b.requests},
    worseBy: rate(r) - rate(b),
  }
  const alpha = (1 - question.confidence) / Math.max(1, question.looks)
  const needs = 100 * (1 - alpha)
  // A baseline from before the change (relativeTo: before) is a fixed set of intervals; a baseline
  // pool's grows beside the receiving pool's, one interval a look.
  const kr = receiving.length
  const kb = baseline.length
  const intervals = Math.min(kr, kb)
  if (intervals < leastIntervals)
    return {
      ...base,
      outcome: 'inconclusive',
      sure: 0,
      needs,
      dispersion: 1,
      baselineDispersion: 1,
      why:
        kb < leastIntervals && kb < kr
          ? `${kb} interval${kb === 1 ? '' : 's'} of the baseline; how much the windows vary needs ${leastIntervals}`
          : `${intervals} interval${intervals === 1 ? '' : 's'} so far; how much the windows vary needs ${leastIntervals}`,
    }
  const pr = (r.errors + 1) / (r.requests + 2)
  const pb = (b.errors + 1) / (b.requests + 2)
  const phiB = dispersion(baseline)
  const phiOwn = dispersion(receiving)
  // Were the pool no worse, it would vary as the baseline does: the baseline's excess, as a
  // correlation within a window, carried over to the pool's window size. Only that counts
  // against failing it; its own excess (seven bad windows and three good) is evidence, not noise.
  const rho = (phiB - 1) / Math.max(1, b.requests / kb - 1)
  const phiNull = Math.max(1, 1 + (r.requests / kr - 1) * rho)
  const limits = (phiR: number) => {
    const vr = (phiR * pr * (1 - pr)) / (r.requests + 2)
    const vb = (phiB * pb * (1 - pb)) / (b.requests + 2)
    // Welch-Satterthwaite, each side's variance estimated from its own intervals.
    const df = kr === kb ? ((kr - 1) * (vr + vb) ** 2) / (vr ** 2 + vb ** 2) : (vr + vb) ** 2 / (vr ** 2 / (kr - 1) + vb ** 2 / (kb - 1))
    return {se: Math.sqrt(vr + vb), df, q: tQuantile(1 - alpha, df)}
  }
  const margin = question.marginPoints / 100
  const d = pr - pb
  // To fail: worse by more than the margin even allowing for the baseline's variation. To pass:
  // within it even allowing for the pool's own, whichever is more.
  const toFail = limits(phiNull)
  const toPass = limits(Math.max(phiOwn, phiNull))
  const outcome = d - toFail.q * toFail.se > margin ? 'fail' : d + toPass.q * toPass.se < margin ? 'pass' : 'inconclusive'
  const worse = studentCdf((d - margin) / toFail.se, toFail.df)
  const within = studentCdf((margin - d) / toPass.se, toPass.df)
  return {
    ...base,
    outcome,
    sure: 100 * (outcome === 'fail' ? worse : outcome === 'pass' ? within : Math.max(worse, within)),
    needs,
    dispersion: phiOwn,
    baselineDispersion: phiB,
  }
}

/** Student's t quantiles by the hundredth of a degree of freedom, rounded down (a little wider, never narrower): a gate asks the same few again and again. */
const quantiles = new Map<string, number>()
function tQuantile(p: number, df: number): number {
  const floor = Math.max(1, Math.floor(df * 100) / 100)
  const key = `${p}:${floor}`
  let q = quantiles.get(key)
  if (q === undefined) quantiles.set(key, (q = studentQuantile(p, floor)))
  return q
}

function total(intervals: Counts[]): Counts {
  let requests = 0
  let errors = 0
  for (const c of intervals) {
    requests += c.requests
    errors += c.errors
  }
  return {requests, errors}
}

/** Pearson's χ² of the intervals about the pool's own rate, over k − 1: 1 for a binomial, more for bursts. At least 1. */
export function dispersion(intervals: Counts[]): number {
  const used = intervals.filter((c) => c.requests > 0)
  if (used.length < 2) return 1
  const all = total(used)
  // Half an error and half a success added: a pool with no errors is not infinitely steady.
  const p = (all.errors + 0.5) / (all.requests + 1)
  let chi2 = 0
  for (const c of used) chi2 += (c.errors - c.requests * p) ** 2 / (c.requests * p * (1 - p))
  return Math.max(1, chi2 / (used.length - 1))
}

/**
 * Requests the receiving pool needs over the whole bake for the judge to tell its margin apart:
 * a regression of twice the margin fails, and pools that err alike pass, each at least `power`
 * of the time at the last look, assuming windows no more varied than a binomial. `share` is the
 * receiving pool's share of all requests (the baseline has the rest); `baselineRatio`, for a
 * baseline from before the change, its requests for each of the bake's, over `baselineIntervals`.
 */
export function requestsNeeded(
  o: {baselineRate: number; marginPoints: number; power?: number} & ({share: number} | {baselineRatio: number; baselineIntervals: number}) & CountsQuestion,
): number {
  const power = o.power ?? 0.95
  const p0 = o.baselineRate / 100
  const m = o.marginPoints / 100
  const alpha = (1 - o.confidence) / Math.max(1, o.looks)
  // A baseline from before has its own few intervals: its variance is known on no more degrees of freedom than they give.
  const df = Math.max(1, ('baselineIntervals' in o ? Math.min(o.looks, o.baselineIntervals) : o.looks) - 1)
  const q = tQuantile(1 - alpha, df) + normalQuantile(power)
  const ratio = 'share' in o ? (1 - o.share) / o.share : o.baselineRatio
  // Even binomial windows are judged as varying at least as a binomial does, and more by chance.
  const f = dispersionAllowance(df)
  const se = (n: number, p1: number) => Math.sqrt(f * ((p1 * (1 - p1)) / n + (p0 * (1 - p0)) / (n * ratio)))
  // A regression of twice the margin is a margin beyond the line; pools alike are a margin inside it.
  const enough = (n: number) => m >= q * se(n, Math.min(1, p0 + 2 * m)) && m >= q * se(n, p0)
  let hi = 1
  while (!enough(hi) && hi < 1e12) hi *= 2
  let lo = hi / 2
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (enough(mid)) hi = mid
    else lo = mid
  }
  return hi
}

/**
 * What the judge's dispersion comes to on average for windows that vary exactly as a binomial:
 * E[max(1, χ²ν/ν)] = 1 + P(χ²ν₊₂ > ν) − P(χ²ν > ν), each tail by Wilson and Hilferty's normal
 * approximation. About 1.19 at 9 degrees of freedom: the plan asks for that much more.
 */
export function dispersionAllowance(df: number): number {
  const tail = (k: number, x: number) => 1 - normalCdf(((x / k) ** (1 / 3) - (1 - 2 / (9 * k))) / Math.sqrt(2 / (9 * k)))
  return 1 + tail(df + 2, df) - tail(df, df)
}

const grouped = new Intl.NumberFormat('en-US')
const percent = (rate: number) => `${rate < 0.1 && rate > 0 ? rate.toPrecision(2) : rate.toFixed(1)}%`
const points = (n: number) => `${Math.abs(n) < 0.1 && n !== 0 ? Math.abs(n).toPrecision(2) : Math.abs(n).toFixed(1)} point${Math.abs(n) === 1 ? '' : 's'}`

/**
 * A verdict in words with its numbers, as the terminal, the journal and the plan say it:
 * `green 2.1% of 4,210 against stable 0.4% of 39,900: worse by 1.7 points, margin 1, 99.8% sure → fail`.
 */
export function countsSentence(v: CountsVerdict, names: {receiving: string; baseline: string}, marginPoints: number): string {
  const side = v.worseBy >= 0 ? `worse by ${points(v.worseBy)}` : `better by ${points(v.worseBy)}`
  const varied =
    v.dispersion > 1.5 || v.baselineDispersion > 1.5 ? `; windows vary ${v.dispersion.toFixed(1)}× and ${v.baselineDispersion.toFixed(1)}× a binomial` : ''
  const share = (p: number) => (p >= 99.95 && p < 100 ? '>99.9' : p.toFixed(1))
  const sure = v.why ? v.why : `${share(v.sure)}% sure${v.outcome === 'inconclusive' ? ` of neither (needs ${share(v.needs)}%)` : ''}`
  return (
    `${names.receiving} ${percent(v.receiving.rate)} of ${grouped.format(v.receiving.requests)} against ${names.baseline} ${percent(v.baseline.rate)} of ${grouped.format(v.baseline.requests)}: ` +
    `${side}, margin ${marginPoints}${varied}, ${sure} → ${v.outcome}`
  )
}
