import type {Clock, MetricKind, MetricsPort} from '../ports/control-plane.js'

/**
 * Gate metrics from a Prometheus HTTP API: one instant query per metric kind, written by the
 * runbook's author. `$window` in a query becomes the window (`60s`) and `$pool` the pool.
 * An empty result is no data.
 */
export class PrometheusMetrics implements MetricsPort {
  readonly label: string

  constructor(
    private readonly url: string,
    private readonly queries: Partial<Record<MetricKind, string>>,
    private readonly clock: Clock,
  ) {
    this.label = `Prometheus ${url}`
  }

  async read(kind: MetricKind, windowSeconds: number, pool?: string): Promise<number | null> {
    const template = this.queries[kind]
    if (!template) throw new Error(`${this.label}: no query for ${kind} in targets.metrics.queries`)
    const query = template.replaceAll('$window', `${Math.max(1, Math.round(windowSeconds))}s`).replaceAll('$pool', pool ?? '')
    const endpoint = new URL('api/v1/query', this.url.endsWith('/') ? this.url : `${this.url}/`)
    endpoint.searchParams.set('query', query)
    endpoint.searchParams.set('time', String(this.clock.now()))
    let response: Response
    try {
      response = await fetch(endpoint, {signal: AbortSignal.timeout(10_000)})
    } catch (error) {
      throw new Error(`${this.label}: query for ${kind} failed: ${(error as Error).message}`)
    }
    if (!response.ok) throw new Error(`${this.label}: query for ${kind} answered HTTP ${response.status}`)
    const body = (await response.json()) as {status: string; error?: string; data?: {resultType: string; result: Array<{value?: [number, string]}> | [number, string]}}
    if (body.status !== 'success') throw new Error(`${this.label}: query for ${kind} failed: ${body.error ?? body.status}`)
    const data = body.data
    if (!data) return null
    const raw = data.resultType === 'scalar' ? (data.result as [number, string])[1] : (data.result as Array<{value?: [number, string]}>)[0]?.value?.[1]
    if (raw === undefined) return null
    const value = Number(raw)
    return Number.isFinite(value) ? value : null
  }
}
