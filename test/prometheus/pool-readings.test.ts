import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {parsePoolMapping} from '../../src/prometheus/mapping.js'
import {PrometheusPoolReadings} from '../../src/prometheus/pool-readings.js'
import {PrometheusApi} from '../../src/prometheus/query.js'
import {poolReadings} from '../../src/wiring/readings.js'
import {envoyQueries, FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'
// The day ends on a minute well in the past, so that `now` (the fake's after-day state) is what instant queries see.
const end = Math.floor(Date.now() / 60_000) * 60 - 3600
const day = {start: new Date((end - 86_400) * 1000), end: new Date(end * 1000)}
const gap: [number, number] = [100, 110]
const flap: [number, number] = [690, 750]

describe('PrometheusPoolReadings against a fake Prometheus on loopback: a day of one-minute points', () => {
  const fake = new FakePrometheus({end, truth, gap, flap, flapTo: 1})
  let url = ''
  const readingsOf = (text = mappingText('envoy', envoyChecks)) =>
    new PrometheusPoolReadings(new PrometheusApi(url), parsePoolMapping('mailbox-prometheus.yaml', text), {nowSeconds: 120})

  beforeAll(async () => {
    url = await fake.listen()
  })
  afterAll(() => fake.close())
  beforeEach(() => {
    fake.failWith = null
    fake.asked.length = 0
  })

  it("returns a period a minute, each the fake's own figures: requests and errors as rate × period, the healthy gauge's mean, latency; none for the gap", async () => {
    const readings = readingsOf()
    const periods = await readings.history(day.start, day.end, 60)
    expect(periods).toHaveLength(1440 - (gap[1] - gap[0]))
    expect(periods[0].at).toBe(end - 86_400)
    expect(periods.some((p) => p.at >= end - 86_400 + gap[0] * 60 && p.at < end - 86_400 + gap[1] * 60)).toBe(false)
    let checked = 0
    for (const p of periods) {
      const i = (p.at - (end - 86_400)) / 60
      const m = fake.minutes[i]
      expect(p.requests).toBeCloseTo(m.offered * 60, 6)
      // The 5xx series exists from the first 5xx: before it, Prometheus has nothing, which is no errors.
      expect(p.errors).toBeCloseTo((m.offered - m.served) * 60, 6)
      expect(p.latency).toBeCloseTo(m.latency, 9)
      const flapping = i >= flap[0] && i < flap[1]
      // Four samples a period: every server for the first half minute, one for the second; the period's edges never see it.
      expect(p.healthy).toBe(flapping ? 4.5 : 8)
      // The period before the flapping hour ends on a sample of 8 too: only the flapping minutes moved.
      expect(p.rotationChanged).toBe(flapping)
      checked++
    }
    expect(checked).toBe(1430)
    expect(periods.filter((p) => p.errors > 0).length).toBeGreaterThan(400)
    expect(periods[0].errors).toBe(0)
    expect(readings.notes).toContain(`requests: Prometheus ${url} had no value for 10 of the 1440 periods of 60 s; they are left out`)

    // A range query with a step of one period from the first period's end (rates) and four a period from its start (the gauge).
    const rates = fake.asked.filter((a) => a.query.startsWith('sum(rate(envoy_cluster_upstream_rq_total'))
    expect(rates.map((a) => a.step)).toEqual([60])
    expect(rates[0].query).toBe(envoyQueries.requests.replace('$window', '60s'))
    const gauge = fake.asked.filter((a) => a.query === envoyQueries.healthy)
    expect(gauge.every((a) => a.step === 15)).toBe(true)
    expect(gauge.reduce((s, a) => s + a.points, 0)).toBe(1440 * 4 + 1)
  })

  it('asks a long window in spans Prometheus answers (it refuses more than 11,000 points), with the same periods as one day', async () => {
    const periods = await readingsOf().history(new Date((end - 3 * 86_400 + 17) * 1000), day.end, 60)
    expect(fake.asked.every((a) => a.path === '/api/v1/query_range' && a.points <= 11_000)).toBe(true)
    // Three days at four samples a minute is 17,281 points of the gauge: one query could not have held them.
    expect(fake.asked.filter((a) => a.query === envoyQueries.healthy).reduce((s, a) => s + a.points, 0)).toBe(3 * 1440 * 4 + 1 - 4)
    expect(periods).toHaveLength(1430)
    expect(periods[0].at).toBe(end - 86_400)
  })

  it('reads the pool now with instant queries over the last two minutes, and the settings the mapping gives with the servers it reads', async () => {
    fake.now = {rps: 750, healthy: 5, servers: 8, errorRate: 0.1}
    const readings = readingsOf()
    const now = await readings.now()
    expect(now.demand).toBeCloseTo(750, 6)
    expect(now.errorRate).toBeCloseTo(0.1, 6)
    expect(now).toMatchObject({healthy: 5, servers: 8})
    const instants = fake.asked.filter((a) => a.path === '/api/v1/query')
    expect(instants.map((a) => a.query).sort()).toEqual(
      [envoyQueries.requests, envoyQueries.errors, envoyQueries.healthy, envoyQueries.servers].map((q) => q.replace('$window', '120s')).sort(),
    )
    const settings = await readings.settings()
    expect(settings).toMatchObject({
      family: 'envoy',
      servers: 8,
      healthy: 5,
      interval: 10,
      fall: null,
      rise: null,
      failoverPercent: 0,
      envoy: {baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, slowStartMinWeightPercent: 10},
      given: {from: 'mailbox-prometheus.yaml', servers: {how: 'read'}},
    })
    expect(settings.names.interval).toBe('checks.interval at mailbox-prometheus.yaml:4:20')
    fake.now = {rps: truth.low, healthy: 8, servers: 8, errorRate: 0}
  })

  it("an error names the query, the server and Prometheus's answer: HTTP 500, Prometheus's own error, several series, a query it cannot parse, no value now", async () => {
    const readings = readingsOf()
    const server = url.replace(/[.]/g, '\\.')
    fake.failWith = {status: 500, body: 'upstream connect error', query: /upstream_rq_total/}
    await expect(readings.history(day.start, day.end, 60)).rejects.toThrow(new RegExp(`^Prometheus ${server}: query for requests answered HTTP 500$`))
    fake.failWith = {
      status: 422,
      body: JSON.stringify({status: 'error', errorType: 'execution', error: 'query processing would load too many samples into memory'}),
      query: /envoy_response_code_class/,
    }
    await expect(readings.history(day.start, day.end, 60)).rejects.toThrow(
      `Prometheus ${url}: query for errors answered HTTP 422: execution: query processing would load too many samples into memory`,
    )
    fake.failWith = {status: 200, body: JSON.stringify({status: 'error', errorType: 'timeout', error: 'query timed out'}), query: /rq_time_sum/}
    await expect(readings.history(day.start, day.end, 60)).rejects.toThrow(`Prometheus ${url}: query for latency failed: timeout: query timed out`)
    fake.failWith = null
    const byZone = readingsOf(mappingText('envoy', envoyChecks).replace(`healthy: '${envoyQueries.healthy}'`, `healthy: '${envoyQueries.healthyByZone}'`))
    await expect(byZone.now()).rejects.toThrow(
      `Prometheus ${url}: query for healthy failed: it gave 2 series; expected one for the pool (sum() them in the query)`,
    )
    const typo = readingsOf(mappingText('envoy', envoyChecks).replace('envoy_cluster_membership_total', 'envoy_cluster_membership_totl'))
    await expect(typo.settings()).rejects.toThrow(
      new RegExp(`^Prometheus ${server}: query for servers answered HTTP 400: bad_data: 1:1: parse error: the fake knows no such query`),
    )
    // A pool of no servers is no pool a scenario can hold.
    fake.now = {rps: truth.low, healthy: 0, servers: 0, errorRate: 0}
    await expect(readings.settings()).rejects.toThrow(
      `Prometheus ${url}: query for servers (mailbox-prometheus.yaml:9:12) read 0; expected a whole number of servers, 1 to 100000`,
    )
    fake.now = {rps: truth.low, healthy: 8, servers: 8, errorRate: 0}
    // Before the day, the fake has nothing: the pool cannot be placed.
    const before = new PrometheusPoolReadings(new PrometheusApi(url), parsePoolMapping('m.yaml', mappingText('envoy', envoyChecks)), {
      now: () => end - 2 * 86_400,
    })
    await expect(before.now()).rejects.toThrow(/query for requests had no value at .+ \(m\.yaml:\d+:\d+\): nothing to say where the pool is now/)
  })

  it('sends the Authorization header from the variable the mapping names, never says its value, and refuses a mapping whose variable is unset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-prom-auth-'))
    const file = join(dir, 'mapping.yaml')
    writeFileSync(file, mappingText('envoy', envoyChecks, 'authorizationEnv: SLUICE_TEST_PROM_AUTH\n'))
    process.env.SLUICE_TEST_PROM_AUTH = 'Bearer prom-secret-marker'
    try {
      const {readings, pool} = poolReadings({kind: 'prometheus', url, mapping: file}, {})
      expect(pool).toBe('mailbox')
      await readings.now()
      expect(fake.asked.length).toBeGreaterThan(0)
      expect(fake.asked.every((a) => a.authorization === 'Bearer prom-secret-marker')).toBe(true)
      fake.failWith = {status: 500, body: 'Bearer prom-secret-marker'}
      const error = await readings.now().then(
        () => null,
        (e: Error) => e,
      )
      expect(error?.message).toMatch(/answered HTTP 500/)
      expect(error?.message).not.toContain('marker')
      expect(readings.source).not.toContain('marker')
      delete process.env.SLUICE_TEST_PROM_AUTH
      expect(() => poolReadings({kind: 'prometheus', url, mapping: file}, {})).toThrow(
        `${file}:11:19: authorizationEnv: $SLUICE_TEST_PROM_AUTH is not set; it holds the Authorization header for ${url}`,
      )
    } finally {
      delete process.env.SLUICE_TEST_PROM_AUTH
    }
  })
})
