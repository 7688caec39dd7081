import {FailedError, InputError} from '../errors.js'
import {AnswerTooLong, maxAnswerBytes, overCap, readBoundedBody} from '../input/bounded-answer.js'
import {headerValueProblem, redactUrl, scrubSecrets, urlSecrets} from '../input/secrets.js'
import {escapeControls} from '../input/terminal-safe.js'
import {parseReading} from '../ports/reading-bounds.js'

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

/**
 * One series of a range query's answer: [epoch seconds, value] points, oldest first. A value may
 * be ±Infinity (Prometheus's `+Inf`), for the caller to refuse; NaN (a ratio's 0/0) is no value, left out.
 */
export type Points = Array<[number, number]>

/** What Prometheus answers on /api/v1/query and /api/v1/query_range. */
interface Answer {
  status?: unknown
  errorType?: unknown
  error?: unknown
  data?: unknown
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
 * The Authorization header's value from the environment variable a runbook or mapping names
 * (`where`: its file:line:column and key), checked before anything is sent: unset, empty, or a
 * value with a line break or another control character is bad input (exit 2) naming the variable
 * and where it was named, never the value. fetch would otherwise refuse it quoting it whole
 * (`Headers.append: "Bearer SECRET\nline2" is an invalid header value`), into the error, the
 * journal and --json.
 */
export function authorizationFromEnv(variable: string | undefined, where: string, url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (variable === undefined) return undefined
  const value = env[variable]
  if (!value) throw new InputError(`${where}: $${variable} is not set; it holds the Authorization header for ${redactUrl(url)}`)
  const problem = headerValueProblem(value)
  if (problem !== null)
    throw new InputError(
      `${where}: $${variable} ${problem}; it must hold the Authorization header's value on one line of printable ASCII (Bearer TOKEN). Its value is not shown`,
    )
  return value.trim()
}

/**
 * The Prometheus HTTP API, as the gate metrics and the pool readings ask it: instant queries
 * (/api/v1/query) and range queries (/api/v1/query_range), each under a deadline and the caller's
 * signal, with the Authorization header sent when given. Every answer is streamed and read to at
 * most maxAnswerBytes, and its shape checked: anything else Prometheus never answers is an error
 * naming the query, not a TypeError. Every error names the query's key (what the caller calls it:
 * `error-rate`, `requests`), the server's URL (secret query parameters REDACTED) and the HTTP status
 * or Prometheus's own error, scrubbed of the header's value and the URL's secrets, which are held
 * here and sent, nothing else.
 */
export class PrometheusApi {
  /** `Prometheus http://prometheus:9090`: how errors and sources name the server, its secrets REDACTED. */
  readonly label: string
  private readonly secrets: string[]

  private readonly maxBytes: number
  private readonly timeoutMs: number

  /** `limits`: the cap on an answer and the deadline on a query, for a test that reaches them quickly; by default maxAnswerBytes and prometheusTimeoutMs. */
  constructor(
    private readonly url: string,
    private readonly authorization?: string,
    limits: {maxBytes?: number; timeoutMs?: number} = {},
  ) {
    this.maxBytes = limits.maxBytes ?? maxAnswerBytes
    this.timeoutMs = limits.timeoutMs ?? prometheusTimeoutMs
    this.label = `Prometheus ${redactUrl(url)}`
    if (authorization !== undefined && headerValueProblem(authorization) !== null)
      throw new InputError(`${this.label}: the Authorization header ${headerValueProblem(authorization)}; its value is not shown`)
    // The whole header, and the credential after its scheme: a server may echo either.
    const credential = authorization?.replace(/^\S+\s+/, '')
    this.secrets = [...(authorization ? [authorization, credential!] : []), ...urlSecrets(url)]
  }

  /**
   * One value at `time` (epoch seconds): the first series of a vector, or a scalar, as Prometheus
   * wrote it (NaN and ±Infinity included: the caller judges them). Null where the query matched
   * nothing (no data), and, unless `strict`, where it answered another type. `strict` refuses an
   * answer of several series or of another type (a range vector), where which value is the pool's
   * is not for sluice to guess.
   */
  async instant(key: string, query: string, time: number, signal?: AbortSignal, options: {strict?: boolean} = {}): Promise<number | null> {
    const data = await this.get(key, 'query', {query, time: String(time)}, signal)
    if (data.resultType === 'scalar') return this.value(key, Array.isArray(data.result) ? data.result[1] : undefined)
    if (data.resultType !== 'vector') {
      if (options.strict) throw this.failed(key, `expected a vector or a scalar, got ${shortly(data.resultType)}`)
      return null
    }
    const result = this.series(key, data.result)
    if (options.strict && result.length > 1) throw this.several(key, result.length)
    if (result.length === 0) return null
    const value = (result[0] as {value?: unknown}).value
    if (!Array.isArray(value) || value.length !== 2) throw this.malformed(key, 'a vector sample that is not [time, "value"]')
    return this.value(key, value[1])
  }

  /**
   * The one series a query gives from `start` to `end` (epoch seconds, both included) every `step`
   * seconds, asked in spans of at most rangePoints points; points Prometheus has no value for (or
   * NaN) are absent. An answer of several series is refused: which of them is the pool's is not
   * for sluice to guess (sum() them in the query); so is one of more points than were asked for.
   */
  async range(key: string, query: string, span: {start: number; end: number; step: number}, signal?: AbortSignal): Promise<Points> {
    const points: Points = []
    const stride = span.step * rangePoints
    for (let from = span.start; from <= span.end; from += stride) {
      const to = Math.min(span.end, from + stride - span.step)
      const data = await this.get(key, 'query_range', {query, start: String(from), end: String(to), step: String(span.step)}, signal)
      if (data.resultType !== 'matrix') throw this.failed(key, `expected a matrix from a range query, got ${shortly(data.resultType)}`)
      const result = this.series(key, data.result)
      if (result.length > 1) throw this.several(key, result.length)
      if (result.length === 0) continue
      const values = (result[0] as {values?: unknown}).values
      if (!Array.isArray(values)) throw this.malformed(key, 'a series without values')
      const asked = Math.floor((to - from) / span.step + 1e-9) + 1
      if (values.length > asked) throw this.malformed(key, `${values.length} points where ${asked} were asked for`)
      for (const point of values as unknown[]) {
        if (!Array.isArray(point) || point.length !== 2) throw this.malformed(key, 'a point that is not [time, "value"]')
        const at = typeof point[0] === 'number' ? point[0] : parseReading(point[0])
        if (at === null || !Number.isFinite(at) || at < from - span.step || at > to + span.step)
          throw this.malformed(key, `a point at ${shortly(point[0])}, outside the span asked for (${from} to ${to})`)
        const value = this.value(key, point[1])
        if (!Number.isNaN(value)) points.push([at, value])
      }
    }
    return points
  }

  private async get(
    key: string,
    path: 'query' | 'query_range',
    params: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<{resultType: unknown; result: unknown}> {
    const base = new URL(this.url)
    // A base under a path (a proxy's /prometheus) keeps it; the slash goes on the path, never after a query string.
    if (!base.pathname.endsWith('/')) base.pathname += '/'
    const endpoint = new URL(`api/v1/${path}`, base)
    // Parameters the URL was given (a proxy's ?token=) go with every query; the query's own after them.
    for (const [name, value] of base.searchParams) endpoint.searchParams.append(name, value)
    for (const [name, value] of Object.entries(params)) endpoint.searchParams.set(name, value)
    // The deadline covers reading the answer too: a server can send headers and then stall.
    const deadline = AbortSignal.timeout(this.timeoutMs)
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline
    const why = (error: unknown): string =>
      signal?.aborted
        ? 'stopped by the interrupt'
        : deadline.aborted
          ? `no answer within ${this.timeoutMs / 1000} s`
          : error instanceof AnswerTooLong
            ? `${overCap(this.maxBytes)} (no answer sluice asks for is that long: is ${redactUrl(this.url)} a Prometheus server?)`
            : causeOf(error)
    let response: Response
    let text: string
    try {
      response = await fetch(endpoint, {signal: stop, ...(this.authorization ? {headers: {Authorization: this.authorization}} : {})})
      text = await readBoundedBody(response.body, this.maxBytes)
    } catch (error) {
      throw this.failed(key, why(error))
    }
    let answer: Answer | null = null
    try {
      answer = JSON.parse(text) as Answer
    } catch {
      answer = null
    }
    const isObject = answer !== null && typeof answer === 'object' && !Array.isArray(answer)
    // Prometheus answers a bad query with 400 and says why in the body: say both.
    const said =
      isObject && typeof answer!.error === 'string'
        ? `: ${typeof answer!.errorType === 'string' && answer!.errorType ? `${answer!.errorType}: ` : ''}${oneLine(answer!.error)}`
        : ''
    if (!response.ok) throw new FailedError(this.scrub(`${this.label}: query for ${key} answered HTTP ${response.status}${said}`))
    if (!isObject) throw this.failed(key, answer === null ? 'the answer is not JSON' : 'the answer is not a JSON object')
    if (answer!.status !== 'success')
      throw this.failed(
        key,
        said
          ? said.slice(2)
          : answer!.status === undefined
            ? "the answer has no status, so it is not Prometheus's"
            : `the answer's status is ${shortly(answer!.status)}, not "success"`,
      )
    const data = answer!.data
    if (data === null || typeof data !== 'object' || Array.isArray(data)) throw this.malformed(key, 'no data')
    return data as {resultType: unknown; result: unknown}
  }

  /** A result's series: an array of objects, or the error saying what came instead. */
  private series(key: string, result: unknown): object[] {
    if (!Array.isArray(result)) throw this.malformed(key, `a result that is ${shortly(result)}, not a list of series`)
    if (result.some((s) => s === null || typeof s !== 'object' || Array.isArray(s))) throw this.malformed(key, 'a series that is not an object')
    return result as object[]
  }

  /** A sample's value as Prometheus writes it ("1.5", "NaN", "+Inf"); anything else is an error naming it. */
  private value(key: string, raw: unknown): number {
    const value = parseReading(raw)
    if (value === null) throw this.malformed(key, `a value of ${shortly(raw)}, not a number`)
    return value
  }

  private failed(key: string, why: string): FailedError {
    return new FailedError(this.scrub(`${this.label}: query for ${key} failed: ${why}`))
  }

  private malformed(key: string, what: string): FailedError {
    return this.failed(key, `the answer is not Prometheus's: it has ${what}`)
  }

  private several(key: string, count: number): FailedError {
    return this.failed(key, `it gave ${count} series; expected one for the pool (sum() them in the query)`)
  }

  /** A message with the header's value and the URL's secrets taken out, whatever the server or fetch put in it. */
  private scrub(text: string): string {
    return scrubSecrets(text, this.secrets)
  }
}

/** fetch's own error, with its cause (`fetch failed` says nothing; ECONNREFUSED does). */
function causeOf(error: unknown): string {
  const e = error as {message?: unknown; cause?: {code?: unknown; message?: unknown}}
  const message = typeof e?.message === 'string' ? e.message : String(error)
  const cause = e?.cause && typeof e.cause === 'object' ? (typeof e.cause.code === 'string' ? e.cause.code : e.cause.message) : undefined
  return oneLine(typeof cause === 'string' && cause !== '' && !message.includes(cause) ? `${message} (${cause})` : message)
}

/** Something from the answer, quoted and cut short, for an error. */
function shortly(value: unknown): string {
  const text = value === undefined ? 'nothing' : (JSON.stringify(value) ?? typeof value)
  return oneLine(text.length > 60 ? `${text.slice(0, 59)}…` : text)
}

/** Prometheus's error, on one line, not past a screen's width and unable to drive a terminal: it may quote the query back. */
function oneLine(text: string): string {
  const line = escapeControls(text.replace(/\s+/g, ' ').trim())
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}
