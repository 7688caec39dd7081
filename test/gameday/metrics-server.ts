import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'

/**
 * A Prometheus instant-query endpoint a game day sets by hand: what the pools' dashboards would
 * show at each moment of the incident (an error spike on mailbox as traffic comes back, calm
 * once the trigger is fixed). A query names its metric and pool as `METRIC{pool="POOL"}`, as the
 * game day's runbooks write them; anything else, or a value not set, is no data.
 */
export class MetricsServer {
  private readonly values = new Map<string, number | (() => Promise<number>)>()
  private server?: Server
  url = ''
  /** Every query asked, in order: which gates read what. */
  readonly asked: string[] = []
  /** The Authorization header and the URL of every request, in order: what was sent with them. */
  readonly sent: Array<{authorization?: string; url: string}> = []
  /** Metrics answered with a 401 that quotes the request back, header and URL, as some proxies in front of Prometheus do. */
  readonly echoing = new Set<string>()

  set(metric: string, pool: string, value: number): void {
    this.values.set(`${metric}{pool="${pool}"}`, value)
  }

  /** A metric read at each query: a pool's request rate that follows the split set now, as a load balancer's counts do. */
  follow(metric: string, pool: string, value: () => Promise<number>): void {
    this.values.set(`${metric}{pool="${pool}"}`, value)
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.answer(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** One instant query: its value as set, or as read now for one that follows (follow). */
  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const query = new URL(req.url ?? '/', 'http://x').searchParams.get('query') ?? ''
    this.asked.push(query)
    this.sent.push({authorization: req.headers.authorization, url: req.url ?? ''})
    if ([...this.echoing].some((metric) => query.startsWith(`${metric}{`))) {
      res.statusCode = 401
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({status: 'error', errorType: 'unauthorized', error: `refused ${req.url} with Authorization: ${req.headers.authorization}`}))
      return
    }
    const given = this.values.get(query)
    const value = typeof given === 'function' ? await given() : given
    const result = value === undefined ? [] : [{metric: {}, value: [Date.now() / 1000, String(value)]}]
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({status: 'success', data: {resultType: 'vector', result}}))
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}

/** The runbook lines that read every gate metric from a MetricsServer, per pool. */
export function metricsTargets(url: string): string {
  return `  metrics:
    source: prometheus
    url: ${url}
    queries:
      error-rate: 'error-rate{pool="$pool"}'
      request-rate: 'request-rate{pool="$pool"}'
      healthy-targets: 'healthy-targets{pool="$pool"}'
`
}

/**
 * Each pool's request rate as a share of `total`, by the weights its record has now: what a
 * dashboard of a weighted DNS split shows once clients have moved (a game day's TTL is 1 s).
 */
export function requestsFollowWeights(metrics: MetricsServer, pools: string[], total: number, weights: () => Promise<Record<string, number>>): void {
  for (const pool of pools)
    metrics.follow('request-rate', pool, async () => {
      const w = await weights()
      const sum = Object.values(w).reduce((a, b) => a + b, 0)
      return sum > 0 ? (total * (w[pool] ?? 0)) / sum : total / pools.length
    })
}
