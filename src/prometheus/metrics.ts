import type {Clock, MetricKind, MetricsPort, Reading} from '../ports/control-plane.js'
import {checkGateReading, checkRate} from '../ports/reading-bounds.js'
import {fillQuery, PrometheusApi, promDuration} from './query.js'

/**
 * Gate metrics from a Prometheus HTTP API: one instant query per metric kind, written by the
 * runbook's author. `$window` in a query becomes the window (`60s`) and `$pool` the pool.
 * An empty result is no data, and so is NaN (Prometheus's 0/0: a ratio over a window with no
 * requests). The requests a reading was measured on are the request-rate query's answer times the
 * window, where the runbook gives that query: PromQL's rate() is per second. A value the metric
 * cannot take (a negative rate, an error rate of 150%, +Inf) is an error naming the query, never a
 * verdict (src/ports/reading-bounds.ts).
 */
export class PrometheusMetrics implements MetricsPort {
  readonly label: string
  private readonly api: PrometheusApi

  /** `authorization`: the Authorization header's value, from the environment; never in the label or an error. */
  constructor(
    url: string,
    private readonly queries: Partial<Record<MetricKind, string>>,
    private readonly clock: Clock,
    authorization?: string,
  ) {
    this.api = new PrometheusApi(url, authorization)
    this.label = this.api.label
  }

  async read(kind: MetricKind, windowSeconds: number, pool?: string, signal?: AbortSignal): Promise<Reading> {
    const counted = kind !== 'healthy-targets' && this.queries['request-rate'] !== undefined
    const [value, rate] = await Promise.all([
      this.query(kind, windowSeconds, pool, signal),
      counted && kind !== 'request-rate' ? this.query('request-rate', windowSeconds, pool, signal) : null,
    ])
    const perSecond = kind === 'request-rate' ? value : rate
    if (perSecond !== null) checkRate(perSecond, {source: this.label, what: 'query for request-rate'})
    const reading = {value, requests: counted ? (perSecond ?? 0) * Math.max(1, Math.round(windowSeconds)) : null}
    return checkGateReading(kind, reading, {source: this.label, what: `query for ${kind}`}, windowSeconds)
  }

  private async query(kind: MetricKind, windowSeconds: number, pool: string | undefined, signal: AbortSignal | undefined): Promise<number | null> {
    const template = this.queries[kind]
    if (!template) throw new Error(`${this.label}: no query for ${kind} in targets.metrics.queries`)
    const query = fillQuery(template, {window: promDuration(windowSeconds), pool: pool ?? ''})
    const value = await this.api.instant(kind, query, this.clock.now(), signal)
    return value === null || Number.isNaN(value) ? null : value
  }
}
