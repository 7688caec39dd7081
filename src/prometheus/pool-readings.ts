import {FailedError} from '../errors.js'
import type {PoolFamily, PoolNow, PoolPeriod, PoolReadings, PoolSettings} from '../ports/pool-readings.js'
import {checkInRotation, checkPeriod, checkPoolNow, checkRate, checkServers, readingBounds, within, type ReadingPlace} from '../ports/reading-bounds.js'
import type {MappedQuery, PoolMapping} from './mapping.js'
import {fillQuery, promDuration, type Points, type PrometheusApi} from './query.js'

export interface PrometheusPoolReadingsOptions {
  /** Seconds the pool now is read over: the window of its rates (default 120: two scrapes even at a one-minute scrape interval). */
  nowSeconds?: number
  /** Epoch seconds now; a test gives a fixed one. */
  now?: () => number
}

/** Samples of the healthy gauge in each period, besides the one at its end: where servers went in or out within it. */
const gaugeSamples = 4

/**
 * A pool as calibrate and assess read it from Prometheus, through the queries an operator names
 * in a mapping file (src/prometheus/mapping.ts): requests and errors (rates), servers in rotation
 * and in the pool (gauges), mean latency. Prometheus holds metrics, not the load balancer's
 * settings: those the mapping gives, and the calibration says they were given, not read. Read-only.
 *
 * History is range queries (/api/v1/query_range) with a step of one period: a rate evaluated at a
 * period's end over `$window` (the period) is that period's, and requests in it are the rate × the
 * period. The healthy gauge is read `gaugeSamples` times a period, so a period whose servers in
 * rotation moved is seen as such even when they were back by its end. Now is instant queries.
 */
export class PrometheusPoolReadings implements PoolReadings {
  readonly source: string
  readonly family: PoolFamily
  readonly notes: string[] = []
  private readonly nowSeconds: number
  private readonly clock: () => number

  constructor(
    private readonly api: PrometheusApi,
    private readonly mapping: PoolMapping,
    options: PrometheusPoolReadingsOptions = {},
  ) {
    this.family = mapping.data.family
    this.source = `${api.label}: pool ${mapping.data.pool}, queries from ${mapping.file}`
    this.nowSeconds = options.nowSeconds ?? 120
    this.clock = options.now ?? (() => Date.now() / 1000)
  }

  async settings(signal?: AbortSignal): Promise<PoolSettings> {
    const m = this.mapping
    const at = this.clock()
    const window = promDuration(this.nowSeconds)
    const [servers, inRotation] = await Promise.all([this.servers(at, window, signal), this.gaugeNow('healthy', at, window, signal)])
    const healthy = checkInRotation(inRotation, servers, this.place('healthy'))
    const given = (key: string): string => `checks.${key} at ${m.locate(['checks', key])}`
    const serversGiven = typeof m.data.queries.servers === 'number'
    const common = {
      label: `pool ${m.data.pool} in ${this.api.label} (queries and settings from ${m.file})`,
      servers,
      healthy,
      given: {
        from: m.file,
        servers: serversGiven
          ? {how: 'given' as const, source: `queries.servers at ${m.locate(['queries', 'servers'])} (${healthy} in rotation now)`}
          : {how: 'read' as const, source: `the servers query now (${healthy} in rotation)`},
      },
    }
    const c = m.data
    if (c.family === 'alb')
      return {
        ...common,
        family: 'alb',
        interval: c.checks.interval,
        checkTimeout: c.checks.timeout ?? null,
        fall: c.checks.fall,
        rise: c.checks.rise,
        slowStart: c.checks.slowStart,
        drainDelay: c.checks.drainDelay ?? null,
        failoverPercent: c.checks.failoverPercent,
        names: {
          interval: given('interval'),
          checkTimeout: given('timeout'),
          fall: given('fall'),
          rise: given('rise'),
          slowStart: given('slowStart'),
          drainDelay: given('drainDelay'),
          failoverPercent: given('failoverPercent'),
        },
      }
    if (c.family === 'haproxy') {
      const h = c.checks
      return {
        ...common,
        family: 'haproxy',
        interval: h.inter,
        checkTimeout: h.timeout ?? null,
        fall: h.fall,
        rise: h.rise,
        slowStart: h.slowstart,
        // HAProxy keeps a drained server's open requests until they end: no delay of its own.
        drainDelay: null,
        failoverPercent: null,
        // HAProxy's own defaults where the mapping leaves one out: fastinter and downinter are inter.
        haproxy: {
          fastinter: h.fastinter ?? h.inter,
          downinter: h.downinter ?? h.inter,
          observe: h.observe ?? 'none',
          errorLimit: h.errorLimit ?? 10,
          onError: h.onError ?? 'fastinter',
          timeoutServer: h.timeoutServer,
          from: `checks at ${m.locate(['checks'])} (HAProxy's defaults for what it leaves out)`,
        },
        names: {
          interval: given('inter'),
          checkTimeout: given('timeout'),
          fall: given('fall'),
          rise: given('rise'),
          slowStart: given('slowstart'),
          drainDelay: 'drain (HAProxy has no drain delay)',
          failoverPercent: 'panic threshold (HAProxy has none)',
        },
      }
    }
    const e = c.checks
    return {
      ...common,
      family: 'envoy',
      interval: e.interval,
      checkTimeout: null,
      fall: null,
      rise: null,
      slowStart: e.slowStart,
      drainDelay: null,
      failoverPercent: e.panicThreshold,
      envoy: {
        baseEjection: e.baseEjection,
        maxEjection: e.maxEjection,
        maxEjectionPercent: e.maxEjectionPercent,
        slowStartMinWeightPercent: e.slowStartMinWeightPercent ?? 10,
        names: {
          baseEjection: given('baseEjection'),
          maxEjection: given('maxEjection'),
          maxEjectionPercent: given('maxEjectionPercent'),
          slowStartMinWeightPercent: given('slowStartMinWeightPercent'),
        },
      },
      names: {
        interval: given('interval'),
        checkTimeout: "active health checks' timeout (not in Envoy's outlier detection)",
        fall: "failed checks (Envoy's outlier detection ejects for a time)",
        rise: "passed checks (Envoy's outlier detection ejects for a time)",
        slowStart: given('slowStart'),
        drainDelay: 'drain (not in the mapping)',
        failoverPercent: given('panicThreshold'),
      },
    }
  }

  /**
   * Periods of `period` seconds, whole ones within [start, end) on multiples of the period from
   * the epoch (so evaluations fall where scrapes do, minute on minute). A period for which the
   * requests query has no value is left out; the errors query's silence is no errors (a 5xx
   * series exists from the first 5xx); the healthy and latency queries' is a reading not read.
   */
  async history(start: Date, end: Date, period: number, signal?: AbortSignal): Promise<PoolPeriod[]> {
    const first = Math.ceil(start.getTime() / 1000 / period) * period
    const count = Math.floor((end.getTime() / 1000 - first) / period)
    if (count <= 0) return []
    const last = first + count * period
    const window = {window: promDuration(period)}
    const rates = {start: first + period, end: last, step: period}
    const q = this.mapping.data.queries
    const [requests, errors, latency, healthy] = await Promise.all([
      this.api.range('requests', fillQuery(q.requests, window), rates, signal).then(this.checked('requests', (v, at) => checkRate(v, at))),
      this.api.range('errors', fillQuery(q.errors, window), rates, signal).then(this.checked('errors', (v, at) => checkRate(v, at))),
      q.latency === undefined
        ? Promise.resolve(null)
        : this.api
            .range('latency', fillQuery(q.latency, window), rates, signal)
            .then(this.checked('latency', (v, at) => within(v, 0, readingBounds.maxSeconds, at, `seconds to an answer, 0 to ${readingBounds.maxSeconds}`))),
      this.api
        .range('healthy', fillQuery(q.healthy, window), {start: first, end: last, step: period / Math.min(gaugeSamples, period)}, signal)
        .then(this.checked('healthy', (v, at) => within(v, 0, readingBounds.maxServers, at, `servers in rotation, 0 to ${readingBounds.maxServers}`))),
    ])
    // A rate evaluated at a period's end is that period's.
    const byPeriod = (points: Points): Map<number, number> => new Map(points.map(([t, v]) => [Math.round((t - period - first) / period), v]))
    const served = byPeriod(requests)
    const failed = byPeriod(errors)
    const slow = latency === null ? null : byPeriod(latency)
    // Each period's gauge samples, its end's included: the end of one period is the start of the next.
    const gauges = new Map<number, {within: number[]; atEnd: number | null}>()
    for (const [t, v] of healthy) {
      const offset = (t - first) / period
      const index = Math.floor(offset + 1e-9)
      const onEdge = Math.abs(offset - Math.round(offset)) < 1e-9
      if (index < count) {
        const g = gauges.get(index) ?? {within: [], atEnd: null}
        g.within.push(v)
        gauges.set(index, g)
      }
      if (onEdge && index > 0) {
        const g = gauges.get(index - 1) ?? {within: [], atEnd: null}
        g.atEnd = v
        gauges.set(index - 1, g)
      }
    }
    const periods: PoolPeriod[] = []
    const names = {
      requests: this.place('requests').what,
      errors: this.place('errors').what,
      healthy: this.place('healthy').what,
      latency: this.place('latency').what,
    }
    let silent = 0
    for (let i = 0; i < count; i++) {
      const rate = served.get(i)
      if (rate === undefined) {
        silent++
        continue
      }
      const total = rate * period
      if (!(total > 0)) continue
      const g = gauges.get(i)
      const seen = g ? [...g.within, ...(g.atEnd === null ? [] : [g.atEnd])] : []
      const inRotation = g && g.within.length > 0 ? g.within : seen
      periods.push(
        checkPeriod(
          {
            at: first + i * period,
            requests: total,
            errors: Math.min(total, Math.max(0, (failed.get(i) ?? 0) * period)),
            healthy: inRotation.length === 0 ? null : inRotation.reduce((s, v) => s + v, 0) / inRotation.length,
            ...(seen.length > 1 ? {rotationChanged: Math.min(...seen) !== Math.max(...seen)} : {}),
            latency: slow?.get(i) ?? null,
          },
          period,
          this.api.label,
          names,
        ),
      )
    }
    const of = `of the ${count} periods of ${period} s`
    if (silent > 0) this.note(`requests: ${this.api.label} had no value for ${silent} ${of}; they are left out`)
    if (errors.length === 0 && periods.length > 0)
      this.note('errors: the query had no value anywhere in the window; taken as no errors (check the query if the pool did fail)')
    if (q.latency === undefined) this.note('latency: no query in the mapping; no service time, latency knee or queue can be fitted')
    return periods
  }

  /** Demand and errors as rates over the last `nowSeconds`, servers in rotation and in the pool now. */
  async now(signal?: AbortSignal): Promise<PoolNow> {
    const at = this.clock()
    const window = promDuration(this.nowSeconds)
    const q = this.mapping.data.queries
    const [demand, errors, healthy, servers] = await Promise.all([
      this.gaugeNow('requests', at, window, signal),
      this.api.instant('errors', fillQuery(q.errors, {window}), at, signal, {strict: true}),
      this.gaugeNow('healthy', at, window, signal),
      this.servers(at, window, signal),
    ])
    // No errors series is no errors (it starts with the first 5xx); one that reads NaN or less than none is not a rate.
    const failing = errors === null ? 0 : checkRate(errors, this.place('errors'), servers)
    const named = (key: MappedQuery) => this.place(key).what
    return checkPoolNow({at, demand, errorRate: demand > 0 ? Math.min(1, failing / demand) : 0, servers, healthy}, this.api.label, {
      demand: named('requests'),
      errorRate: `${named('errors')} over ${named('requests')}`,
      servers: named('servers'),
      healthy: named('healthy'),
    })
  }

  /** What a query is called in errors: its key and where the mapping gives it. */
  private place(key: MappedQuery): ReadingPlace {
    return {source: this.api.label, what: `query for ${key} (${this.mapping.locate(['queries', key])})`}
  }

  /** Each point of a range query checked as what it reads (a rate, a gauge), at its time. */
  private checked(key: MappedQuery, check: (value: number, at: ReadingPlace) => number): (points: Points) => Points {
    return (points) => {
      for (const [t, v] of points) check(v, {source: this.api.label, what: `${this.place(key).what} at ${new Date(t * 1000).toISOString()}`})
      return points
    }
  }

  /** Servers in the pool: the mapping's number, or its query now, to the nearest whole server (a scenario counts them). */
  private async servers(at: number, window: string, signal?: AbortSignal): Promise<number> {
    const servers = this.mapping.data.queries.servers
    if (typeof servers === 'number') return servers
    return checkServers(await this.gaugeNow('servers', at, window, signal), this.place('servers'))
  }

  /** One query's value now; nothing (or NaN: nothing measured) is an error, as the pool cannot be placed without it. */
  private async gaugeNow(key: MappedQuery, at: number, window: string, signal?: AbortSignal): Promise<number> {
    const template = this.mapping.data.queries[key]
    const value = typeof template === 'string' ? await this.api.instant(key, fillQuery(template, {window}), at, signal, {strict: true}) : null
    if (value === null || Number.isNaN(value))
      throw new FailedError(
        `${this.api.label}: query for ${key} had ${value === null ? 'no value' : 'the value NaN'} at ${new Date(at * 1000).toISOString()} (${this.mapping.locate(['queries', key])}): nothing to say where the pool is now`,
      )
    return key === 'requests' ? checkRate(value, this.place(key)) : value
  }

  /** A note once, however often the readings are taken. */
  private note(sentence: string): void {
    if (!this.notes.includes(sentence)) this.notes.push(sentence)
  }
}
