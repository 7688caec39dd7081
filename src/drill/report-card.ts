/**
 * The simulator's report card: the same four figures read the same way from two timelines, the
 * drill's real one and the simulator's prediction, so a difference between them is a difference
 * between the runs and not between two ways of counting.
 */

/** A timeline in the scenario's seconds and requests per second, one point a scenario second (or tick). */
export interface Timeline {
  t: ArrayLike<number>
  demand: ArrayLike<number>
  served: ArrayLike<number>
  /** Servers in rotation; NaN where it was not read. */
  inRotation: ArrayLike<number>
}

export interface ReportCard {
  /** Mean completed requests per second from the fault to the fix. */
  servedDuringFault: number | null
  /** User requests never completed, in % of demand over the whole run. */
  lostPercent: number
  /** Seconds from the fix until full service that holds to the end; null if not back at the end. */
  secondsToFullServiceAfterFix: number | null
  /** Null when no count of servers in rotation was read. */
  fewestInRotation: number | null
  /**
   * More servers left rotation than the fault broke and the runbook took out on purpose (a
   * cycle's budget): load that moved onto the rest took them down too.
   */
  cascaded: boolean
  /** Back at full service at the end, and holding. */
  recovered: boolean
  /** Completed ÷ demand before the fault (from 10 s in), which full service is measured against; 1 without a fault. */
  before: number
}

/**
 * Full service: back to the share of demand the run completed before the fault, less two points,
 * over every window of `windowSeconds` (at least `fullServiceWindow`) to the end. The simulator's own summary asks
 * 99% of each tick. A real run is read against its own before: a real server with a bounded queue
 * turns away a few percent of random arrivals even below its capacity (the simulator's fluid
 * servers lose none), and one real second wobbles by more than 1% at a drill's rates, because
 * arrivals are random and a request is counted when it ends, not when it arrives. Ten seconds
 * takes the wobble out and still sees any real shortfall; a drill on a small time scale widens it
 * to hold enough real requests (drillWindowSeconds). Both timelines are read this way; the
 * simulator's before is 100%.
 */
export const fullServiceMargin = 0.02
export const fullServiceWindow = 10
/** Seconds at the start left out of the before: connections opening, the first answers not yet in. */
const startSeconds = 10

/**
 * The window a drill reads full service over: at least `fullServiceWindow` scenario seconds, and
 * at least `minWallSeconds` of the real run (a few thousand requests at a drill's rates). Measured:
 * with no request failing, windows of 5 wall seconds (750–1,000 requests) wobbled by up to 2.3
 * points and now and then read as a shortfall; 15 s brings that under a point.
 */
export function drillWindowSeconds(timeScale: number, minWallSeconds = 15): number {
  return Math.max(fullServiceWindow, minWallSeconds / timeScale)
}

export function reportCard(
  line: Timeline,
  fault: {from: number; to: number; servers: number} | null,
  servers: number,
  windowSeconds = fullServiceWindow,
  /** The most servers the runbook holds out of rotation at once, by its own hand. */
  heldOut = 0,
): ReportCard {
  const n = line.t.length
  let during = 0
  let duringCount = 0
  let demand = 0
  let served = 0
  let fewest = Number.POSITIVE_INFINITY
  for (let i = 0; i < n; i++) {
    demand += line.demand[i]
    served += line.served[i]
    if (fault && line.t[i] >= fault.from && line.t[i] < fault.to) {
      during += line.served[i]
      duringCount++
    }
    if (!Number.isNaN(line.inRotation[i])) fewest = Math.min(fewest, line.inRotation[i])
  }
  const before = shareBefore(line, fault?.from ?? 0, windowSeconds)
  const since = fullServiceSince(line, before - fullServiceMargin, windowSeconds)
  const fixAt = fault?.to ?? 0
  const fewestInRotation = Number.isFinite(fewest) ? fewest : null
  return {
    servedDuringFault: fault && duringCount > 0 ? during / duringCount : null,
    lostPercent: demand > 0 ? Math.max(0, ((demand - served) / demand) * 100) : 0,
    secondsToFullServiceAfterFix: since === null ? null : Math.max(0, since - fixAt),
    fewestInRotation,
    cascaded: fault !== null && fewestInRotation !== null && fewestInRotation < servers - fault.servers - heldOut,
    recovered: since !== null,
    before,
  }
}

/** Completed ÷ demand from `startSeconds` to the fault, at most 1; 1 when less than a window of it was recorded. */
function shareBefore(line: Timeline, faultFrom: number, windowSeconds: number): number {
  let demand = 0
  let served = 0
  let first = Number.NaN
  let last = Number.NaN
  for (let i = 0; i < line.t.length && line.t[i] < faultFrom; i++) {
    if (line.t[i] < startSeconds) continue
    if (Number.isNaN(first)) first = line.t[i]
    last = line.t[i]
    demand += line.demand[i]
    served += line.served[i]
  }
  const step = line.t.length > 1 ? line.t[1] - line.t[0] : 1
  return demand > 0 && last + step - first >= windowSeconds ? Math.min(1, served / demand) : 1
}

/** The first second from which every window to the end completes at least `share` of demand; null if the last does not. */
export function fullServiceSince(line: Timeline, share: number, windowSeconds = fullServiceWindow): number | null {
  const n = line.t.length
  if (n === 0) return null
  const step = n > 1 ? (line.t[n - 1] - line.t[0]) / (n - 1) : 1
  const w = Math.max(1, Math.round(windowSeconds / step))
  if (n < w) return null
  let demand = 0
  let served = 0
  for (let i = 0; i < w; i++) {
    demand += line.demand[i]
    served += line.served[i]
  }
  // The last window that falls short; full service starts after it.
  let lastShort = -1
  for (let start = 0; start + w <= n; start++) {
    if (start > 0) {
      demand += line.demand[start + w - 1] - line.demand[start - 1]
      served += line.served[start + w - 1] - line.served[start - 1]
    }
    if (served < share * demand) lastShort = start
  }
  if (lastShort === n - w) return null
  return lastShort < 0 ? line.t[0] : line.t[lastShort + 1]
}
