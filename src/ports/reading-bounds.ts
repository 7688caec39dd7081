import {FailedError} from '../errors.js'
import type {MetricKind, Reading} from './control-plane.js'
import type {PoolNow, PoolPeriod} from './pool-readings.js'

/**
 * What a reading of a pool can physically be, checked before anything is judged on it: every
 * source (Prometheus, HAProxy's `show stat`, CloudWatch) checks its readings here, so an impossible
 * one (demand of −5 rps, 16 of 8 servers in rotation, 1e308 rps, NaN) ends as an error naming the
 * source, what was read and the value (exit 1, nothing changed), never as a verdict.
 *
 * The bounds are the scenario's own where it has one (src/sim/scenario/schema.ts scenarioLimits:
 * a test holds them equal), so a reading that passes is one a scenario can hold.
 */
export const readingBounds = {
  /** Servers in one pool (scenarioLimits.maxServers): more than any one load balancer fronts. */
  maxServers: 100_000,
  /** Requests a second through one pool (scenarioLimits.maxRps): a billion. */
  maxRps: 1e9,
  /**
   * Requests a second one registered server could be sent, at the most: ten million. The fastest
   * HTTP servers benchmarked answer a few million trivial requests a second on a whole machine;
   * a pool's rate past ten million a server is no load at all but a broken query or counter. So a
   * pool's rate is bounded by orders of magnitude above anything it could carry, not by its
   * capacity (which calibrate is there to find).
   */
  maxRpsPerServer: 1e7,
  /** Seconds to an answer (scenarioLimits.maxSpan): a day. */
  maxSeconds: 86_400,
  /**
   * Percent a share may read past 100 and still be read as 100: a ratio of two rates over the same
   * window can overshoot by a little where the rates are extrapolated at its edges (Prometheus's
   * rate()); past it the reading is not a share of anything.
   */
  shareSlack: 5,
}

/** A reading that cannot be: the source, what was read (the query or the stat field) and the value, in the message. */
export class ImpossibleReading extends FailedError {
  constructor(
    readonly source: string,
    readonly what: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(`${source}: ${what} read ${shown(value)}; expected ${expected}. An impossible reading: nothing is judged on it`)
  }
}

/** Where a reading came from, for its error: the source, and the query or field. */
export interface ReadingPlace {
  source: string
  what: string
}

/** A value as an error shows it: a number as JavaScript writes it (NaN, Infinity, 1e+308), anything else quoted and cut short. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value)
  if (value === undefined || value === null) return 'nothing'
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? typeof value)
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 39)}…` : text)
}

/**
 * A number as an endpoint wrote it (Prometheus's values are strings: "1.5", "NaN", "+Inf"), or
 * null for no number at all. Only decimal notation is a number: `Number('')` is 0 and
 * `Number('0x10')` is 16, neither of which Prometheus ever meant.
 */
export function parseReading(raw: unknown): number | null {
  if (typeof raw === 'number') return raw
  if (typeof raw !== 'string') return null
  const text = raw.trim()
  if (/^[+-]?inf(inity)?$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity
  if (/^nan$/i.test(text)) return Number.NaN
  return /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text) ? Number(text) : null
}

/** A finite number from `low` to `high`, or the error naming where it was read. */
export function within(value: number, low: number, high: number, at: ReadingPlace, expected: string): number {
  if (!Number.isFinite(value) || value < low || value > high) throw new ImpossibleReading(at.source, at.what, value, expected)
  return value
}

/** A whole number from `low` to `high` (a float's last digit forgiven: a sum of gauges can read 7.999999999). */
export function wholeWithin(value: number, low: number, high: number, at: ReadingPlace, expected: string): number {
  const whole = Math.round(value)
  if (!Number.isFinite(value) || Math.abs(value - whole) > 1e-6 || whole < low || whole > high) throw new ImpossibleReading(at.source, at.what, value, expected)
  return whole
}

/** Requests a second a pool of `servers` registered servers could be sent, at the most; without a count, a pool's most. */
export function rateBound(servers: number | null): number {
  return servers === null ? readingBounds.maxRps : Math.min(readingBounds.maxRps, Math.max(1, servers) * readingBounds.maxRpsPerServer)
}

const rateExpected = (servers: number | null): string =>
  servers === null
    ? `requests a second, 0 to ${readingBounds.maxRps.toExponential()}`
    : `requests a second, 0 to ${rateBound(servers).toExponential()} (${readingBounds.maxRpsPerServer.toExponential()} a server for ${servers} servers, orders of magnitude past what any pool carries)`

/** A rate in requests a second through a pool of `servers` servers (null: not known here). */
export function checkRate(value: number, at: ReadingPlace, servers: number | null = null): number {
  return within(value, 0, rateBound(servers), at, rateExpected(servers))
}

/** Servers in a pool: a whole number, 1 to readingBounds.maxServers. */
export function checkServers(value: number, at: ReadingPlace): number {
  return wholeWithin(value, 1, readingBounds.maxServers, at, `a whole number of servers, 1 to ${readingBounds.maxServers}`)
}

/** Servers in rotation now: a whole number, 0 to the servers in the pool. */
export function checkInRotation(value: number, servers: number, at: ReadingPlace): number {
  return wholeWithin(value, 0, servers, at, `a whole number of servers in rotation, 0 to the pool's ${servers}`)
}

/**
 * The pool now, as a source read it, checked whole: demand a rate the pool could be sent, the
 * error rate a share, servers and those in rotation whole numbers with no more in rotation than
 * there are. `names` says what each was read from (a query, a stat field, a metric).
 */
export function checkPoolNow(now: PoolNow, source: string, names: Record<'demand' | 'errorRate' | 'servers' | 'healthy', string>): PoolNow {
  const at = (what: keyof typeof names): ReadingPlace => ({source, what: names[what]})
  const servers = checkServers(now.servers, at('servers'))
  return {
    at: now.at,
    demand: checkRate(now.demand, at('demand'), servers),
    errorRate: within(now.errorRate, 0, 1, at('errorRate'), 'a share of requests, 0 to 1'),
    servers,
    healthy: checkInRotation(now.healthy, servers, at('healthy')),
  }
}

/**
 * One period of a pool's history: requests and errors counts a pool could be sent in `period`
 * seconds, servers in rotation (a mean: it may be fractional) within the most a pool holds,
 * latency within a day.
 */
export function checkPeriod(p: PoolPeriod, period: number, source: string, names: Record<'requests' | 'errors' | 'healthy' | 'latency', string>): PoolPeriod {
  const when = new Date(p.at * 1000).toISOString().replace(/\.000Z$/, 'Z')
  const at = (what: keyof typeof names): ReadingPlace => ({source, what: `${names[what]} in the period from ${when}`})
  const most = readingBounds.maxRps * period
  const counted = `requests in ${period} s, 0 to ${most.toExponential()} (${readingBounds.maxRps.toExponential()} a second)`
  within(p.requests, 0, most, at('requests'), counted)
  within(p.errors, 0, most, at('errors'), counted)
  if (p.healthy !== null) within(p.healthy, 0, readingBounds.maxServers, at('healthy'), `servers in rotation, 0 to ${readingBounds.maxServers}`)
  if (p.latency !== null) within(p.latency, 0, readingBounds.maxSeconds, at('latency'), `seconds to an answer, 0 to ${readingBounds.maxSeconds}`)
  return p
}

/**
 * A gate's reading in the metric's own unit (metricUnits): an error rate and a healthy share are
 * percents (a little past 100 read as 100, readingBounds.shareSlack), a request rate requests a
 * second, a latency milliseconds within a day; the requests it was measured on a count. No data
 * (null) stays no data.
 */
export function checkGateReading(kind: MetricKind, reading: Reading, at: ReadingPlace, windowSeconds: number): Reading {
  const value = reading.value
  const most = readingBounds.maxRps * Math.max(1, windowSeconds)
  const requests =
    reading.requests === null
      ? null
      : within(
          reading.requests,
          0,
          most,
          {...at, what: `${at.what} (requests counted)`},
          `a count of requests in ${windowSeconds} s, 0 to ${most.toExponential()} (${readingBounds.maxRps.toExponential()} a second)`,
        )
  if (value === null) return {value, requests}
  switch (kind) {
    case 'error-rate':
    case 'healthy-targets':
      return {value: Math.min(100, within(value, 0, 100 + readingBounds.shareSlack, at, 'a percent, 0 to 100')), requests}
    case 'request-rate':
      return {value: checkRate(value, at), requests}
    case 'latency-p99':
      return {value: within(value, 0, readingBounds.maxSeconds * 1000, at, `milliseconds, 0 to ${readingBounds.maxSeconds * 1000}`), requests}
  }
}
