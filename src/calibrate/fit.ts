import {FailedError} from '../errors.js'
import type {PoolPeriod} from '../ports/pool-readings.js'
import {Random} from '../sim/random.js'

/**
 * How a figure was come by, from surest to least sure: `given` is a setting the operator wrote
 * down (a mapping file) where it could not be read back from the load balancer.
 */
export type Provenance = 'read' | 'given' | 'measured' | 'fitted' | 'bound' | 'assumed'

/** A figure of the fit, with where it came from and how sure it is: `low`..`high` is its 90% interval where it has one. */
export interface Estimate {
  value: number
  low?: number
  high?: number
  how: Provenance
  /** In words, for the scenario's comment: where it came from and what it rests on. */
  source: string
}

/** Per-server capacity (rps) from the periods, and the points it was fitted on. */
export interface CapacityFit {
  capacity: Estimate
  /** Which evidence gave it: the plateau of served against offered, the knee of latency, or neither (a lower bound). */
  method: 'plateau' | 'latency-knee' | 'lower-bound'
  /** Periods used (with servers in rotation and requests). */
  periods: number
  /** Periods past the estimated capacity: how much overload the window showed. */
  pastKnee: number
}

const bootstrapRounds = 200

interface Point {
  /** Requests per server per second offered. */
  offered: number
  /** Requests per server per second answered without error. */
  served: number
  latency: number | null
  errorRate: number
}

function pointsOf(periods: PoolPeriod[], periodSeconds: number): Point[] {
  return periods.flatMap((p): Point[] => {
    // Counted per server: exact, whatever went in or out of rotation around the period.
    if (p.inRotation !== undefined) {
      const {requests, served, serverSeconds} = p.inRotation
      if (requests <= 0 || serverSeconds <= 0) return []
      return [{offered: requests / serverSeconds, served: served / serverSeconds, latency: p.latency, errorRate: Math.max(0, requests - served) / requests}]
    }
    if (p.healthy === null || p.healthy < 1 || p.requests <= 0 || p.rotationChanged === true) return []
    return [
      {
        offered: p.requests / periodSeconds / p.healthy,
        served: (p.requests - p.errors) / periodSeconds / p.healthy,
        latency: p.latency,
        errorRate: p.errors / p.requests,
      },
    ]
  })
}

const quantile = (sorted: number[], q: number): number => {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, (sorted.length - 1) * q))
  const lo = Math.floor(i)
  return sorted[lo] + (sorted[Math.ceil(i)] - sorted[lo]) * (i - lo)
}

const median = (values: number[]): number =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  )

/**
 * The capacity c that best explains served = min(offered, c) in least squares: past its capacity a
 * server answers about what it can and the rest fails or times out. Identifiable only where some
 * periods were offered clearly more than they served; null otherwise.
 */
function plateau(points: Point[]): number | null {
  const over = points.filter((p) => p.offered > p.served * 1.02 && p.errorRate > 0.01)
  if (over.length < Math.max(3, points.length * 0.01)) return null
  const candidates = [...new Set(points.map((p) => p.served))].sort((a, b) => a - b)
  let best = NaN
  let bestCost = Infinity
  // The cost is piecewise quadratic in c; its minimum lies on a served value or between two: scanning the
  // served values at a fine step of the range finds it to well within the noise.
  const lo = quantile(candidates, 0.05)
  const hi = candidates[candidates.length - 1]
  const steps = 400
  for (let k = 0; k <= steps; k++) {
    const c = lo + ((hi - lo) * k) / steps
    let cost = 0
    for (const p of points) {
      const d = p.served - Math.min(p.offered, c)
      cost += d * d
    }
    if (cost < bestCost) {
      bestCost = cost
      best = c
    }
  }
  return Number.isFinite(best) ? best : null
}

/**
 * Where latency leaves its floor: the hinge c of latency = a + b·max(0, offered − c), fitted in
 * least squares over candidate hinges at the offered load's quantiles. Accepted only where the
 * hinge explains much more than a flat line (a third less squared error) and rises (b > 0).
 */
function latencyKnee(points: Point[]): number | null {
  const usable = points.filter((p) => p.latency !== null)
  if (usable.length < 20) return null
  const xs = usable.map((p) => p.offered)
  const ys = usable.map((p) => p.latency!)
  const n = xs.length
  const meanY = ys.reduce((a, b) => a + b, 0) / n
  const flat = ys.reduce((s, y) => s + (y - meanY) ** 2, 0)
  const sorted = [...xs].sort((a, b) => a - b)
  let best: {c: number; sse: number} | null = null
  for (let k = 10; k <= 97; k++) {
    const c = quantile(sorted, k / 100)
    // Least squares of y on [1, h] with h = max(0, x − c): two normal equations.
    let sh = 0
    let shh = 0
    let sy = 0
    let shy = 0
    for (let i = 0; i < n; i++) {
      const h = Math.max(0, xs[i] - c)
      sh += h
      shh += h * h
      sy += ys[i]
      shy += h * ys[i]
    }
    const det = n * shh - sh * sh
    if (det <= 1e-12) continue
    const b = (n * shy - sh * sy) / det
    const a = (sy - b * sh) / n
    if (b <= 0) continue
    let sse = 0
    for (let i = 0; i < n; i++) sse += (ys[i] - a - b * Math.max(0, xs[i] - c)) ** 2
    if (!best || sse < best.sse) best = {c, sse}
  }
  if (!best || best.sse > flat * (2 / 3)) return null
  return best.c
}

/**
 * Per-server capacity from a window of a pool's metrics: the plateau of served against offered
 * where the window overloaded the pool, else the knee where latency leaves its floor, else a lower
 * bound (the most a server was seen to serve without trouble). The interval is a bootstrap over
 * the periods (200 resamples, seeded, so the same metrics give the same figures).
 */
export function fitCapacity(periods: PoolPeriod[], periodSeconds: number, seed = 1): CapacityFit {
  const points = pointsOf(periods, periodSeconds)
  if (points.length === 0) throw new FailedError('no period with requests and servers in rotation: nothing to fit a capacity on')
  const served = points.map((p) => p.served).sort((a, b) => a - b)
  const methods: Array<{method: CapacityFit['method']; fit: (pts: Point[]) => number | null}> = [
    {method: 'plateau', fit: plateau},
    {method: 'latency-knee', fit: latencyKnee},
  ]
  for (const {method, fit} of methods) {
    const value = fit(points)
    if (value === null) continue
    const random = new Random(seed)
    const draws: number[] = []
    for (let r = 0; r < bootstrapRounds; r++) {
      const sample = points.map(() => points[random.below(points.length)])
      const v = fit(sample)
      if (v !== null) draws.push(v)
    }
    draws.sort((a, b) => a - b)
    const pastKnee = points.filter((p) => p.offered > value).length
    const source =
      method === 'plateau'
        ? `the plateau of requests served per server against offered, over the ${pastKnee} of ${points.length} periods offered past it`
        : `the knee where mean latency leaves its floor, over ${points.length} periods (${pastKnee} past it); the window never overloaded the pool, so this is where queueing starts, at or below the true capacity`
    return {
      capacity: {value, low: quantile(draws, 0.05), high: quantile(draws, 0.95), how: 'fitted', source},
      method,
      periods: points.length,
      pastKnee,
    }
  }
  const bound = quantile(served, 0.99)
  return {
    capacity: {
      value: bound,
      low: bound,
      how: 'bound',
      source: `neither overload nor a latency knee in ${points.length} periods: at least the ${round(bound)} rps a server served (99th percentile); the true capacity may be well above`,
    },
    method: 'lower-bound',
    periods: points.length,
    pastKnee: 0,
  }
}

const round = (v: number, places = 1): number => Math.round(v * 10 ** places) / 10 ** places

/** Demand over the window: its mean, peak and a curve of `points` points (each the mean of its stretch), in rps. */
export function fitDemand(periods: PoolPeriod[], periodSeconds: number, points = 48): {mean: Estimate; peak: Estimate; curve: Array<[number, number]>} {
  if (periods.length === 0) throw new FailedError('no period with requests: nothing to fit demand on')
  const sorted = [...periods].sort((a, b) => a.at - b.at)
  const rps = sorted.map((p) => p.requests / periodSeconds)
  const start = sorted[0].at
  const span = sorted[sorted.length - 1].at + periodSeconds - start
  const stretch = span / points
  const curve: Array<[number, number]> = []
  for (let k = 0; k < points; k++) {
    const inside = sorted.map((p, i) => ({t: p.at - start, v: rps[i]})).filter((p) => p.t >= k * stretch && p.t < (k + 1) * stretch)
    if (inside.length === 0) continue
    curve.push([Math.round(k * stretch), round(inside.reduce((s, p) => s + p.v, 0) / inside.length)])
  }
  const mean = rps.reduce((a, b) => a + b, 0) / rps.length
  const peak = Math.max(...rps)
  return {
    mean: {value: round(mean), how: 'measured', source: `mean of ${periods.length} periods of ${periodSeconds} s`},
    peak: {value: round(peak), how: 'measured', source: `the busiest period of ${periodSeconds} s`},
    curve,
  }
}

/**
 * The servers' own service time: the median latency of the quarter of periods in which each server
 * was offered least. Quietest per server, not by the pool's requests: with demand steady and a
 * cascade in the window, the periods with fewest requests are the ones the pool was failing in.
 */
export function fitServiceTime(periods: PoolPeriod[], periodSeconds: number): Estimate | null {
  const points = pointsOf(periods, periodSeconds)
    .filter((p) => p.latency !== null)
    .sort((a, b) => a.offered - b.offered)
  const quiet = points.slice(0, Math.max(1, Math.floor(points.length / 4)))
  if (quiet.length === 0) return null
  return {
    value: round(median(quiet.map((p) => p.latency!)), 3),
    how: 'measured',
    source: `median response time over the quarter of the window each server was offered least (${quiet.length} periods)`,
  }
}

/**
 * Seconds of work a server queues before it turns requests away, from the periods offered well
 * past its capacity: a saturated server's queue fills until it answers each request a full queue
 * late, so the longest mean latency of those periods, less the service time, is the queue's
 * depth. The longest, not a quantile: the queue fills over the first of those periods, and a load
 * balancer's mean latency (HAProxy's over its last 1,024 answers) lags it as it fills. On the
 * closed loop's calibration run the 90th percentile read 1.94 s of a true 3 s. Null where fewer
 * than three periods were that far past capacity: the window does not show the queue.
 */
export function fitQueue(periods: PoolPeriod[], periodSeconds: number, capacity: number, serviceTime: number): Estimate | null {
  const past = pointsOf(periods, periodSeconds).filter((p) => p.offered > capacity * 1.1 && p.latency !== null)
  if (past.length < 3) return null
  const depth = Math.max(...past.map((p) => p.latency!)) - serviceTime
  if (!(depth > 0)) return null
  return {
    value: round(depth, 2),
    how: 'measured',
    source: `the longest mean response time of the ${past.length} periods offered over 110% of capacity, less the service time: a saturated server answers what it queued, a full queue late (a lower bound while the queue was still filling)`,
  }
}
