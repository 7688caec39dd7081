import http from 'node:http'
import type {ClientConfig} from '../sim/config.js'
import {rateAt} from '../sim/curve.js'
import {typeHeader} from './server.js'
import {LoopLag} from './loop-lag.js'

/**
 * The drill's load generator: open-loop arrivals at the demand curve, per traffic type, with the
 * scenario's client timeouts, retries (exponential backoff, full jitter), retry budget over a
 * window and Retry-After on 503.
 *
 * Open loop is the point. A new request is sent when the arrival process says so, whether or not
 * earlier ones have been answered; a closed loop (a fixed number of connections each waiting for
 * its answer, as autocannon, wrk and ab work) slows down as the servers do, and so hides the very
 * overload and retry storm a drill exists to show. The generator is built on node:http with a
 * keep-alive agent: the arrival process, the retry policy and the budget are what no load-testing
 * library supplies in the simulator's terms, and node:http needs no new dependency and tells a
 * refused connection, a reset and a timeout apart. undici's Pool would be the transport to swap in
 * if the measured ceiling (npm run bench) ever falls short.
 *
 * It records per bucket (one scenario second, by default) the series the simulator records under
 * the same names (src/sim/record.ts): demand (user requests), offered (attempts), served,
 * failed, retries, with failures broken down by cause. Rates are per wall second.
 */

/** The path the generator sends a traffic type's requests to, which a drill's restrictions match. */
export const typePath = (type: string): string => `/t/${encodeURIComponent(type)}`

/** The scenario's client policy (src/sim/config.ts), its times in wall seconds; Retry-After comes from the servers' answers. */
export type LoadClients = Omit<ClientConfig, 'retryAfter' | 'thinkTime'>

export interface LoadTarget {
  host: string
  port: number
}

export interface LoadConfig {
  target: LoadTarget
  /** Piecewise-linear user requests per wall second: [wall seconds, rps]; one point means constant. */
  curve: Array<[number, number]>
  types: Array<{name: string; share: number}>
  clients: LoadClients
  /** Wall seconds of arrivals. */
  duration: number
  /** Wall seconds per recorded bucket. */
  bucketSeconds: number
  arrivals: 'poisson' | 'even'
  seed: number
}

/**
 * demand: user requests; offered: attempts (requests and retries); served: attempts answered
 * below 400; failed: the rest, by cause: timeouts, refused connections, errors (statuses other
 * than 503, resets), rejected (503, the fast answer a restriction or a shedding server gives), and
 * local: the generator's own shortage (file descriptors, ports), which makes a run untrustworthy
 * rather than showing anything about the servers. givenUp: requests out of attempts or budget.
 */
export const loadSeries = ['demand', 'offered', 'served', 'failed', 'retries', 'timeouts', 'refused', 'errors', 'rejected', 'local', 'givenUp'] as const
export type LoadSeriesKey = (typeof loadSeries)[number]

/** What a run recorded: for each bucket, rates per wall second, and p99 latency of the answers. */
export interface LoadRecord {
  bucketSeconds: number
  /** Each bucket's start, wall seconds from the start of the run. */
  t: number[]
  series: Record<LoadSeriesKey, number[]>
  /** p99 milliseconds of attempts answered (any status) in the bucket; NaN when none were. */
  latencyP99: number[]
  /** CPU seconds the generator's process used over the run (user + system), for its measured ceiling. */
  cpuSeconds: number
  wallSeconds: number
  /** Attempts still open when the run stopped. */
  inFlightAtStop: number
  /**
   * How late this process's event loop ran, in ms (p99 and worst): arrivals and timeouts are late
   * by as much. Past a small share of the clients' timeout the generator, not the servers, shaped
   * the run, and the drill should say so rather than compare it with a prediction.
   */
  loopDelay: {p99: number; max: number}
}

export interface RunningLoad {
  /** Resolves once arrivals have ended and every open attempt and retry has settled. */
  done: Promise<LoadRecord>
  /** Ends now: no more arrivals, retries dropped, open attempts destroyed. Safe to call twice. */
  stop(): Promise<LoadRecord>
  /** The record so far. */
  snapshot(): LoadRecord
}

type Outcome = 'served' | 'timeout' | 'refused' | 'error' | 'rejected' | 'local'

/** Errors that say this machine ran short, not that a server failed. */
const localErrors = new Set(['EMFILE', 'ENFILE', 'EADDRNOTAVAIL', 'ENOBUFS', 'ENOMEM'])
const causeSeries: Record<Exclude<Outcome, 'served'>, LoadSeriesKey> = {
  timeout: 'timeouts',
  refused: 'refused',
  error: 'errors',
  rejected: 'rejected',
  local: 'local',
}

/** Milliseconds between arrival checks; arrivals falling due in between are sent together, at their count. */
const tickMs = 5

/** A small seeded generator (mulberry32): a drill's arrivals and jitter repeat from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Seconds of wait before retry number k (1 = first retry): full jitter over min(max, base × 2^(k−1)). */
export function backoffSeconds(clients: Pick<LoadClients, 'backoffBase' | 'backoffMax'>, k: number, random: () => number): number {
  return random() * Math.min(clients.backoffMax, clients.backoffBase * 2 ** (k - 1))
}

/** Seconds a 503's Retry-After asks for: delta-seconds, fractions allowed (a time-scaled drill asks for less than a second). */
export function retryAfterSeconds(header: string | string[] | undefined): number | null {
  if (typeof header !== 'string') return null
  const seconds = Number(header.trim())
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null
}

/**
 * A retry budget over a sliding window: retries are allowed while retries in the window stay
 * under budget × user requests in the window, as the simulator's clients count it.
 */
export class RetryBudget {
  private readonly slots: number
  private readonly requests: Float64Array
  private readonly retries: Float64Array
  private slot = -1
  private requestsIn = 0
  private retriesIn = 0

  constructor(
    private readonly budget: number | null,
    private readonly windowSeconds: number,
    slots = 20,
  ) {
    this.slots = slots
    this.requests = new Float64Array(slots)
    this.retries = new Float64Array(slots)
  }

  request(now: number): void {
    this.advance(now)
    this.requests[this.slot % this.slots]++
    this.requestsIn++
  }

  /** Takes one retry from the budget if it allows one now. */
  tryRetry(now: number): boolean {
    this.advance(now)
    if (this.budget !== null && this.retriesIn + 1 > this.budget * this.requestsIn) return false
    this.retries[this.slot % this.slots]++
    this.retriesIn++
    return true
  }

  private advance(now: number): void {
    const slot = Math.floor(now / (this.windowSeconds / this.slots))
    if (this.slot < 0) this.slot = slot
    // Slots that fall out of the window are emptied, at most one full turn of the ring.
    for (let s = Math.max(this.slot + 1, slot - this.slots + 1); s <= slot; s++) {
      const i = s % this.slots
      this.requestsIn -= this.requests[i]
      this.retriesIn -= this.retries[i]
      this.requests[i] = 0
      this.retries[i] = 0
    }
    if (slot > this.slot) this.slot = slot
  }
}

export function startLoad(config: LoadConfig): RunningLoad {
  const {clients, bucketSeconds} = config
  const random = seededRandom(config.seed)
  const agent = new http.Agent({keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024})
  const budget = new RetryBudget(clients.retryBudget, clients.budgetWindow)
  const buckets = Math.ceil(config.duration / bucketSeconds) + Math.ceil((clients.timeout + clients.backoffMax) / bucketSeconds) + 2
  const counts = Object.fromEntries(loadSeries.map((k) => [k, new Array<number>(buckets).fill(0)])) as Record<LoadSeriesKey, number[]>
  const latencies: number[][] = Array.from({length: buckets}, () => [])
  const shares = cumulative(config.types)
  const open = new Set<http.ClientRequest>()
  const retryTimers = new Set<NodeJS.Timeout>()
  const start = performance.now()
  const cpuStart = process.cpuUsage()
  const loopDelay = new LoopLag()
  let cpuSeconds = 0
  let wallSeconds = 0
  let lastTick = 0
  /** Integrated demand so far (expected arrivals), and the level at which the next one is due. */
  let integrated = 0
  let nextArrival = config.arrivals === 'poisson' ? exponential(random) : 1
  let ended = false
  let stopped = false
  let resolveDone!: (record: LoadRecord) => void
  const done = new Promise<LoadRecord>((resolve) => (resolveDone = resolve))

  const now = () => (performance.now() - start) / 1000
  const bucketOf = (t: number) => Math.min(buckets - 1, Math.floor(t / bucketSeconds))
  const count = (key: LoadSeriesKey, t = now()) => counts[key][bucketOf(t)]++

  const pickType = (): string => {
    const u = random()
    for (const [name, upTo] of shares) if (u < upTo) return name
    return shares[shares.length - 1][0]
  }

  const attempt = (type: string, k: number): void => {
    if (stopped) return
    const sentAt = now()
    count('offered', sentAt)
    if (k > 1) count('retries', sentAt)
    let settled = false
    const req = http.request({agent, host: config.target.host, port: config.target.port, path: typePath(type), method: 'GET', headers: {[typeHeader]: type}})
    open.add(req)
    const timer = setTimeout(() => finish('timeout', null), clients.timeout * 1000)
    const finish = (outcome: Outcome, retryAfter: number | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      open.delete(req)
      if (outcome === 'timeout') req.destroy()
      const at = now()
      if (outcome !== 'timeout' && outcome !== 'refused' && outcome !== 'local') latencies[bucketOf(at)].push((at - sentAt) * 1000)
      if (outcome === 'served') {
        count('served', at)
      } else {
        count('failed', at)
        count(causeSeries[outcome], at)
        retry(type, k, outcome === 'rejected' && clients.honourRetryAfter ? retryAfter : null, at)
      }
      maybeDone()
    }
    req.on('response', (res) => {
      res.resume()
      res.on('end', () => {
        const status = res.statusCode ?? 0
        if (status < 400) finish('served', null)
        else if (status === 503) finish('rejected', retryAfterSeconds(res.headers['retry-after']))
        else finish('error', null)
      })
      res.on('error', () => finish('error', null))
    })
    req.on('error', (err: NodeJS.ErrnoException) => finish(errorOutcome(err.code), null))
    req.end()
  }

  const retry = (type: string, k: number, retryAfter: number | null, at: number): void => {
    if (stopped) return
    if (k >= clients.attempts || !budget.tryRetry(at)) {
      count('givenUp', at)
      return
    }
    const wait = (retryAfter ?? 0) + backoffSeconds(clients, k, random)
    const timer = setTimeout(() => {
      retryTimers.delete(timer)
      attempt(type, k + 1)
    }, wait * 1000)
    retryTimers.add(timer)
  }

  const tick = (): void => {
    if (stopped) return
    const t = Math.min(now(), config.duration)
    // The trapezoid of the demand over the time since the last check: arrivals due, whatever the
    // lag of the event loop, so a stalled loop sends late but never fewer.
    integrated += ((rateAt(config.curve, lastTick) + rateAt(config.curve, t)) / 2) * (t - lastTick)
    lastTick = t
    while (integrated >= nextArrival) {
      nextArrival += config.arrivals === 'poisson' ? exponential(random) : 1
      count('demand', t)
      budget.request(t)
      attempt(pickType(), 1)
    }
    if (t >= config.duration) {
      ended = true
      clearInterval(interval)
      maybeDone()
    }
  }
  const interval = setInterval(tick, tickMs)

  const snapshot = (): LoadRecord => {
    const used = bucketOf(Math.max(now(), 0)) + 1
    return {
      bucketSeconds,
      t: Array.from({length: used}, (_, i) => i * bucketSeconds),
      series: Object.fromEntries(loadSeries.map((k) => [k, counts[k].slice(0, used).map((c) => c / bucketSeconds)])) as Record<LoadSeriesKey, number[]>,
      latencyP99: latencies.slice(0, used).map(p99),
      cpuSeconds: stopped ? cpuSeconds : cpuOf(process.cpuUsage(cpuStart)),
      wallSeconds: stopped ? wallSeconds : now(),
      inFlightAtStop: open.size,
      loopDelay: loopDelay.read(),
    }
  }

  const finishRun = (): LoadRecord => {
    const inFlight = open.size
    stopped = true
    cpuSeconds = cpuOf(process.cpuUsage(cpuStart))
    wallSeconds = now()
    clearInterval(interval)
    loopDelay.stop()
    for (const timer of retryTimers) clearTimeout(timer)
    retryTimers.clear()
    for (const req of open) req.destroy()
    open.clear()
    agent.destroy()
    const record = {...snapshot(), inFlightAtStop: inFlight}
    resolveDone(record)
    return record
  }

  function maybeDone(): void {
    if (ended && !stopped && open.size === 0 && retryTimers.size === 0) finishRun()
  }

  return {
    done,
    stop: async () => {
      if (!stopped) finishRun()
      return done
    },
    snapshot,
  }
}

/** What a failed connection or request says: the server refused, this machine ran short, or something else broke. */
export function errorOutcome(code: string | undefined): 'refused' | 'local' | 'error' {
  if (code === 'ECONNREFUSED') return 'refused'
  return localErrors.has(code ?? '') ? 'local' : 'error'
}

function cumulative(types: Array<{name: string; share: number}>): Array<[string, number]> {
  const total = types.reduce((sum, t) => sum + t.share, 0)
  let upTo = 0
  return types.map((t) => [t.name, (upTo += t.share / total)])
}

function exponential(random: () => number): number {
  return -Math.log(1 - random())
}

function cpuOf(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1e6
}

function p99(values: number[]): number {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))]
}
