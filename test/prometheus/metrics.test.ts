import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PrometheusMetrics} from '../../src/prometheus/metrics.js'
import {FakeClock} from '../helpers/fakes.js'

describe('Prometheus gate metrics', () => {
  let url = ''
  const queries: string[] = []
  const authorizations: Array<string | undefined> = []
  const answers: Record<string, unknown> = {}
  const server = createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams.get('query')!
    queries.push(q)
    authorizations.push(req.headers.authorization)
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(answers[q] ?? {status: 'error', error: `unexpected query ${q}`}))
  })
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  it('fills in the window and pool, reads a vector, and treats an empty result as no data', async () => {
    const metrics = new PrometheusMetrics(url, {'error-rate': 'errors{pool="$pool"}[$window]', 'latency-p99': 'p99[$window]'}, new FakeClock())
    answers['errors{pool="west"}[60s]'] = {status: 'success', data: {resultType: 'vector', result: [{value: [0, '1.75']}]}}
    answers['p99[30s]'] = {status: 'success', data: {resultType: 'vector', result: []}}
    expect((await metrics.read('error-rate', 60, 'west')).value).toBe(1.75)
    expect((await metrics.read('latency-p99', 30)).value).toBeNull()
    expect(queries).toEqual(['errors{pool="west"}[60s]', 'p99[30s]'])
  })

  it("counts a reading's requests as the request-rate query times the window, and cannot count without one", async () => {
    const counting = new PrometheusMetrics(url, {'error-rate': 'e[$window]', 'request-rate': 'r{pool="$pool"}[$window]'}, new FakeClock())
    answers['e[30s]'] = {status: 'success', data: {resultType: 'vector', result: [{value: [0, '4']}]}}
    answers['r{pool="canary"}[30s]'] = {status: 'success', data: {resultType: 'vector', result: [{value: [0, '0.5']}]}}
    expect(await counting.read('error-rate', 30, 'canary')).toEqual({value: 4, requests: 15})
    expect(await counting.read('request-rate', 30, 'canary')).toEqual({value: 0.5, requests: 15})
    const blind = new PrometheusMetrics(url, {'error-rate': 'e[$window]'}, new FakeClock())
    expect(await blind.read('error-rate', 30)).toEqual({value: 4, requests: null})
  })

  it('sends the Authorization header it was given (from the environment), and never names it', async () => {
    const metrics = new PrometheusMetrics(url, {'error-rate': 'authed'}, new FakeClock(), 'Bearer prom-token-marker')
    answers.authed = {status: 'success', data: {resultType: 'vector', result: [{value: [0, '0']}]}}
    authorizations.length = 0
    expect((await metrics.read('error-rate', 60)).value).toBe(0)
    expect(authorizations).toEqual(['Bearer prom-token-marker'])
    expect(metrics.label).not.toContain('marker')
  })

  it("a server that accepts and never answers is cut off by the run's signal, without waiting for the 10 s deadline", async () => {
    const quiet = createServer(() => {})
    await new Promise<void>((r) => quiet.listen(0, '127.0.0.1', r))
    try {
      const metrics = new PrometheusMetrics(`http://127.0.0.1:${(quiet.address() as AddressInfo).port}`, {'error-rate': 'errors'}, new FakeClock())
      const stop = new AbortController()
      setTimeout(() => stop.abort(), 100)
      const started = Date.now()
      await expect(metrics.read('error-rate', 60, undefined, stop.signal)).rejects.toThrow(
        /Prometheus http:\/\/127\.0\.0\.1:\d+: query for error-rate failed: stopped by the interrupt/,
      )
      expect(Date.now() - started).toBeLessThan(2_000)
    } finally {
      quiet.closeAllConnections()
      await new Promise<void>((r) => quiet.close(() => r()))
    }
  })

  it('a failed query or a missing query is an error, never a value', async () => {
    const metrics = new PrometheusMetrics(url, {'error-rate': 'broken'}, new FakeClock())
    await expect(metrics.read('error-rate', 60)).rejects.toThrow(/query for error-rate failed: unexpected query broken/)
    await expect(metrics.read('request-rate', 60)).rejects.toThrow(/no query for request-rate/)
  })
})
