import type {PoolNow, PoolPeriod, PoolReadings, PoolSettings} from '../ports/pool-readings.js'
import {FailedError, InputError, SluiceError} from '../errors.js'
import {backendCheckConfig, mostCommon, type BackendCheckConfig} from './check-config.js'
import {readConfig} from './config-file.js'
import {runningConfigPaths} from './running-config.js'
import type {RuntimeApi} from './runtime.js'
import {checkPeriod, checkPoolNow, checkServers, ImpossibleReading, readingBounds} from '../ports/reading-bounds.js'
import {backendStats, serverStats, statNumber, type Row} from './stats.js'

/** Wall time in epoch milliseconds, and a wait that an abort ends early; a test gives a fake one. */
export interface SamplingClock {
  now(): number
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export interface HaproxyPoolReadingsOptions {
  /** haproxy.cfg (or a directory of *.cfg); by default the one the running HAProxy was started with. */
  config?: string
  /** Seconds between readings of the backend's counters while sampling a window. */
  sampleSeconds?: number
  /** Seconds between the two readings `now()` takes. */
  nowSeconds?: number
  /** Called after each sample of a window: seconds of it read, of its whole length. */
  onSample?: (elapsed: number, total: number) => void
  clock?: SamplingClock
}

/**
 * What `timeout server` stands for when unset. HAProxy then waits for a server's answer for ever
 * (and warns at start); a day is longer than any window calibrate models, and a finite number
 * survives the scenario's JSON, which Infinity would not.
 */
export const noServerTimeout = 86400

/** The backend counters sampling reads; errors are what the backend answered other than 1xx–4xx. */
interface Sample {
  /** Epoch ms. */
  at: number
  requests: number
  served: number
  /** Servers in rotation (`act` of the BACKEND row). */
  active: number
  /** Mean response time over HAProxy's last 1024 requests, seconds; null when it has none. */
  latency: number | null
  /** Each server's own counters, and whether it is in rotation. */
  servers: Map<string, {requests: number; served: number; up: boolean}>
}

const wallClock: SamplingClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal?.aborted || ms <= 0) return resolve()
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal?.addEventListener('abort', done, {once: true})
    }),
}

/**
 * A server is in rotation when its check status is UP, a transitional `UP 1/3` (going down, still
 * taking traffic) included, or when it has no check at all (HAProxy sends it traffic regardless).
 * DOWN (even `DOWN 1/2`, on its way up), DRAIN, MAINT and NOLB take no new requests.
 */
export function inRotation(status: string): boolean {
  return /^UP\b/.test(status) || status === 'no check'
}

/**
 * A HAProxy backend as calibrate and assess read it, over the Runtime API: its servers and their
 * fall and rise from `show stat`; the check settings the Runtime API does not show (inter,
 * slowstart, timeouts, …) from the configuration file; its metrics by sampling the backend's
 * counters live, because HAProxy keeps totals since it started, not history. Read-only.
 */
export class HaproxyPoolReadings implements PoolReadings {
  readonly source: string
  readonly family = 'haproxy'
  readonly notes: string[] = []
  private readonly clock: SamplingClock
  private readonly sampleMs: number
  private readonly nowMs: number

  constructor(
    private readonly api: RuntimeApi,
    private readonly backend: string,
    private readonly options: HaproxyPoolReadingsOptions = {},
  ) {
    this.source = `HAProxy at ${api.label}: backend ${backend} (Runtime API show stat)`
    this.clock = options.clock ?? wallClock
    this.sampleMs = (options.sampleSeconds ?? 1) * 1000
    this.nowMs = (options.nowSeconds ?? 5) * 1000
    if (!(this.sampleMs > 0)) throw new InputError(`sample interval ${options.sampleSeconds} s: it must be more than 0`)
  }

  async settings(signal?: AbortSignal): Promise<PoolSettings> {
    const servers = await serverStats(this.api, this.backend, signal)
    const paths = this.options.config === undefined ? await runningConfigPaths(this.api, signal) : [this.options.config]
    const from = paths.join(', ')
    const config: BackendCheckConfig = backendCheckConfig(
      readConfig(paths),
      this.backend,
      servers.map((s) => s.svname),
      from,
    )
    if (config.timeoutServer === null)
      this.note(`backend ${this.backend} sets no timeout server (HAProxy then waits for an answer without end); taken as ${noServerTimeout} s`)
    if (config.observe !== 'none' && config.observe !== 'layer7')
      this.note(`backend ${this.backend} observes ${config.observe}; the model knows observe layer7 only, so it is taken as none`)
    // The running servers' fall and rise win over the file's: a file edited since the last reload says what HAProxy will do, not what it does.
    const running = (column: string) =>
      mostCommon(
        servers
          .map((s) => s[column])
          .filter((v) => /^\d+$/.test(v ?? ''))
          .map(Number),
      )
    return {
      label: `HAProxy backend ${this.backend}`,
      family: 'haproxy',
      servers: checkServers(servers.length, {source: this.source, what: `the servers of backend ${this.backend} (rows of show stat)`}),
      healthy: servers.filter((s) => inRotation(s.status)).length,
      interval: config.inter,
      checkTimeout: config.checkTimeout,
      fall: running('check_fall') ?? config.fall,
      rise: running('check_rise') ?? config.rise,
      slowStart: config.slowstart,
      // HAProxy keeps a drained server's open requests until they end: no delay of its own.
      drainDelay: 0,
      // HAProxy has no panic threshold; backup servers take over only when every active one is down, another mechanism.
      failoverPercent: null,
      haproxy: {
        fastinter: config.fastinter,
        downinter: config.downinter,
        observe: config.observe === 'layer7' ? 'layer7' : 'none',
        errorLimit: config.errorLimit,
        onError: config.onError,
        timeoutServer: config.timeoutServer ?? noServerTimeout,
        from: `${config.at} (backend ${this.backend})`,
      },
      names: {
        interval: 'inter',
        checkTimeout: 'timeout check',
        fall: 'fall',
        rise: 'rise',
        slowStart: 'slowstart',
        drainDelay: 'drain (HAProxy has no drain delay)',
        failoverPercent: 'panic threshold (HAProxy has none)',
      },
    }
  }

  /**
   * Samples the backend's counters every `sampleSeconds` from `start` (or from now, if it has
   * passed) to `end`, and sums each interval between two samples into the period its first sample
   * falls in. Only whole periods are returned: a period cut short by HAProxy going away or by an
   * interrupt would read as a quiet one.
   */
  async history(start: Date, end: Date, period: number, signal?: AbortSignal): Promise<PoolPeriod[]> {
    const from = start.getTime()
    const to = end.getTime()
    const periodMs = period * 1000
    if (to <= this.clock.now())
      throw new InputError(
        `HAProxy keeps counters, not history: calibrate samples it from now for the window, so its end (${end.toISOString()}) must be in the future`,
      )
    if (from > this.clock.now()) await this.clock.sleep(from - this.clock.now(), signal)
    const totals = new Map<
      number,
      {
        requests: number
        served: number
        active: number[]
        moved: boolean
        latency: number | null
        inRotation: {requests: number; served: number; serverSeconds: number}
      }
    >()
    let previous: Sample | null = null
    let next = Math.max(from, this.clock.now())
    let stopped: {at: number; why: string} | null = null
    for (;;) {
      if (signal?.aborted) {
        stopped = {at: this.clock.now(), why: 'it was interrupted'}
        break
      }
      let sample: Sample
      try {
        sample = await this.sample(signal)
      } catch (error) {
        // An impossible reading is HAProxy answering nonsense, not HAProxy gone: nothing is calibrated on it.
        if (!(error instanceof SluiceError) || error instanceof ImpossibleReading) throw error
        stopped = {at: this.clock.now(), why: signal?.aborted ? 'it was interrupted' : `HAProxy stopped answering (${error.message})`}
        break
      }
      if (previous) {
        // A timer may fire a hair early; the first interval still belongs to the first period.
        const index = Math.max(0, Math.floor((previous.at - from) / periodMs))
        const into = totals.get(index) ?? {
          requests: 0,
          served: 0,
          active: [],
          moved: false,
          latency: null,
          inRotation: {requests: 0, served: 0, serverSeconds: 0},
        }
        into.requests += increase(previous.requests, sample.requests)
        into.served += increase(previous.served, sample.served)
        into.active.push(previous.active)
        into.moved ||= sample.active !== previous.active
        into.latency = sample.latency
        // What one server serves, from the servers in rotation at both ends of the interval only: a
        // server taken out goes on answering what it had queued, which divided among those left in
        // would read as more than any of them serves.
        for (const [name, now] of sample.servers) {
          const before = previous.servers.get(name)
          if (!before?.up || !now.up) continue
          into.inRotation.requests += increase(before.requests, now.requests)
          into.inRotation.served += increase(before.served, now.served)
          into.inRotation.serverSeconds += (sample.at - previous.at) / 1000
        }
        totals.set(index, into)
      }
      previous = sample
      this.options.onSample?.(Math.min(to, sample.at - from) / 1000, (to - from) / 1000)
      if (sample.at >= to) break
      next = Math.min(to, next + this.sampleMs)
      await this.clock.sleep(next - this.clock.now(), signal)
    }
    // A period is whole once a sample at or past its end was read.
    const whole = previous === null ? 0 : Math.floor((Math.min(previous.at, to) - from) / periodMs)
    if (stopped) {
      const read = previous === null ? 0 : Math.max(0, Math.min(previous.at, to) - from) / 1000
      const window = `${Math.round(read)} s of the ${Math.round((to - from) / 1000)} s window`
      if (whole <= 0 && !signal?.aborted)
        throw new FailedError(
          `sampling backend ${this.backend} at ${this.api.label} stopped at ${iso(stopped.at)} before one ${period} s period was read: ${stopped.why}`,
        )
      this.note(
        `sampling backend ${this.backend} stopped at ${iso(stopped.at)} because ${stopped.why}; ${window} was read (${Math.max(0, whole)} whole periods)`,
      )
    }
    return [...totals.entries()]
      .filter(([index, t]) => index < whole && t.requests > 0)
      .sort(([a], [b]) => a - b)
      .map(([index, t]) =>
        checkPeriod(
          {
            at: (from + index * periodMs) / 1000,
            requests: t.requests,
            errors: Math.max(0, t.requests - t.served),
            healthy: t.active.reduce((s, a) => s + a, 0) / t.active.length,
            rotationChanged: t.moved,
            latency: t.latency,
            ...(t.inRotation.serverSeconds > 0 ? {inRotation: t.inRotation} : {}),
          },
          period,
          this.source,
          periodNames,
        ),
      )
  }

  /** Demand and errors between two readings `nowSeconds` apart, and who is in rotation at the second. */
  async now(signal?: AbortSignal): Promise<PoolNow> {
    const first = await this.sample(signal)
    await this.clock.sleep(this.nowMs, signal)
    if (signal?.aborted) throw new FailedError(`reading backend ${this.backend} at ${this.api.label} now was stopped by the interrupt`)
    const second = await this.sample(signal)
    const servers = await serverStats(this.api, this.backend, signal)
    const requests = increase(first.requests, second.requests)
    const seconds = (second.at - first.at) / 1000
    return checkPoolNow(
      {
        at: second.at / 1000,
        demand: seconds > 0 ? requests / seconds : 0,
        errorRate: requests > 0 ? Math.min(1, Math.max(0, requests - increase(first.served, second.served)) / requests) : 0,
        servers: servers.length,
        healthy: servers.filter((s) => inRotation(s.status)).length,
      },
      this.source,
      {
        demand: `show stat field stot of the BACKEND row, over ${seconds} s`,
        errorRate: 'show stat fields hrsp_1xx–hrsp_4xx over stot of the BACKEND row',
        servers: `the servers of backend ${this.backend} (rows of show stat)`,
        healthy: `the servers of backend ${this.backend} in rotation (status of show stat)`,
      },
    )
  }

  /** A note once, however often settings are read. */
  private note(sentence: string): void {
    if (!this.notes.includes(sentence)) this.notes.push(sentence)
  }

  private async sample(signal?: AbortSignal): Promise<Sample> {
    const [row, serverRows]: [Row, Row[]] = await Promise.all([backendStats(this.api, this.backend, signal), serverStats(this.api, this.backend, signal)])
    // Every cell read is checked: a counter of −357 or 1e27 is no reading HAProxy gives (src/haproxy/stats.ts statNumber).
    const number = (column: string) => statNumber(row, column, this.source)
    const count = (r: Row, column: string) => statNumber(r, column, this.source)
    // rtime is 0 both for "no requests yet" and for answers under a millisecond; with no request at all it says nothing.
    const latency =
      row.rtime === undefined || row.rtime === '' || number('stot') === 0 ? null : statNumber(row, 'rtime', this.source, readingBounds.maxSeconds * 1000) / 1000
    const active = statNumber(row, 'act', this.source, readingBounds.maxServers)
    return {
      at: this.clock.now(),
      // What arrived, from stot: in HTTP mode the backend starts a stream a request. Its req_tot
      // counts a request when it ends (HAProxy 2.6), so a hung server's requests, held until
      // `timeout server`, would not count as offered until long after, and offered would never
      // exceed served: measured on a drill, req_tot followed the answers exactly while stot
      // followed the frontend's arrivals.
      requests: number('stot'),
      served: number('hrsp_1xx') + number('hrsp_2xx') + number('hrsp_3xx') + number('hrsp_4xx'),
      active,
      latency,
      servers: new Map(
        serverRows.map((r) => [
          r.svname,
          {
            requests: count(r, 'stot'),
            served: count(r, 'hrsp_1xx') + count(r, 'hrsp_2xx') + count(r, 'hrsp_3xx') + count(r, 'hrsp_4xx'),
            up: inRotation(r.status),
          },
        ]),
      ),
    }
  }
}

/** How much a counter grew; one that went down was reset (HAProxy reloaded), so it counts from zero. */
function increase(before: number, after: number): number {
  return after >= before ? after - before : after
}

/** What each figure of a period is read from, for an impossible one's error. */
const periodNames = {
  requests: 'show stat field stot of the BACKEND row',
  errors: 'show stat fields hrsp_1xx–hrsp_4xx against stot of the BACKEND row',
  healthy: 'show stat field act of the BACKEND row',
  latency: 'show stat field rtime of the BACKEND row',
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z')
