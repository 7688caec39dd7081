import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import {loadPoolMapping, parsePoolMapping} from '../../src/prometheus/mapping.js'

const queries = `queries:
  requests: sum(rate(envoy_cluster_upstream_rq_total{envoy_cluster_name="mailbox"}[$window]))
  errors: sum(rate(envoy_cluster_upstream_rq_xx{envoy_cluster_name="mailbox",envoy_response_code_class="5"}[$window]))
  healthy: sum(envoy_cluster_membership_healthy{envoy_cluster_name="mailbox"})
  servers: sum(envoy_cluster_membership_total{envoy_cluster_name="mailbox"})
`

const good = `pool: mailbox
family: envoy
checks:
  interval: 10
  baseEjection: 30
  maxEjection: 300
  maxEjectionPercent: 10
  panicThreshold: 50
  slowStart: 0
${queries}authorizationEnv: PROM_AUTH
`

/** The problems a mapping's text is refused with, a line each. */
function problems(text: string): readonly string[] {
  try {
    parsePoolMapping('m.yaml', text)
  } catch (error) {
    if (error instanceof InputError) return error.problems
    throw error
  }
  throw new Error('the mapping was accepted')
}

describe('a Prometheus mapping file: the queries of a pool and the checks Prometheus does not hold', () => {
  it('reads a good one of each family, with where each value is', () => {
    const envoy = parsePoolMapping('m.yaml', good)
    expect(envoy.data).toMatchObject({
      pool: 'mailbox',
      family: 'envoy',
      checks: {interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 10, panicThreshold: 50, slowStart: 0},
      queries: {servers: 'sum(envoy_cluster_membership_total{envoy_cluster_name="mailbox"})'},
      authorizationEnv: 'PROM_AUTH',
    })
    expect(envoy.locate(['checks', 'maxEjection'])).toBe('m.yaml:6:16')
    expect(envoy.locate(['queries', 'healthy'])).toBe('m.yaml:13:12')
    const alb = parsePoolMapping(
      'm.yaml',
      `pool: web\nfamily: alb\nchecks: {interval: 30, timeout: 5, fall: 2, rise: 5, slowStart: 0, drainDelay: 300, failoverPercent: null}\n${queries.replace(/servers: .*/, 'servers: 12')}`,
    )
    expect(alb.data).toMatchObject({family: 'alb', checks: {failoverPercent: null, drainDelay: 300}, queries: {servers: 12}})
    const haproxy = parsePoolMapping('m.yaml', `pool: web\nfamily: haproxy\nchecks: {inter: 2, fall: 3, rise: 2, slowstart: 0, timeoutServer: 30}\n${queries}`)
    expect(haproxy.data).toMatchObject({family: 'haproxy', checks: {inter: 2, timeoutServer: 30}})
  })

  it('says every problem at once, each at its file:line:column with what was expected, in the order they are met', () => {
    const text = `pool: Mailbox
family: envoy
checks:
  interval: 0
  baseEjection: 30
  maxEjection: "300"
  maxEjectionPercent: 110
  panicThreshold: 50
  slowStrat: 0
queries:
  requests: sum(rate(envoy_cluster_upstream_rq_total{envoy_cluster_name="$pool"}[$window]))
  errors: "  "
  healthy: 8
  servers: 0
  latncy: avg(x)
authorizationEnv: 1PROM
`
    expect(problems(text)).toEqual([
      'm.yaml:1:7: pool: expected a lower-case name of letters, digits and dashes',
      'm.yaml:4:13: checks.interval: expected a number > 0',
      'm.yaml:6:16: checks.maxEjection: expected number, received string',
      'm.yaml:7:23: checks.maxEjectionPercent: expected a number <= 100',
      "m.yaml:9:3: checks: unknown key 'slowStrat' (did you mean 'slowStart'?)",
      'm.yaml:11:13: queries.requests: unknown placeholder $pool; expected PromQL with at most $window (the period, as 60s) filled in',
      'm.yaml:12:11: queries.errors: expected a PromQL query',
      'm.yaml:13:12: queries.healthy: expected string, received number',
      'm.yaml:14:12: queries.servers: expected a number >= 1',
      "m.yaml:15:3: queries: unknown key 'latncy' (did you mean 'latency'?)",
      'm.yaml:16:19: authorizationEnv: expected the name of an environment variable',
    ])
  })

  it("names the family's own checks where a key belongs to another's, and what is missing", () => {
    const takes = 'haproxy checks are inter, timeout, fall, rise, slowstart, timeoutServer, fastinter, downinter, observe, errorLimit, onError'
    expect(problems(good.replace('family: envoy', 'family: haproxy'))).toEqual([
      `m.yaml:4:3: checks: unknown key 'interval'; ${takes}`,
      // What is missing is said at the checks it is missing from.
      'm.yaml:4:3: checks.inter: expected number, received undefined',
      'm.yaml:4:3: checks.fall: expected number, received undefined',
      'm.yaml:4:3: checks.rise: expected number, received undefined',
      'm.yaml:4:3: checks.timeoutServer: expected number, received undefined',
      `m.yaml:5:3: checks: unknown key 'baseEjection'; ${takes}`,
      `m.yaml:6:3: checks: unknown key 'maxEjection'; ${takes}`,
      `m.yaml:7:3: checks: unknown key 'maxEjectionPercent'; ${takes}`,
      `m.yaml:8:3: checks: unknown key 'panicThreshold'; ${takes}`,
      // Envoy's slowStart is HAProxy's slowstart: said once, not also as missing.
      "m.yaml:9:3: checks: unknown key 'slowStart' (did you mean 'slowstart'?)",
    ])
    expect(problems(good.replace(/checks:[\s\S]*?queries:/, 'queries:').replace(/\n {2}servers: .*/, ''))).toEqual([
      'm.yaml:1:1: checks: expected object, received undefined',
      'm.yaml:4:3: queries.servers: expected string or number',
    ])
    expect(
      problems(
        good
          .replace('  failoverPercent', '')
          .replace('family: envoy', 'family: alb')
          .replace(/checks:[\s\S]*?queries:/, 'checks: {interval: 10, fall: 2, rise: 3, slowStart: 0, failoverPercent: off}\nqueries:'),
      ),
    ).toEqual(['m.yaml:3:73: checks.failoverPercent: expected a percent, or null for off'])
  })

  it('refuses a mapping without a family, with one it does not know, malformed YAML, and what is not a mapping', () => {
    expect(problems(good.replace('family: envoy\n', ''))).toEqual([
      'm.yaml:1:1: missing family: expected one of envoy, haproxy, alb (what fronts the pool: its checks, and the levers assess offers)',
    ])
    expect(problems(good.replace('family: envoy', 'family: nginx'))).toEqual(['m.yaml:2:9: family: expected one of envoy, haproxy, alb, got "nginx"'])
    expect(problems('pool: [mailbox\nfamily: envoy\n')).toEqual([
      'm.yaml:2:1: malformed YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ])
    expect(problems('- mailbox\n')).toEqual(['m.yaml:1:1: expected a mapping of pool, family, checks and queries'])
  })

  it("reads docs/assess.md's example as it says, where it says", () => {
    const page = readFileSync(join(import.meta.dirname, '../../docs/assess.md'), 'utf8')
    const example = /```yaml\n(# mailbox-prometheus\.yaml[\s\S]*?)```/.exec(page)![1]
    const mapping = parsePoolMapping('mailbox-prometheus.yaml', example)
    expect(mapping.data).toMatchObject({pool: 'mailbox', family: 'envoy', authorizationEnv: 'PROM_AUTH'})
    expect(Object.keys(mapping.data.queries)).toEqual(['requests', 'errors', 'healthy', 'servers', 'latency'])
    expect(page).toContain(`# given: checks.interval at ${mapping.locate(['checks', 'interval'])}`)
  })

  it('says a file it cannot read by the flag that named it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-mapping-'))
    expect(() => loadPoolMapping(join(dir, 'none.yaml'))).toThrow(`--mapping: cannot read ${join(dir, 'none.yaml')}: ENOENT`)
    writeFileSync(join(dir, 'good.yaml'), good)
    expect(loadPoolMapping(join(dir, 'good.yaml')).data.pool).toBe('mailbox')
  })
})
