import type {Clock, MetricKind, MetricsPort, PoolPort, Reading} from '../ports/control-plane.js'
import {healthyShare} from '../ports/target-groups.js'
import {FailedError} from '../errors.js'
import type {RuntimeApi} from './runtime.js'
import {checkGateReading} from '../ports/reading-bounds.js'
import {backendStats, statNumber} from './stats.js'
import {readConfig, type ConfigSection} from './config-file.js'
import {runningConfigPaths} from './running-config.js'

interface Sample {
  at: number
  requests: number
  errors: number
}

/** Samples older than this are of no use to any gate window sluice runs. */
const keepSeconds = 3600

/**
 * Gate metrics from HAProxy's own counters (`show stat`, each backend's row), read over the same
 * Runtime API as the other adapters. HAProxy keeps totals, not rates, so a rate over a window is
 * the difference between two samples: an earlier one about a window old, or, when there is none
 * (the first read of a run, or reads further apart than a window), one taken now and another
 * after waiting out the window. A much older sample is not used: its difference would mix in
 * traffic from before the window, such as the previous step of a ramp.
 *
 * Why not HAProxy's Prometheus exporter through sluice's Prometheus source: that source asks a
 * Prometheus server PromQL (rate(), histogram_quantile()); the exporter alone is a page of the
 * same counters, and a Prometheus server to scrape it is one more process to run and trust. With
 * a Prometheus server already scraping HAProxy, a runbook can name that instead.
 *
 * Errors are the backends' 5xx responses (the servers' and those HAProxy gives for the backend,
 * such as 503 with no server up) and the requests their clients gave up on before the answer
 * came (`cli_abrt`), over the backends' requests. A client that times out on an overloaded pool
 * sees a failure, but HAProxy records no 5xx for it, and without it an error-rate gate passes a
 * pool that answers everything too late (a drill of the Outlook recovery showed exactly that). The 503s sluice's own restriction
 * answers in the frontend are not counted: they are the runbook's choice, not a failure.
 * HAProxy's stats have no latency percentiles (only averages over the last 1024 requests and a
 * maximum), so latency-p99 cannot be read from them.
 */
export class HaproxyMetrics implements MetricsPort {
  readonly label: string
  private readonly samples = new Map<string, Sample[]>()

  constructor(
    private readonly api: RuntimeApi,
    private readonly clock: Clock,
    /** Pool → backend. */
    private readonly backends: Record<string, string>,
    /** Pool → its target group, for healthy-targets. */
    private readonly groups: Map<string, PoolPort>,
  ) {
    this.label = `haproxy stats (${api.label})`
  }

  /**
   * The backends whose clients can give up unseen: without `option abortonclose` HAProxy keeps a
   * request whose client has left until its server answers, and counts it by that answer (a 2xx,
   * or a 504 at `timeout server`), so `cli_abrt` stays 0 and an error-rate gate passes a pool that
   * makes its clients time out (the cold-return game day: "0% of 136 requests" over a window in
   * which most clients timed out). Read from the running HAProxy's configuration where it can be found.
   */
  async caveats(signal?: AbortSignal): Promise<string[]> {
    let sections: ConfigSection[]
    try {
      sections = readConfig(await runningConfigPaths(this.api, signal))
    } catch (error) {
      return [`cannot tell whether HAProxy counts clients that give up as errors: ${(error as Error).message}`]
    }
    const blind = Object.values(this.backends).filter((name) => {
      const section = sections.find((s) => s.kind === 'backend' && s.name === name)
      return section !== undefined && !abortsOnClose(section)
    })
    if (blind.length === 0) return []
    return [
      `backend${blind.length === 1 ? '' : 's'} ${blind.join(', ')} ${blind.length === 1 ? 'has' : 'have'} no \`option abortonclose\`: a client that gives up waiting is never counted as an error (only HAProxy's own 504 at \`timeout server\` is), so an error-rate gate can pass a pool that makes its clients time out; set it in the backend or its defaults`,
    ]
  }

  async read(kind: MetricKind, windowSeconds: number, pool?: string, signal?: AbortSignal): Promise<Reading> {
    if (pool !== undefined && !(pool in this.backends))
      throw new FailedError(`${this.label}: no backend for pool ${pool}; the runbook names ${Object.keys(this.backends).join(', ')}`)
    if (kind === 'healthy-targets') return {value: await healthyShare(this.groups, pool, signal), requests: null}
    if (kind === 'latency-p99')
      throw new FailedError(
        `${this.label}: HAProxy's stats have no latency percentiles (only an average of the last 1024 requests), so latency-p99 cannot be read from them; gate on a Prometheus source with a latency histogram, or on error-rate`,
      )
    const scope = pool === undefined ? Object.values(this.backends) : [this.backends[pool]]
    const key = scope.join(',')
    const now = await this.sample(scope, signal)
    let then = closest(this.samples.get(key) ?? [], now.at - windowSeconds, windowSeconds)
    this.remember(key, now)
    if (!then) {
      then = now
      // Sampled every quarter window on the way, not only at its end: the next read, an interval
      // later, then finds a sample a window before it and answers at once instead of waiting a
      // window again. Reads an interval apart keep the samples that close from then on.
      let later = now
      for (let k = 0; k < 4; k++) {
        await this.clock.sleep(windowSeconds / 4, signal)
        if (signal?.aborted) throw new FailedError(`${this.label}: reading ${kind} was stopped by the interrupt`)
        later = await this.sample(scope, signal)
        this.remember(key, later)
      }
      return this.checked(kind, rate(kind, then, later), windowSeconds)
    }
    return this.checked(kind, rate(kind, then, now), windowSeconds)
  }

  /** A rate no pool could be sent (counters of 1e27) is an error naming the fields, never a verdict. */
  private checked(kind: MetricKind, reading: Reading, windowSeconds: number): Reading {
    const fields = kind === 'request-rate' ? 'req_tot' : 'hrsp_5xx and cli_abrt over req_tot'
    return checkGateReading(kind, reading, {source: this.label, what: `${kind} from show stat fields ${fields} of the BACKEND row`}, windowSeconds)
  }

  private async sample(backends: string[], signal?: AbortSignal): Promise<Sample> {
    let requests = 0
    let errors = 0
    for (const backend of backends) {
      const row = await backendStats(this.api, backend, signal)
      // Each cell checked: a counter of −357 or 1e27 is an error naming the field, not a rate.
      requests += statNumber(row, 'req_tot', this.label)
      errors += statNumber(row, 'hrsp_5xx', this.label) + statNumber(row, 'cli_abrt', this.label)
    }
    return {at: this.clock.now(), requests, errors}
  }

  private remember(key: string, sample: Sample): void {
    const kept = (this.samples.get(key) ?? []).filter((s) => s.at >= sample.at - keepSeconds)
    this.samples.set(key, [...kept, sample])
  }
}

/**
 * The sample whose time is nearest `start`, among those from a quarter of a window before it to half
 * a window after it: close enough that the difference is the window asked for, give or take.
 */
function closest(samples: Sample[], start: number, windowSeconds: number): Sample | undefined {
  const fits = samples.filter((s) => s.at >= start - windowSeconds / 4 && s.at <= start + windowSeconds / 2)
  return fits.sort((a, b) => Math.abs(a.at - start) - Math.abs(b.at - start))[0]
}

/**
 * No requests in the window is no data; counters that went down mean HAProxy restarted (a reset,
 * never a negative rate), so the window is unknown.
 */
function rate(kind: MetricKind, then: Sample, now: Sample): Reading {
  const requests = now.requests - then.requests
  const errors = now.errors - then.errors
  const seconds = now.at - then.at
  if (requests < 0 || errors < 0 || seconds <= 0) return {value: null, requests: null}
  if (requests === 0) return {value: null, requests: 0}
  // Aborted requests (cli_abrt) can be counted where req_tot has not counted them yet: a share past all is all.
  return {value: kind === 'request-rate' ? requests / seconds : Math.min(100, (errors / requests) * 100), requests}
}

/** Whether a backend sets `option abortonclose`, itself or through its defaults (the last word on it wins: `no option` clears it). */
function abortsOnClose(section: ConfigSection): boolean {
  const said = (s: ConfigSection | null): boolean | undefined => {
    let on: boolean | undefined
    for (const {words} of s?.lines ?? []) {
      if (words[0] === 'option' && words[1] === 'abortonclose') on = true
      if (words[0] === 'no' && words[1] === 'option' && words[2] === 'abortonclose') on = false
    }
    return on
  }
  return said(section) ?? said(section.defaults) ?? false
}
