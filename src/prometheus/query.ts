import {FailedError} from '../errors.js'

/**
 * One query, connection and answer together, in milliseconds: the same per-request limit as an
 * AWS call (10 s). An instant query answers in well under a second, and a range query is asked in
 * spans short enough to (rangePoints); a server that has not answered in ten is down.
 */
export const prometheusTimeoutMs = 10_000

/**
 * Points one range query asks for. Prometheus refuses more than 11,000 a series; a day of
 * one-minute periods is 1,440, so a long window is asked in a few spans, each well inside the deadline.
 */
export const rangePoints = 2_000

/** One series of a range query's answer: [epoch seconds, value] points, oldest first. */
export type Points = Array<[number, number]>

/** What Prometheus answers on /api/v1/query and /api/v1/query_range. */
interface Answer {
  status?: string
  errorType?: string
  error?: string
  data?: {resultType?: string; result?: unknown}
}

/** `$window` (and any other `$name` given) in a query template, filled in. */
export function fillQuery(template: string, values: Record<string, string>): string {
  let query = template
  for (const [name, value] of Object.entries(values)) query = query.replaceAll(`$${name}`, value)
  return query
}

/** A window or step as PromQL spells a duration: whole seconds, at least one. */
export const promDuration = (seconds: number): string => `${Math.max(1, Math.round(seconds))}s`

/**
 * The Prometheus HTTP API, as the gate metrics and the pool readings ask it: instant queries
 * (/api/v1/query) and range queries (/api/v1/query_range), each under a deadline and the caller's
 * signal, with the Authorization header sent when given. Every error names the query's key (what
 * the caller calls it: `error-rate`, `requests`), the server's URL and the HTTP status or
 * Prometheus's own error; never the header's value, which is held here and sent, nothing else.
 */
export class PrometheusApi {
  /** `Prometheus http://prometheus:9090`: how errors and sources name the server. */
  readonly label: string

  constructor(
    private readonly url: string,
    private readonly authorization?: string,
  ) {
    this.label = `Prometheus ${url}`
  }

  /**
   * One value at `time` (epoch seconds): the first series of a vector, or a scalar. Null where
   * the query matched nothing (no data), and, unless `strict`, where it answered something else.
   * `strict` refuses an answer of several series or of another type (a range vector), where which
   * value is the pool's is not for sluice to guess.
   */
  async instant(key: string, query: string, time: number, signal?: AbortSignal, options: {strict?: boolean} = {}): Promise<number | null> {
    const answer = await this.get(key, 'query', {query, time: String(time)}, signal)
    const data = answer.data
    if (!data) return null
    if (data.resultType === 'scalar') return numberOf((data.result as [number, string] | undefined)?.[1])
    if (data.resultType !== 'vector') {
      if (options.strict) throw this.failed(key, `expected a vector or a scalar, got ${String(data.resultType)}`)
      return null
    }
    const result = (data.result ?? []) as Array<{value?: [number, string]}>
    if (options.strict && result.length > 1) throw this.several(key, result.length)
    return numberOf(result[0]?.value?.[1])
  }

  /**
   * The one series a query gives from `start` to `end` (epoch seconds, both included) every `step`
   * seconds, asked in spans of at most rangePoints points; points Prometheus has no value for are
   * absent. An answer of several series is refused: which of them is the pool's is not for sluice
   * to guess (sum() them in the query).
   */
  async range(key: string, query: string, span: {start: number; end: number; step: number}, signal?: AbortSignal): Promise<Points> {
    const points: Points = []
    const stride = span.step * rangePoints
    for (let from = span.start; from <= span.end; from += stride) {
      const to = Math.min(span.end, from + stride - span.step)
      const answer = await this.get(key, 'query_range', {query, start: String(from), end: String(to), step: String(span.step)}, signal)
      const data = answer.data
      if (!data) continue
      if (data.resultType !== 'matrix') throw this.failed(key, `expected a matrix from a range query, got ${String(data.resultType)}`)
      const result = (data.result ?? []) as Array<{values?: Array<[number, string]>}>
      if (result.length > 1) throw this.several(key, result.length)
      for (const [at, raw] of result[0]?.values ?? []) {
        const value = numberOf(raw)
        if (value !== null) points.push([Number(at), value])
      }
    }
    return points
  }

  private async get(key: string, path: 'query' | 'query_range', params: Record<string, string>, signal: AbortSignal | undefined): Promise<Answer> {
    const endpoint = new URL(`api/v1/${path}`, this.url.endsWith('/') ? this.url : `${this.url}/`)
    for (const [name, value] of Object.entries(params)) endpoint.searchParams.set(name, value)
    // The deadline covers reading the answer too: a server can send headers and then stall.
    const deadline = AbortSignal.timeout(prometheusTimeoutMs)
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline
    const why = (error: unknown): string =>
      signal?.aborted ? 'stopped by the interrupt' : deadline.aborted ? `no answer within ${prometheusTimeoutMs / 1000} s` : (error as Error).message
    let response: Response
    try {
      response = await fetch(endpoint, {signal: stop, ...(this.authorization ? {headers: {Authorization: this.authorization}} : {})})
    } catch (error) {
      throw this.failed(key, why(error))
    }
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      throw this.failed(key, why(error))
    }
    let answer: Answer | null = null
    try {
      answer = JSON.parse(text) as Answer
    } catch {
      answer = null
    }
    // Prometheus answers a bad query with 400 and says why in the body: say both.
    const said = answer && typeof answer.error === 'string' ? `: ${answer.errorType ? `${answer.errorType}: ` : ''}${oneLine(answer.error)}` : ''
    if (!response.ok) throw new FailedError(`${this.label}: query for ${key} answered HTTP ${response.status}${said}`)
    if (answer === null || typeof answer !== 'object') throw this.failed(key, 'the answer is not JSON')
    if (answer.status !== 'success') throw this.failed(key, said ? said.slice(2) : String(answer.status))
    return answer
  }

  private failed(key: string, why: string): FailedError {
    return new FailedError(`${this.label}: query for ${key} failed: ${why}`)
  }

  private several(key: string, count: number): FailedError {
    return this.failed(key, `it gave ${count} series; expected one for the pool (sum() them in the query)`)
  }
}

function numberOf(raw: unknown): number | null {
  if (raw === undefined || raw === null) return null
  const value = Number(raw)
  return Number.isFinite(value) ? value : null
}

/** Prometheus's error, on one line and not past a screen's width: it may quote the query back. */
function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}
