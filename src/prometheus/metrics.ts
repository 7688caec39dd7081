import type {Clock, MetricKind, MetricsPort, Reading} from '../ports/control-plane.js'

/**
 * One query, connection and answer together, in milliseconds: the same per-request limit as an
 * AWS call (10 s). An instant query answers in well under a second; a server that has not answered
 * in ten is down for the gate's purpose.
 */
export const prometheusTimeoutMs = 10_000

/**
 * Gate metrics from a Prometheus HTTP API: one instant query per metric kind, written by the
 * runbook's author. `$window` in a query becomes the window (`60s`) and `$pool` the pool.
 * An empty result is no data. The requests a reading was measured on are the request-rate query's
 * answer times the window, where the runbook gives that query: PromQL's rate() is per second.
 */
export class PrometheusMetrics implements MetricsPort {
  readonly label: string

  /** `authorization`: the Authorization header's value, from the environment; never in the label or an error. */
  constructor(
    private readonly url: string,
    private readonly queries: Partial<Record<MetricKind, string>>,
    private readonly clock: Clock,
    private readonly authorization?: string,
  ) {
    this.label = `Prometheus ${url}`
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

  private async query(kind: MetricKind, windowSeconds: number, pool: string | undefined, signal: AbortSignal | undefined): Promise<number | null> {
    const template = this.queries[kind]
    if (!template) throw new Error(`${this.label}: no query for ${kind} in targets.metrics.queries`)
    const query = template.replaceAll('$window', `${Math.max(1, Math.round(windowSeconds))}s`).replaceAll('$pool', pool ?? '')
    const endpoint = new URL('api/v1/query', this.url.endsWith('/') ? this.url : `${this.url}/`)
    endpoint.searchParams.set('query', query)
    endpoint.searchParams.set('time', String(this.clock.now()))
    // The deadline covers reading the answer too: a server can send headers and then stall.
    const deadline = AbortSignal.timeout(prometheusTimeoutMs)
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline
    const failed = (error: unknown) =>
      new Error(
        `${this.label}: query for ${kind} failed: ${signal?.aborted ? 'stopped by the interrupt' : deadline.aborted ? `no answer within ${prometheusTimeoutMs / 1000} s` : (error as Error).message}`,
      )
    let response: Response
    try {
      response = await fetch(endpoint, {signal: stop, ...(this.authorization ? {headers: {Authorization: this.authorization}} : {})})
    } catch (error) {
      throw failed(error)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new Error(`${this.label}: query for ${kind} answered HTTP ${response.status}`)
    }
    let body: {status: string; error?: string; data?: {resultType: string; result: Array<{value?: [number, string]}> | [number, string]}}
    try {
      body = (await response.json()) as typeof body
    } catch (error) {
      throw failed(error)
    }
    if (body.status !== 'success') throw new Error(`${this.label}: query for ${kind} failed: ${body.error ?? body.status}`)
    const data = body.data
    if (!data) return null
    const raw = data.resultType === 'scalar' ? (data.result as [number, string])[1] : (data.result as Array<{value?: [number, string]}>)[0]?.value?.[1]
    if (raw === undefined) return null
    const value = Number(raw)
    return Number.isFinite(value) ? value : null
  }
}
