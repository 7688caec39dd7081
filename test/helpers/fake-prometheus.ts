import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {Random} from '../../src/sim/random.js'

/** The fleet a fake Prometheus's day is made from: what calibrate must recover. */
export interface PoolTruth {
  servers: number
  /** Requests a second one server answers at most. */
  capacity: number
  /** Demand at the night's trough and the day's peak, requests a second. */
  low: number
  high: number
  /** Mean seconds to an answer while the servers are not full. */
  latencyFloor: number
}

/** The pool after the day: what an instant query at the time it is asked sees. */
export interface PoolNowTruth {
  rps: number
  healthy: number
  servers: number
  errorRate: number
}

export interface FakePrometheusOptions {
  /** Epoch seconds the day ends, on a minute. */
  end: number
  truth: PoolTruth
  /** Minutes of the day [from, to) in which Prometheus has nothing at all (it was down). */
  gap?: [number, number]
  /**
   * Minutes of the day [from, to) in which the healthy gauge reads every server for the first half
   * of each minute and `flapTo` for the second, while every server goes on serving: read only at
   * minute edges it never moves, and its mean (for flapTo 4 of 8, 6) divides what the pool answered by too few.
   */
  flap?: [number, number]
  flapTo?: number
  seed?: number
}

/** The queries this fake understands, as a mapping file writes them (Envoy's cluster statistics). */
export const envoyQueries = {
  requests: 'sum(rate(envoy_cluster_upstream_rq_total{envoy_cluster_name="mailbox"}[$window]))',
  errors: 'sum(rate(envoy_cluster_upstream_rq_xx{envoy_cluster_name="mailbox",envoy_response_code_class="5"}[$window]))',
  healthy: 'sum(envoy_cluster_membership_healthy{envoy_cluster_name="mailbox"})',
  servers: 'sum(envoy_cluster_membership_total{envoy_cluster_name="mailbox"})',
  latency:
    'sum(rate(envoy_cluster_upstream_rq_time_sum{envoy_cluster_name="mailbox"}[$window])) / sum(rate(envoy_cluster_upstream_rq_time_count{envoy_cluster_name="mailbox"}[$window])) / 1000',
  /** Not a pool's one series: the healthy gauge per zone, two series. */
  healthyByZone: 'sum by (zone) (envoy_cluster_membership_healthy{envoy_cluster_name="mailbox"})',
}

/** Prometheus's own limit on a range query's points a series. */
const maxPoints = 11_000

type Evaluate = (t: number, window: number) => number | null

/** One request the fake was asked, for tests that check what was sent. */
export interface AskedQuery {
  path: string
  query: string
  step: number | null
  points: number
  authorization: string | undefined
  /** The request's path and query string as sent: parameters the base URL carried (a proxy's ?token=) are in it. */
  url: string
}

/**
 * A Prometheus HTTP API on loopback that answers /api/v1/query and /api/v1/query_range from a
 * day it computes: one-minute rates for the requests, errors and latency counters (constant
 * within each minute, so a rate over any window is the exact integral), gauges of servers in
 * rotation every 15 s, demand on a diurnal curve from `low` to `high` that overloads the servers
 * at its peak, each server answering at most its capacity (2% noise) and the rest failing, mean
 * latency flat until the servers are full and climbing past it. After the day, `now` holds.
 * Queries it does not know are answered as Prometheus answers a bad one (400, bad_data), and a
 * range query of more than 11,000 points as Prometheus refuses it.
 */
export class FakePrometheus {
  url = ''
  readonly asked: AskedQuery[] = []
  /** The pool after the day. */
  now: PoolNowTruth
  /** Answer the queries that match `query` (every one, without it) with this HTTP status and body instead. */
  failWith: {status: number; body: string; query?: RegExp} | null = null
  /**
   * Answer the queries that match with a JSON answer that never ends: the opening of a matrix and
   * then points, as fast as the client reads them, until it lets go (an endpoint gone wrong, or
   * not Prometheus at all). How many bytes went out is counted in `streamed`.
   */
  streamForever: RegExp | null = null
  streamed = 0
  /**
   * Answer the queries that match with these values, as Prometheus writes them ("-5", "NaN",
   * "+Inf", "1e308", or anything at all), at every time asked, in answers of the right shape: a
   * reading no pool gives, for the readings to refuse.
   */
  override: {query: RegExp; value: (t: number) => string | null} | null = null
  /** The day's own figures a minute: what a test compares calibrate's with. */
  readonly minutes: Array<{offered: number; served: number; latency: number}>
  private readonly start: number
  private readonly server: Server
  private readonly evaluators: Array<{pattern: RegExp; evaluate: Evaluate; series?: number}>

  constructor(private readonly options: FakePrometheusOptions) {
    const {truth} = options
    this.start = options.end - 86_400
    this.now = {rps: truth.low, healthy: truth.servers, servers: truth.servers, errorRate: 0}
    const random = new Random(options.seed ?? 3)
    const noise = () => 1 + (random.next() - 0.5) * 0.04
    this.minutes = Array.from({length: 1440}, (_, i) => {
      const offered = (truth.low + (truth.high - truth.low) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / 1440))) * noise()
      const perServer = offered / truth.servers
      const served = Math.min(perServer, truth.capacity * noise()) * truth.servers
      const latency = truth.latencyFloor * noise() * (perServer > truth.capacity ? 1 + (perServer / truth.capacity - 1) * 20 : 1)
      return {offered, served, latency}
    })
    const firstError = this.minutes.findIndex((m) => m.offered - m.served > 0)
    const requests = (t: number, w: number) =>
      this.rate(
        t,
        w,
        (m) => m.offered,
        () => this.now.rps,
      )
    const errors = (t: number, w: number) =>
      t - w < this.start + firstError * 60
        ? null
        : this.rate(
            t,
            w,
            (m) => m.offered - m.served,
            () => this.now.rps * this.now.errorRate,
          )
    const latency = (t: number, w: number) => {
      const weighted = this.rate(
        t,
        w,
        (m) => m.offered * m.latency,
        () => this.now.rps * truth.latencyFloor,
      )
      const count = requests(t, w)
      return weighted === null || count === null || count === 0 ? null : weighted / count
    }
    // A template as a pattern: `$window` is any duration in seconds, the first one captured.
    const q = (template: string) => new RegExp(`^${template.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('\\$window', '(\\d+(?:\\.\\d+)?)s')}$`)
    this.evaluators = [
      {pattern: q(envoyQueries.requests), evaluate: requests},
      {pattern: q(envoyQueries.errors), evaluate: errors},
      {pattern: q(envoyQueries.latency), evaluate: latency},
      {pattern: q(envoyQueries.healthy), evaluate: (t) => this.healthy(t)},
      {pattern: q(envoyQueries.servers), evaluate: (t) => (this.inGap(t) ? null : t > options.end ? this.now.servers : truth.servers)},
      {pattern: q(envoyQueries.healthyByZone), evaluate: (t) => this.healthy(t), series: 2},
    ]
    this.server = createServer((req, res) => this.answer(req, res))
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this.url
  }

  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }

  /** The minute of the day a time falls in, or null outside the day. */
  private minuteOf(t: number): number | null {
    const i = Math.floor((t - this.start) / 60)
    return i >= 0 && i < 1440 ? i : null
  }

  private inGap(t: number): boolean {
    const i = this.minuteOf(t)
    const gap = this.options.gap
    return gap !== undefined && i !== null && i >= gap[0] && i < gap[1]
  }

  /**
   * A counter's rate over (t - w, t]: its per-minute rate integrated over the window and divided
   * by it; after the day, `after`. Nothing where the window reaches before the day or into the gap.
   */
  private rate(t: number, w: number, perMinute: (m: {offered: number; served: number; latency: number}) => number, after: () => number): number | null {
    if (t - w < this.start) return null
    let sum = 0
    for (let u = t - w; u < t - 1e-9;) {
      const i = Math.floor((u - this.start) / 60 + 1e-9)
      const edge = Math.min(t, this.start + (i + 1) * 60)
      if (i >= 1440) sum += after() * (t - u)
      else {
        if (this.inGap(u)) return null
        sum += perMinute(this.minutes[i]) * (edge - u)
      }
      if (i >= 1440) break
      u = edge
    }
    return sum / w
  }

  /** Servers in rotation at t: every one but in the flapping minutes' second halves, `now` after the day. */
  private healthy(t: number): number | null {
    if (t > this.options.end) return this.now.healthy
    const i = this.minuteOf(t)
    if (i === null || this.inGap(t)) return null
    const flap = this.options.flap
    const second = t - (this.start + i * 60) >= 30
    return flap && i >= flap[0] && i < flap[1] && second ? (this.options.flapTo ?? 4) : this.options.truth.servers
  }

  /** An answer without end, written as fast as the client takes it (never faster: the fake holds no more than a chunk). */
  private stream(res: ServerResponse): void {
    res.statusCode = 200
    res.setHeader('content-type', 'application/json')
    const chunk = Buffer.from('[1733299200,"1"],'.repeat(4096))
    let open = true
    res.on('close', () => (open = false))
    const more = (): void => {
      while (open) {
        this.streamed += chunk.length
        if (!res.write(chunk)) return void res.once('drain', more)
      }
    }
    res.write('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[')
    more()
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake')
    const params = url.searchParams
    const query = params.get('query') ?? ''
    const send = (status: number, body: unknown) => {
      res.statusCode = status
      res.setHeader('content-type', 'application/json')
      res.end(typeof body === 'string' ? body : JSON.stringify(body))
    }
    const bad = (error: string) => send(400, {status: 'error', errorType: 'bad_data', error})
    const range = url.pathname === '/api/v1/query_range'
    const step = range ? Number(params.get('step')) : null
    const from = range ? Number(params.get('start')) : Number(params.get('time') ?? Date.now() / 1000)
    const to = range ? Number(params.get('end')) : from
    const points = range ? Math.floor((to - from) / step! + 1e-9) + 1 : 1
    this.asked.push({path: url.pathname, query, step, points, authorization: req.headers.authorization, url: req.url ?? ''})
    if (this.streamForever?.test(query)) return this.stream(res)
    if (this.failWith && (this.failWith.query === undefined || this.failWith.query.test(query))) return send(this.failWith.status, this.failWith.body)
    if (url.pathname !== '/api/v1/query' && url.pathname !== '/api/v1/query_range') return send(404, '404 page not found')
    if (range && !(step! > 0)) return bad('invalid parameter "step": zero or negative query resolution step widths are not accepted')
    if (points > maxPoints) return bad('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)')
    const known = this.evaluators.map((e) => ({e, m: e.pattern.exec(query)})).find((x) => x.m !== null)
    if (!known) return bad(`1:1: parse error: the fake knows no such query: ${query}`)
    const window = known.m![1] === undefined ? 0 : Number(known.m![1])
    const series = known.e.series ?? 1
    const at = (k: number) => Math.round((from + k * step!) * 1000) / 1000
    const override = this.override?.query.test(query) ? this.override : null
    const raw = (t: number): string | null => {
      if (override) return override.value(t)
      const v = known.e.evaluate(t, window)
      return v === null ? null : String(v)
    }
    if (range) {
      const values: Array<[number, string]> = []
      for (let k = 0; k < points; k++) {
        const v = raw(at(k))
        if (v !== null) values.push([at(k), v])
      }
      const result = values.length === 0 ? [] : Array.from({length: series}, (_, z) => ({metric: series > 1 ? {zone: `z${z}`} : {}, values}))
      return send(200, {status: 'success', data: {resultType: 'matrix', result}})
    }
    const v = raw(from)
    const result = v === null ? [] : Array.from({length: series}, (_, z) => ({metric: series > 1 ? {zone: `z${z}`} : {}, value: [from, v]}))
    return send(200, {status: 'success', data: {resultType: 'vector', result}})
  }
}

/** A mapping file's text for the fake's pool: `family` and its `checks` (YAML flow), the fake's queries. */
export function mappingText(family: string, checks: string, extra = ''): string {
  return `# where pool mailbox's readings are in Prometheus
pool: mailbox
family: ${family}
checks: ${checks}
queries:
  requests: '${envoyQueries.requests}'
  errors: '${envoyQueries.errors}'
  healthy: '${envoyQueries.healthy}'
  servers: '${envoyQueries.servers}'
  latency: '${envoyQueries.latency}'
${extra}`
}
