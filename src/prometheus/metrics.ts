import type {Clock, MetricKind, MetricsPort, Reading} from '../ports/control-plane.js'
import {fillQuery, PrometheusApi, promDuration} from './query.js'

/**
 * Gate metrics from a Prometheus HTTP API: one instant query per metric kind, written by the
 * runbook's author. `$window` in a query becomes the window (`60s`) and `$pool` the pool.
 * An empty result is no data. The requests a reading was measured on are the request-rate query's
 * answer times the window, where the runbook gives that query: PromQL's rate() is per second.
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
    return {value, requests: counted ? (perSecond ?? 0) * Math.max(1, Math.round(windowSeconds)) : null}
  }

  private query(kind: MetricKind, windowSeconds: number, pool: string | undefined, signal: AbortSignal | undefined): Promise<number | null> {
    const template = this.queries[kind]
    if (!template) throw new Error(`${this.label}: no query for ${kind} in targets.metrics.queries`)
    const query = fillQuery(template, {window: promDuration(windowSeconds), pool: pool ?? ''})
    return this.api.instant(kind, query, this.clock.now(), signal)
  }
}
