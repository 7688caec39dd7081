import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {CloudWatchMetrics} from '../../src/aws/cloudwatch.js'
import {AlbPoolReadings, type AlbReadingsCalls} from '../../src/aws/pool-readings.js'
import {SluiceError} from '../../src/errors.js'
import {HaproxyMetrics} from '../../src/haproxy/metrics.js'
import {HaproxyPoolReadings, inRotation, type SamplingClock} from '../../src/haproxy/pool-readings.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {parsePoolMapping} from '../../src/prometheus/mapping.js'
import {PrometheusMetrics} from '../../src/prometheus/metrics.js'
import {PrometheusPoolReadings} from '../../src/prometheus/pool-readings.js'
import {PrometheusApi} from '../../src/prometheus/query.js'
import type {MetricKind, PoolPort} from '../../src/ports/control-plane.js'
import type {PoolNow, PoolPeriod} from '../../src/ports/pool-readings.js'
import {rateBound, readingBounds} from '../../src/ports/reading-bounds.js'
import {Random} from '../../src/sim/random.js'
import {FakeClock} from '../helpers/fakes.js'
import {capturedBackendRow, capturedServerRow, showStat, showStatHeader, statRow} from '../helpers/haproxy-show-stat.js'

// A seeded fuzzer over what the readings are answered: Prometheus's JSON (well formed with values
// no pool gives, malformed, an HTTP error, an answer without end, one that never comes), HAProxy's
// `show stat` CSV (counters of −357, 1e27, text, rows cut short, a refusal), CloudWatch's
// datapoints (−5, NaN, 1e308, timestamps that do not pair with values, NextTokens without end).
// Each case reads a pool now, its history or a gate, in process, and must end as a valid reading
// or as one of sluice's own errors with a one-line message, never a TypeError; within its deadline;
// and where the oracle beside each generator says a reading is impossible, as an error, never a
// reading to judge. SLUICE_FUZZ_SEED reruns one seed; a failure prints its case and seed.

const seed = Number(process.env.SLUICE_FUZZ_SEED ?? 20261206)
const CASES = {prometheus: 1000, haproxy: 700, cloudwatch: 700}
/** A case that takes longer has hung: every deadline in it is far shorter (the Prometheus one is 40 ms here). */
const LIMIT_MS = 3000

type Rand = () => number
const pick = <T>(r: Rand, list: readonly T[]): T => list[Math.floor(r() * list.length)]
const chance = (r: Rand, p: number) => r() < p

/** Messages sluice's own errors never have: a JavaScript error's words, or a value that was never there. */
const internal = /is not iterable|Cannot read|is not a function|undefined|Array buffer|Unexpected token|Invalid time value|\[object Object\]/

type Outcome = {ok: true; value: unknown} | {ok: false; error: SluiceError}

/** Runs a reading under the watchdog: its value, or the SluiceError it ended with; anything else fails the case. */
async function attempt(label: string, read: () => Promise<unknown>): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined
  const watchdog = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: no end within ${LIMIT_MS} ms`)), LIMIT_MS)
  })
  try {
    return {ok: true, value: await Promise.race([read(), watchdog])}
  } catch (error) {
    if (!(error instanceof SluiceError)) throw new Error(`${label}: threw ${(error as Error).name}: ${(error as Error).message}`)
    if (error.message.includes('\n') || internal.test(error.message)) throw new Error(`${label}: a message that is not sluice's own: ${error.message}`)
    return {ok: false, error}
  } finally {
    clearTimeout(timer)
  }
}

// ---------------------------------------------------------------------------------------------
// Prometheus: a stubbed fetch answers each query as the case says, with fetch's own behaviour on
// abort (before the headers, and while the body streams).

/** A value as Prometheus writes it, with what it is: a number (NaN and ±Infinity included), or not one at all (null). */
type Sample = {raw: unknown; number: number | null}

function goodSample(r: Rand, low: number, high: number, whole = false): Sample {
  const v = low + r() * (high - low)
  const n = whole ? Math.round(v) : Math.round(v * 1000) / 1000
  return {raw: String(n), number: n}
}

function nastySample(r: Rand): Sample {
  return pick(r, [
    {raw: '-5', number: -5},
    {raw: '-0.001', number: -0.001},
    {raw: 'NaN', number: NaN},
    {raw: '+Inf', number: Infinity},
    {raw: '-Inf', number: -Infinity},
    {raw: '1e308', number: 1e308},
    {raw: '1e27', number: 1e27},
    {raw: '2000000', number: 2_000_000},
    {raw: '7.5', number: 7.5},
    {raw: '0', number: 0},
    {raw: '', number: null},
    {raw: 'abc', number: null},
    {raw: '0x10', number: null},
    {raw: null, number: null},
    {raw: {}, number: null},
    {raw: [], number: null},
    {raw: true, number: null},
    {raw: 5, number: 5},
  ] satisfies Sample[])
}

type Answer =
  | {kind: 'value'; sample: Sample}
  | {kind: 'scalar'; sample: Sample}
  | {kind: 'empty'}
  | {kind: 'several'; sample: Sample}
  | {kind: 'matrix-instead'}
  | {kind: 'malformed'; body: string}
  | {kind: 'http'; status: number; body: string}
  | {kind: 'endless'}
  | {kind: 'stall-headers'}
  | {kind: 'stall-body'}

const malformedBodies = [
  '{}',
  '[]',
  'null',
  '5',
  '"success"',
  '{"status":"success"',
  'not json at all',
  '{"status":"success","data":null}',
  '{"status":"success","data":{"resultType":"vector","result":5}}',
  '{"status":"success","data":{"resultType":"vector","result":[5]}}',
  '{"status":"success","data":{"resultType":"vector","result":[{"value":5}]}}',
  '{"status":"success","data":{"resultType":"vector","result":[{"value":[1]}]}}',
  '{"status":"success","data":{"resultType":"scalar","result":5}}',
  '{"status":"success","data":{"resultType":"matrix","result":[{"values":[5]}]}}',
  '{"status":"success","data":{"resultType":"matrix","result":[{"values":5}]}}',
  '{"status":"success","data":{"resultType":"matrix","result":[{"values":[["x","1"]]}]}}',
  '{"status":"error"}',
  '{"status":"error","error":{"nested":true}}',
  '{"status":"error","errorType":"timeout","error":"query timed out"}',
  '{"status":5,"data":{}}',
]

function answerFor(r: Rand, good: () => Sample): Answer {
  const u = r()
  if (u < 0.72) return {kind: 'value', sample: chance(r, 0.8) ? good() : nastySample(r)}
  if (u < 0.76) return {kind: 'scalar', sample: chance(r, 0.7) ? good() : nastySample(r)}
  if (u < 0.8) return {kind: 'empty'}
  if (u < 0.83) return {kind: 'several', sample: good()}
  if (u < 0.85) return {kind: 'matrix-instead'}
  if (u < 0.93) return {kind: 'malformed', body: pick(r, malformedBodies)}
  if (u < 0.96)
    return {
      kind: 'http',
      status: pick(r, [400, 401, 422, 500, 503]),
      body: pick(r, ['oops', '{"status":"error","errorType":"bad_data","error":"parse error"}', '']),
    }
  if (u < 0.975) return {kind: 'endless'}
  if (u < 0.9875) return {kind: 'stall-headers'}
  return {kind: 'stall-body'}
}

/** A Response that fetch would give for `answer` to a query asked at `time` (instant) or over `span` (range), honouring the abort signal as fetch does. */
function respond(answer: Answer, signal: AbortSignal | undefined, at: {time: number} | {start: number; end: number; step: number}): Promise<Response> {
  const json = (body: unknown) => Promise.resolve(new Response(JSON.stringify(body), {status: 200}))
  const range = 'step' in at
  const times = range ? Array.from({length: Math.floor((at.end - at.start) / at.step + 1e-9) + 1}, (_, k) => at.start + k * at.step) : [at.time]
  switch (answer.kind) {
    case 'value':
      return range
        ? json({status: 'success', data: {resultType: 'matrix', result: [{metric: {}, values: times.map((t) => [t, answer.sample.raw])}]}})
        : json({status: 'success', data: {resultType: 'vector', result: [{metric: {}, value: [at.time, answer.sample.raw]}]}})
    case 'scalar':
      return json({status: 'success', data: {resultType: 'scalar', result: [times[0], answer.sample.raw]}})
    case 'empty':
      return json({status: 'success', data: {resultType: range ? 'matrix' : 'vector', result: []}})
    case 'several': {
      const one = range ? {values: times.map((t) => [t, answer.sample.raw])} : {value: [times[0], answer.sample.raw]}
      return json({status: 'success', data: {resultType: range ? 'matrix' : 'vector', result: [one, one]}})
    }
    case 'matrix-instead':
      return json({status: 'success', data: {resultType: range ? 'vector' : 'matrix', result: []}})
    case 'malformed':
      return Promise.resolve(new Response(answer.body, {status: 200}))
    case 'http':
      return Promise.resolve(new Response(answer.body, {status: answer.status}))
    case 'endless': {
      const chunk = new TextEncoder().encode('[1,"1"],'.repeat(8192))
      let first = true
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(first ? new TextEncoder().encode('{"status":"success","data":{"resultType":"matrix","result":[{"values":[') : chunk)
          first = false
        },
      })
      return Promise.resolve(new Response(body, {status: 200}))
    }
    case 'stall-headers':
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), {once: true}))
    case 'stall-body': {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"status":'))
          signal?.addEventListener('abort', () => controller.error(signal.reason), {once: true})
        },
        pull: () => new Promise(() => undefined),
      })
      return Promise.resolve(new Response(body, {status: 200}))
    }
  }
}

/** What a strict instant read gives for an answer: a number, nothing, or an error. */
function strictOutcome(a: Answer): number | 'none' | 'error' {
  if (a.kind === 'value' || a.kind === 'scalar') return a.sample.number === null ? 'error' : a.sample.number
  if (a.kind === 'empty') return 'none'
  return 'error'
}

/** What a gate's (lenient) instant read gives: another type is no data, several series the first; NaN is no data. */
function lenientOutcome(a: Answer): number | null | 'error' {
  if (a.kind === 'value' || a.kind === 'scalar' || a.kind === 'several')
    return a.sample.number === null ? 'error' : Number.isNaN(a.sample.number) ? null : a.sample.number
  if (a.kind === 'empty' || a.kind === 'matrix-instead') return null
  if (a.kind === 'malformed') {
    // A well-formed answer of another type (a matrix) is no data to a gate, whatever it holds.
    const body = (() => {
      try {
        return JSON.parse(a.body) as {status?: unknown; data?: {resultType?: unknown}}
      } catch {
        return null
      }
    })()
    const data = body?.data
    if (body?.status === 'success' && data && typeof data === 'object' && !Array.isArray(data) && data.resultType !== 'vector' && data.resultType !== 'scalar')
      return null
  }
  return 'error'
}

const within = (v: number, low: number, high: number) => Number.isFinite(v) && v >= low && v <= high
const whole = (v: number, low: number, high: number) =>
  Number.isFinite(v) && Math.abs(v - Math.round(v)) <= 1e-6 && Math.round(v) >= low && Math.round(v) <= high

const mappingYaml = `pool: mailbox
family: envoy
checks: {interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}
queries:
  requests: q_requests[$window]
  errors: q_errors[$window]
  healthy: q_healthy
  servers: q_servers
  latency: q_latency[$window]
`
const mapping = parsePoolMapping('fuzz-mapping.yaml', mappingYaml)
const base = 'http://prometheus.fuzz:9090'

/** The answers of the case now running, by query name; the stubbed fetch reads them. */
let answers: Record<string, Answer> = {}
const realFetch = globalThis.fetch

function stubFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const url = new URL(input instanceof Request ? input.url : String(input))
  const name = /^q_(\w+)/.exec(url.searchParams.get('query') ?? '')?.[1] ?? ''
  const answer = answers[name] ?? {kind: 'empty'}
  const num = (k: string) => Number(url.searchParams.get(k))
  const at = url.pathname.endsWith('query_range') ? {start: num('start'), end: num('end'), step: num('step')} : {time: num('time')}
  return respond(answer, init?.signal ?? undefined, at)
}

const api = () => new PrometheusApi(base, 'Bearer fuzz-token-value', {maxBytes: 256 * 1024, timeoutMs: 40})

async function prometheusCase(n: number): Promise<string> {
  const random = new Random(seed + n)
  const r: Rand = () => random.next()
  const label = `prometheus case ${n} (SLUICE_FUZZ_SEED=${seed} case ${n})`
  const what = pick(r, ['now', 'now', 'settings', 'history', 'gate'] as const)
  if (what === 'gate') {
    const kind = pick(r, ['error-rate', 'request-rate', 'latency-p99', 'healthy-targets'] as const satisfies readonly MetricKind[])
    const goods: Record<MetricKind, () => Sample> = {
      'error-rate': () => goodSample(r, 0, 100),
      'request-rate': () => goodSample(r, 0, 5000),
      'latency-p99': () => goodSample(r, 0, 5000),
      'healthy-targets': () => goodSample(r, 0, 100),
    }
    answers = {[kind.replace('-', '_')]: answerFor(r, goods[kind]), request_rate: answerFor(r, goods['request-rate'])}
    const counted = chance(r, 0.5)
    const queries: Partial<Record<MetricKind, string>> = {[kind]: `q_${kind.replace('-', '_')}`}
    if (counted) queries['request-rate'] = 'q_request_rate'
    const metrics = new PrometheusMetrics(base, queries, new FakeClock())
    ;(metrics as unknown as {api: PrometheusApi}).api = api()
    const window = pick(r, [10, 60, 300])
    const out = await attempt(label, () => metrics.read(kind, window))
    // The oracle: the value's own read, and the rate's where it is counted.
    const value = lenientOutcome(answers[kind.replace('-', '_')])
    const rate = counted && kind !== 'healthy-targets' ? (kind === 'request-rate' ? value : lenientOutcome(answers.request_rate)) : null
    const bound: Record<MetricKind, number> = {'error-rate': 105, 'healthy-targets': 105, 'request-rate': 1e9, 'latency-p99': 86_400_000}
    const impossible = value === 'error' || rate === 'error' || (value !== null && !within(value, 0, bound[kind])) || (rate !== null && !within(rate, 0, 1e9))
    if (impossible) {
      expect(out.ok, `${label}: ${JSON.stringify(answers)} read as ${JSON.stringify(out)}`).toBe(false)
      return 'refused'
    }
    expect(out.ok, `${label}: ${JSON.stringify(answers)}: ${out.ok ? '' : out.error.message}`).toBe(true)
    const reading = (out as {value: {value: number | null; requests: number | null}}).value
    expect(reading.value).toBe(value === null ? null : kind === 'error-rate' || kind === 'healthy-targets' ? Math.min(100, value) : value)
    return 'read'
  }
  if (what === 'history') {
    // Ten one-minute periods; each query a series over them (a few with a point of another kind).
    const good: Record<string, () => Sample> = {
      requests: () => goodSample(r, 0, 3000),
      errors: () => goodSample(r, 0, 100),
      healthy: () => goodSample(r, 0, 20, true),
      latency: () => goodSample(r, 0, 2),
    }
    answers = Object.fromEntries(Object.entries(good).map(([k, g]) => [k, answerFor(r, g)]))
    const start = new Date(1_700_000_000_000 - (1_700_000_000_000 % 60_000))
    const out = await attempt(label, () => new PrometheusPoolReadings(api(), mapping).history(start, new Date(start.getTime() + 600_000), 60))
    const limits: Record<string, [number, number]> = {requests: [0, 1e9], errors: [0, 1e9], healthy: [0, 1e5], latency: [0, 86_400]}
    const bad = Object.entries(answers).some(([k, a]) => {
      if (a.kind === 'empty') return false
      if (a.kind !== 'value') return true
      const v = a.sample.number
      return v === null || (!Number.isNaN(v) && !within(v, ...limits[k]))
    })
    if (bad) {
      expect(out.ok, `${label}: ${JSON.stringify(answers)} read as ${JSON.stringify(out).slice(0, 300)}`).toBe(false)
      return 'refused'
    }
    expect(out.ok, `${label}: ${out.ok ? '' : out.error.message}`).toBe(true)
    for (const p of (out as {value: PoolPeriod[]}).value) {
      expect(p.requests).toBeGreaterThan(0)
      expect(within(p.requests, 0, 1e9 * 60) && within(p.errors, 0, p.requests)).toBe(true)
      if (p.healthy !== null) expect(within(p.healthy, 0, 1e5)).toBe(true)
      if (p.latency !== null) expect(within(p.latency, 0, 86_400)).toBe(true)
    }
    return 'read'
  }
  // now, or the settings (servers and those in rotation now).
  const servers = answerFor(r, () => goodSample(r, 1, 20, true))
  const serverCount = servers.kind === 'value' && servers.sample.number !== null ? servers.sample.number : 8
  answers = {
    requests: answerFor(r, () => goodSample(r, 0, 8 * serverCount * 100)),
    errors: answerFor(r, () => goodSample(r, 0, 50)),
    healthy: answerFor(r, () => goodSample(r, 0, Math.max(0, Math.min(serverCount, 1e5)), true)),
    servers,
  }
  const readings = new PrometheusPoolReadings(api(), mapping, {now: () => 1_700_000_000})
  const out = await attempt(label, () => (what === 'now' ? readings.now() : readings.settings()))
  const o = Object.fromEntries(Object.entries(answers).map(([k, a]) => [k, strictOutcome(a)])) as Record<string, number | 'none' | 'error'>
  const s = o.servers
  const serversOk = typeof s === 'number' && whole(s, 1, readingBounds.maxServers)
  const count = serversOk ? Math.round(s) : 0
  const healthyOk = typeof o.healthy === 'number' && !Number.isNaN(o.healthy) && whole(o.healthy, 0, count)
  const requestsOk = typeof o.requests === 'number' && within(o.requests, 0, rateBound(count))
  const errorsOk = o.errors === 'none' || (typeof o.errors === 'number' && within(o.errors, 0, rateBound(count)))
  const possible = what === 'now' ? serversOk && healthyOk && requestsOk && errorsOk : serversOk && healthyOk
  if (!possible) {
    expect(out.ok, `${label} (${what}): ${JSON.stringify(answers)} read as ${JSON.stringify(out)}`).toBe(false)
    return 'refused'
  }
  expect(out.ok, `${label} (${what}): ${JSON.stringify(answers)}: ${out.ok ? '' : out.error.message}`).toBe(true)
  if (what === 'now') {
    const demand = o.requests as number
    const errors = o.errors === 'none' ? 0 : (o.errors as number)
    expect((out as {value: PoolNow}).value).toEqual({
      at: 1_700_000_000,
      demand,
      errorRate: demand > 0 ? Math.min(1, errors / demand) : 0,
      servers: count,
      healthy: Math.round(o.healthy as number),
    })
  } else expect((out as {value: {servers: number; healthy: number}}).value).toMatchObject({servers: count, healthy: Math.round(o.healthy as number)})
  return 'read'
}

// ---------------------------------------------------------------------------------------------
// HAProxy's `show stat`: a RuntimeApi whose answers the case writes, on a fake clock.

/** A cell of `show stat` and whether HAProxy could have written it (a whole number, 0 to `most`, or empty). */
function cell(r: Rand, good: () => number, nastiness: number): string {
  if (!chance(r, nastiness)) return String(good())
  return pick(r, ['-357', '1000000000000000000000000000', '9007199254740993', '12.5', 'abc', '', ' ', '-0', '1e5', '0x1f'])
}
const validCell = (c: string | undefined, most = Number.MAX_SAFE_INTEGER) => {
  const t = (c ?? '').trim()
  return t === '' || (/^\d+$/.test(t) && Number(t) <= most)
}
const cellNumber = (c: string | undefined) => ((c ?? '').trim() === '' ? 0 : Number(c))

class MsClock implements SamplingClock {
  ms = 1_700_000_000_000
  now(): number {
    return this.ms
  }
  async sleep(ms: number): Promise<void> {
    this.ms += Math.max(0, ms)
  }
}

const statuses = ['UP', 'UP 1/3', 'DOWN', 'DOWN 1/2', 'MAINT', 'DRAIN', 'no check', 'NOLB']
const columns = showStatHeader.replace(/^#\s*/, '').split(',')
const col = (row: string, name: string) => row.split(',')[columns.indexOf(name)]

async function haproxyCase(n: number): Promise<string> {
  const random = new Random(seed + 100_000 + n)
  const r: Rand = () => random.next()
  const label = `haproxy case ${n} (SLUICE_FUZZ_SEED=${seed} case ${n})`
  const counters = ['stot', 'hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx', 'req_tot', 'hrsp_5xx', 'cli_abrt']
  // Half the cases clean answers (their readings judged by the oracle), half with a few cells no HAProxy writes.
  const nastiness = chance(r, 0.5) ? 0 : 0.04
  const serverCount = chance(r, 0.05) ? 0 : 1 + Math.floor(r() * 12)
  const servers = Array.from({length: serverCount}, (_, i) =>
    statRow(capturedServerRow, {
      svname: `s${i}`,
      status: pick(r, statuses),
      ...Object.fromEntries(['stot', 'hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx'].map((c) => [c, cell(r, () => Math.floor(r() * 1e6), nastiness)])),
    }),
  )
  // Backend rows, one a sample: counters that grow (or, now and then, go back: a reload), or jump by orders of magnitude.
  let level = Math.floor(r() * 1e6)
  const backendRows = Array.from({length: 6}, () => {
    level = chance(r, 0.05) ? Math.floor(r() * 100) : level + Math.floor(r() * (chance(r, 0.04) ? 1e15 : 5000))
    return statRow(capturedBackendRow, {
      ...Object.fromEntries(counters.map((c) => [c, cell(r, () => Math.max(0, level - Math.floor(r() * level * 0.5)), nastiness)])),
      act: cell(r, () => Math.floor(r() * (serverCount + 1)), nastiness),
      rtime: cell(r, () => Math.floor(r() * 2000), nastiness),
    })
  })
  const refusal = chance(r, 0.04) ? pick(r, ['Unknown command.\n', `${showStatHeader}\n\n`, 'garbage,with,commas\nmore\n']) : null
  let backendAsked = 0
  const runtime = new RuntimeApi('/run/haproxy/fuzz.sock')
  runtime.send = (command) => {
    if (/^show stat (app|-1) 2 -1$/.test(command)) return Promise.resolve(refusal ?? showStat([backendRows[Math.min(backendAsked++, backendRows.length - 1)]]))
    if (/^show stat (app|-1) 4 -1$/.test(command)) return Promise.resolve(showStat([statRow(capturedBackendRow, {}), ...servers]))
    return Promise.resolve('Unknown command.\n')
  }
  if (chance(r, 0.5)) {
    // The pool now: two samples a second apart, and the servers.
    const out = await attempt(label, () => new HaproxyPoolReadings(runtime, 'app', {clock: new MsClock(), nowSeconds: 1}).now())
    const [first, second] = backendRows
    const read = (row: string) =>
      ['stot', 'hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx'].every((c) => validCell(col(row, c))) &&
      validCell(col(row, 'act'), 1e5) &&
      (cellNumber(col(row, 'stot')) === 0 || validCell(col(row, 'rtime'), 86_400_000))
    const serverCells = servers.every((row) => ['stot', 'hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx'].every((c) => validCell(col(row, c))))
    let possible = refusal === null && read(first) && read(second) && serverCells && serverCount > 0
    // A counter that went back was reset (HAProxy reloaded): it counts from its new value.
    const increase = (a: number, b: number) => (b >= a ? b - a : b)
    const answered = (row: string) => ['hrsp_1xx', 'hrsp_2xx', 'hrsp_3xx', 'hrsp_4xx'].reduce((sum, c) => sum + cellNumber(col(row, c)), 0)
    const requests = increase(cellNumber(col(first, 'stot')), cellNumber(col(second, 'stot')))
    const served = increase(answered(first), answered(second))
    if (possible && requests > rateBound(serverCount)) possible = false
    if (!possible) {
      expect(out.ok, `${label}: read as ${JSON.stringify(out)}`).toBe(false)
      return 'refused'
    }
    expect(out.ok, `${label}: ${out.ok ? '' : out.error.message}`).toBe(true)
    expect((out as {value: PoolNow}).value).toEqual({
      at: 1_700_000_001,
      demand: requests,
      errorRate: requests > 0 ? Math.min(1, Math.max(0, requests - served) / requests) : 0,
      servers: serverCount,
      healthy: servers.filter((row) => inRotation(col(row, 'status'))).length,
    })
    return 'read'
  }
  // A gate on the backend's counters: five samples over the window.
  const kind = pick(r, ['error-rate', 'request-rate'] as const)
  const out = await attempt(label, () => new HaproxyMetrics(runtime, new FakeClock(), {app: 'app'}, new Map<string, PoolPort>()).read(kind, 60, 'app'))
  const used = backendRows.slice(0, 5)
  let possible = refusal === null && used.every((row) => ['req_tot', 'hrsp_5xx', 'cli_abrt'].every((c) => validCell(col(row, c))))
  const [then, later] = [used[0], used[4]]
  const requests = cellNumber(col(later, 'req_tot')) - cellNumber(col(then, 'req_tot'))
  const errors = cellNumber(col(later, 'hrsp_5xx')) + cellNumber(col(later, 'cli_abrt')) - cellNumber(col(then, 'hrsp_5xx')) - cellNumber(col(then, 'cli_abrt'))
  // Requests no pool could be sent in the window, whichever rate is read from them.
  if (possible && requests > 0 && errors >= 0 && requests / 60 > 1e9) possible = false
  if (!possible) {
    expect(out.ok, `${label}: read as ${JSON.stringify(out)}`).toBe(false)
    return 'refused'
  }
  expect(out.ok, `${label}: ${out.ok ? '' : out.error.message}`).toBe(true)
  const reading = (out as {value: {value: number | null; requests: number | null}}).value
  if (requests < 0 || errors < 0) expect(reading).toEqual({value: null, requests: null})
  else if (requests === 0) expect(reading).toEqual({value: null, requests: 0})
  else expect(reading).toEqual({value: kind === 'request-rate' ? requests / 60 : Math.min(100, (errors / requests) * 100), requests})
  return 'read'
}

// ---------------------------------------------------------------------------------------------
// CloudWatch: GetMetricData answers as the case writes them, through the adapters' own paging.

const metricIds = ['requests', 'target5xx', 'elb5xx', 'healthy', 'healthyLeast', 'healthyMost', 'latency'] as const
const kindOf = (id: string): 'count' | 'servers' | 'seconds' => (id === 'latency' || id === 'p99' ? 'seconds' : id.startsWith('healthy') ? 'servers' : 'count')

function datapoint(r: Rand, id: string, nastiness: number): unknown {
  if (!chance(r, nastiness)) return kindOf(id) === 'count' ? Math.floor(r() * 60_000) : kindOf(id) === 'servers' ? Math.floor(r() * 10) : r() * 2
  return pick(r, [-5, -0.5, NaN, Infinity, -Infinity, 1e308, 1e12 * 60, 2e5, '5', null, undefined])
}
const possibleDatapoint = (id: string, v: unknown) =>
  typeof v === 'number' && within(v, 0, kindOf(id) === 'count' ? 1e9 * 60 : kindOf(id) === 'servers' ? 1e5 : 86_400)

async function cloudwatchCase(n: number): Promise<string> {
  const random = new Random(seed + 200_000 + n)
  const r: Rand = () => random.next()
  const label = `cloudwatch case ${n} (SLUICE_FUZZ_SEED=${seed} case ${n})`
  const gate = chance(r, 0.35)
  // Half the cases clean datapoints, half with a few CloudWatch would answer back if they were put.
  const nastiness = chance(r, 0.5) ? 0 : 0.05
  const ids: readonly string[] = gate ? ['requests', 'target5xx', 'elb5xx', 'p99'] : metricIds
  const end = Date.now() - (Date.now() % 60_000)
  const minutes = Array.from({length: 5}, (_, i) => new Date(end - (5 - i) * 60_000))
  // Pages: one, two, the same token again, or tokens without end.
  const paging = pick(r, ['one', 'one', 'one', 'two', 'repeat', 'endless'] as const)
  let impossible = paging === 'repeat' || paging === 'endless'
  const pages = Array.from({length: paging === 'two' ? 2 : 1}, () =>
    [...ids, ...(chance(r, 0.1) ? ['unknown'] : [])].map((id) => {
      const values = minutes.map(() => datapoint(r, id, nastiness))
      const timestamps = chance(r, 0.01) ? minutes.slice(1) : minutes
      const known = id !== 'unknown'
      if (known && (timestamps.length !== values.length || values.some((v) => !possibleDatapoint(id, v)))) impossible = true
      return {Id: id, Timestamps: timestamps, Values: values as number[]}
    }),
  )
  let call = 0
  const cloudwatch = {
    getMetricData: async () => {
      const page = pages[Math.min(call, pages.length - 1)]
      call++
      const token = paging === 'two' && call === 1 ? 'next' : paging === 'repeat' ? 'same' : paging === 'endless' ? `t${call}` : undefined
      return {MetricDataResults: page, NextToken: token}
    },
  }
  const targets = Array.from({length: chance(r, 0.05) ? 0 : 1 + Math.floor(r() * 10)}, () => ({
    TargetHealth: {State: pick(r, ['healthy', 'unhealthy', 'draining'])},
  }))
  // Health states as the fuzz picks them, any string: the narrow interface's enum says what AWS sends, not what reaches sluice.
  const elbv2 = {
    describeTargetHealth: async () => ({TargetHealthDescriptions: targets}),
    describeTargetGroups: async () => ({}),
    describeTargetGroupAttributes: async () => ({}),
  } as unknown as AlbReadingsCalls['elbv2']
  const scope = {loadBalancer: 'app/fuzz/1', targetGroup: 'arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/fuzz/2'}
  if (gate) {
    const kind = pick(r, ['error-rate', 'request-rate', 'latency-p99'] as const)
    const clock = new FakeClock()
    clock.t = end / 1000
    const metrics = new CloudWatchMetrics(cloudwatch, clock, {loadBalancer: scope.loadBalancer, loadBalancers: {}, targetGroups: {}, groups: new Map()})
    const out = await attempt(label, () => metrics.read(kind, 300))
    // Only the metrics the kind asks for are read; the oracle looks at those.
    const asked = ['requests', ...(kind === 'error-rate' ? ['target5xx', 'elb5xx'] : kind === 'latency-p99' ? ['p99'] : [])]
    const readImpossible =
      paging === 'repeat' ||
      paging === 'endless' ||
      pages.some((page) => page.some((res) => asked.includes(res.Id) && res.Values.some((v) => !possibleDatapoint(res.Id, v))))
    if (readImpossible) {
      expect(out.ok, `${label}: read as ${JSON.stringify(out)}`).toBe(false)
      return 'refused'
    }
    expect(out.ok, `${label}: ${out.ok ? '' : out.error.message}`).toBe(true)
    const reading = (out as {value: {value: number | null; requests: number | null}}).value
    if (reading.value !== null) expect(within(reading.value, 0, kind === 'request-rate' ? 1e9 : kind === 'error-rate' ? 100 : 86_400_000)).toBe(true)
    return 'read'
  }
  const readings = new AlbPoolReadings({cloudwatch, elbv2}, scope)
  const now = chance(r, 0.5)
  const out = await attempt(label, () => (now ? readings.now() : readings.history(new Date(end - 5 * 60_000), new Date(end), 60)))
  if (impossible || (now && targets.length === 0)) {
    expect(out.ok, `${label}: read as ${JSON.stringify(out).slice(0, 300)}`).toBe(false)
    return 'refused'
  }
  if (now) {
    // A pool now may still be refused for demand past what its targets could be sent, or no requests at all.
    if (!out.ok) {
      expect(out.error.message).toMatch(/expected requests a second|no RequestCount/)
      return 'refused'
    }
    const p = (out as {value: PoolNow}).value
    expect(within(p.demand, 0, rateBound(p.servers)) && within(p.errorRate, 0, 1) && whole(p.healthy, 0, p.servers)).toBe(true)
    return 'read'
  }
  expect(out.ok, `${label}: ${out.ok ? '' : out.error.message}`).toBe(true)
  for (const p of (out as {value: PoolPeriod[]}).value) expect(within(p.requests, 0, 6e10) && within(p.errors, 0, 1.2e11)).toBe(true)
  return 'read'
}

describe(`fuzzing the readings: ${CASES.prometheus} Prometheus answers, ${CASES.haproxy} show stat answers, ${CASES.cloudwatch} CloudWatch answers (seed ${seed})`, () => {
  beforeAll(() => {
    globalThis.fetch = stubFetch
  })
  afterAll(() => {
    globalThis.fetch = realFetch
  })

  it('every answer is a valid reading or a named error; none hangs; none impossible is read', async () => {
    const counts: Record<string, Record<string, number>> = {prometheus: {}, haproxy: {}, cloudwatch: {}}
    const tally = (source: string, outcome: string) => (counts[source][outcome] = (counts[source][outcome] ?? 0) + 1)
    for (let n = 0; n < CASES.prometheus; n++) tally('prometheus', await prometheusCase(n))
    for (let n = 0; n < CASES.haproxy; n++) tally('haproxy', await haproxyCase(n))
    for (let n = 0; n < CASES.cloudwatch; n++) tally('cloudwatch', await cloudwatchCase(n))
    console.log(`readings fuzz seed ${seed}: ${JSON.stringify(counts)}`)
    // Both outcomes in numbers for every source: a fuzzer whose every case is refused (or read) exercises one path.
    for (const source of Object.keys(counts)) {
      expect(counts[source].read, source).toBeGreaterThan(50)
      expect(counts[source].refused, source).toBeGreaterThan(50)
    }
  }, 120_000)
})
