import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {calibrate, figureRows} from '../../src/calibrate/calibrate.js'
import {familyOf} from '../../src/assess/assess.js'
import {parsePoolMapping} from '../../src/prometheus/mapping.js'
import {PrometheusPoolReadings} from '../../src/prometheus/pool-readings.js'
import type {Points, PrometheusApi} from '../../src/prometheus/query.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

/**
 * Prometheus as a function, no server: every query answers from the same two hours of a pool of 4
 * servers of 50 rps each, offered 150 rps rising to 300, the rest failing; 4 in rotation.
 */
const api = {
  label: 'Prometheus http://prometheus.test:9090',
  instant: (key: string) => Promise.resolve(key === 'healthy' ? 4 : key === 'servers' ? 4 : key === 'requests' ? 150 : 0),
  range: (key: string, _query: string, span: {start: number; end: number; step: number}): Promise<Points> => {
    const points: Points = []
    for (let t = span.start; t <= span.end; t += span.step) {
      const i = (t - span.start) / 60
      const offered = 150 + 150 * Math.min(1, i / 90)
      const served = Math.min(offered, 200)
      const value = key === 'requests' ? offered : key === 'errors' ? offered - served : key === 'latency' ? (offered > 200 ? 0.5 : 0.05) : 4
      points.push([t, value])
    }
    return Promise.resolve(points)
  },
} as unknown as PrometheusApi

const queries = `queries:
  requests: sum(rate(rq_total[$window]))
  errors: sum(rate(rq_5xx[$window]))
  healthy: sum(up_hosts)
  servers: 4
  latency: sum(rate(rq_seconds_sum[$window])) / sum(rate(rq_seconds_count[$window]))
`

async function calibrated(family: string, checks: string) {
  const mapping = parsePoolMapping('web-prometheus.yaml', `pool: web\nfamily: ${family}\nchecks: ${checks}\n${queries}`)
  const readings = new PrometheusPoolReadings(api, mapping)
  const end = new Date(Date.UTC(2026, 11, 4, 8, 0, 0))
  const c = await calibrate(readings, {start: new Date(end.getTime() - 7200_000), end, period: 60, pool: 'web', name: `calibrated-${family}`})
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-prom-family-')), `${family}.yaml`)
  writeFileSync(file, c.scenario)
  return {c, scenario: loadScenario(file).scenario}
}

describe('calibrate from a Prometheus mapping: each family written as the simulator models it, every setting said to be given', () => {
  it("envoy: outlier detection as the scenario's healthCheck, the panic threshold, ejection cap and slow start as its setup", async () => {
    const {c, scenario} = await calibrated(
      'envoy',
      '{interval: 5, baseEjection: 20, maxEjection: 200, maxEjectionPercent: 30, panicThreshold: 50, slowStart: 60, slowStartMinWeightPercent: 25}',
    )
    expect(scenario.healthCheck).toEqual({interval: 5, baseEjection: 20, maxEjection: 200})
    expect(scenario.setups['as-configured']).toMatchObject({panicThreshold: 50, maxEjectionPercent: 30, slowStart: 60, slowStartMinWeightPercent: 25})
    expect(scenario.pools[0]).toMatchObject({name: 'web', servers: 4})
    expect(c.figures).toMatchObject({
      interval: {value: 5, how: 'given', source: 'checks.interval at web-prometheus.yaml:3:20'},
      baseEjection: {value: 20, how: 'given'},
      maxEjection: {value: 200, how: 'given'},
      maxEjectionPercent: {value: 30, how: 'given'},
      failoverPercent: {value: 50, how: 'given', source: 'checks.panicThreshold at web-prometheus.yaml:3:99'},
      servers: {value: 4, how: 'given', source: 'queries.servers at web-prometheus.yaml:8:12 (4 in rotation now)'},
      fall: null,
      rise: null,
      drainDelay: null,
    })
    expect(c.figures.capacity.value).toBeCloseTo(50, 0)
    expect(c.scenario).toContain('Settings given by the operator in web-prometheus.yaml.')
    expect(c.scenario).toContain('# given: checks.slowStartMinWeightPercent at web-prometheus.yaml:3:')
    // Nothing of Prometheus's pool is a setting read back from a load balancer.
    expect(c.scenario).not.toMatch(/# read:/)
    expect(c.assumed.join('\n')).toContain("checks: Envoy's outlier detection (interval, ejection times, max ejection percent), as given")
    expect(figureRows(c).map((r) => r[0])).toEqual(expect.arrayContaining(['ejection, first', 'ejection, longest', 'ejected at once, at most']))
    expect(figureRows(c).map((r) => r[0])).not.toContain('failed checks to take out')
    expect(familyOf(scenario, 'envoy')).toBe('envoy')
    expect(scenario.frontedBy).toBe('envoy')
  })

  it("alb: the ALB's return time as ejection, minimum healthy targets routing (fail open when off) and slow start as its setup", async () => {
    const {c, scenario} = await calibrated('alb', '{interval: 10, fall: 2, rise: 3, slowStart: 45, failoverPercent: null}')
    expect(scenario.healthCheck).toEqual({interval: 10, baseEjection: 30, maxEjection: 30})
    expect(scenario.setups['as-configured']).toMatchObject({panicThreshold: 1, slowStart: 45})
    expect(c.figures).toMatchObject({fall: {value: 2, how: 'given'}, rise: {value: 3, how: 'given'}, failoverPercent: {value: 1, how: 'given'}})
    expect(c.figures.failoverPercent!.source).toContain('an ALB still routes to every target when none is healthy (fail open)')
    // Not given: not a figure, rather than one made up.
    expect(c.figures.drainDelay).toBeNull()
    expect(c.scenario).toContain('# given: a server is back after 3 passed checks (checks.rise at web-prometheus.yaml:3:39) × 10 s')
    expect(familyOf(scenario, 'alb')).toBe('alb')
    // A pool described by hand (no readings) against this scenario is offered an ALB's levers, not Envoy's cap.
    expect(c.scenario).toContain('# given: family in web-prometheus.yaml: what fronts the pool')
    expect(scenario.frontedBy).toBe('alb')
    expect(familyOf(scenario, undefined)).toBe('alb')
  })

  it("haproxy: HAProxy's rules as the scenario's healthCheck, its defaults where the mapping leaves one out, no panic threshold", async () => {
    const {c, scenario} = await calibrated('haproxy', '{inter: 2, fall: 3, rise: 2, slowstart: 10, timeoutServer: 30, observe: layer7, errorLimit: 5}')
    expect(scenario.healthCheck.interval).toBe(2)
    expect(scenario.healthCheck.haproxy).toMatchObject({
      fall: 3,
      rise: 2,
      slowstart: 10,
      timeoutServer: 30,
      fastinter: 2,
      downinter: 2,
      observe: 'layer7',
      errorLimit: 5,
      onError: 'fastinter',
    })
    expect(c.figures.failoverPercent).toBeNull()
    expect(c.scenario).toContain("  # given: checks at web-prometheus.yaml:3:9 (HAProxy's defaults for what it leaves out)")
    expect(c.scenario).toContain('setups:\n  as-configured: {}')
    expect(familyOf(scenario, 'envoy')).toBe('haproxy')
    expect(scenario.frontedBy).toBe('haproxy')
  })

  it('a scenario that says it is fronted by HAProxy has HAProxy checks, and one with HAProxy checks says no other', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fronted-'))
    const file = (name: string, lines: string) => {
      const path = join(dir, `${name}.yaml`)
      writeFileSync(path, `name: ${name}\n${lines}pools: [{name: web, servers: 4, capacity: 50}]\ndemand: {rps: 100}\nsetups: {plain: {}}\n`)
      return path
    }
    expect(() => loadScenario(file('not-haproxy', 'frontedBy: haproxy\n'))).toThrow(
      /frontedBy: expected frontedBy: haproxy exactly where healthCheck is kind: haproxy, got frontedBy: haproxy with no HAProxy checks/,
    )
    expect(() => loadScenario(file('haproxy-alb', 'frontedBy: alb\nhealthCheck: {kind: haproxy, inter: 2, fall: 3, rise: 2}\n'))).toThrow(
      /got frontedBy: alb with HAProxy checks/,
    )
    // Unset, as in every hand-written scenario: Envoy's levers for a pool described by hand, as before.
    expect(familyOf(loadScenario(file('unset', '')).scenario, undefined)).toBe('envoy')
  })
})
