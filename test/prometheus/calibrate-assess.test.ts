import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {isolatedInProcess} from '../helpers/command.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

const sluice = isolatedInProcess('prometheus')

/** The fleet the fake's day is made from: what calibrate must recover (as test/aws/live-calibrate.test.ts's). */
const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'

interface CalibrationJson {
  figures: Record<string, {value: number; low?: number; high?: number; how: string; source: string; method?: string} | null>
  window: {periods: number}
  settings: {family: string}
  assumed: string[]
}

interface AssessJson {
  region: string
  out: number
  state: {demand: number; healthy: number; servers: number; errorRate: number}
  levers: Array<{kind: string; value: number | null; holds: boolean}>
}

describe('sluice calibrate and assess --prometheus against a fake Prometheus: a day of one-minute points on a diurnal curve past 8 servers of 100 rps', () => {
  // The day ends 20 minutes ago on a minute; after it, the fake answers with the pool now.
  const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
  // Ten minutes of nothing at night (Prometheus was down), and an hour at the peak whose healthy gauge
  // reads 8 and then 1 within each minute while all 8 serve: its mean, 4.5, would make a server look 78% stronger.
  const fake = new FakePrometheus({end, truth, gap: [100, 110], flap: [690, 750], flapTo: 1})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prometheus-'))
  const mapping = join(dir, 'mailbox-prometheus.yaml')
  const scenario = join(dir, 'mailbox.yaml')
  let url = ''

  beforeAll(async () => {
    url = await fake.listen()
    writeFileSync(mapping, mappingText('envoy', envoyChecks))
  })
  afterAll(() => fake.close())

  it('recovers the capacity within 5%, every setting as given in the mapping, and demand; writes a scenario that loads', async () => {
    const out = await sluice([
      'calibrate',
      '--prometheus',
      url,
      '--mapping',
      mapping,
      '--window',
      '24h',
      '--until',
      new Date(end * 1000).toISOString(),
      '--out',
      scenario,
      '--json',
    ])
    expect(out.code, out.stderr + out.stdout).toBe(0)
    const c = JSON.parse(out.stdout) as CalibrationJson
    expect(c.window.periods).toBe(1430)
    expect(c.settings.family).toBe('envoy')
    const f = c.figures
    expect(f.capacity!.method).toBe('plateau')
    expect(Math.abs(f.capacity!.value - truth.capacity) / truth.capacity).toBeLessThan(0.05)
    expect(f.capacity!.low).toBeLessThanOrEqual(f.capacity!.value)
    expect(f.capacity!.high).toBeGreaterThanOrEqual(f.capacity!.value)
    expect(Math.abs(f.demandPeak!.value - truth.high) / truth.high).toBeLessThan(0.05)
    expect(Math.abs(f.serviceTime!.value - truth.latencyFloor) / truth.latencyFloor).toBeLessThan(0.1)
    // The servers are read from their query; every check is the operator's, given, where it was given.
    expect(f.servers).toMatchObject({value: 8, how: 'read'})
    expect(f.interval).toMatchObject({value: 10, how: 'given', source: `checks.interval at ${mapping}:4:20`})
    expect(f.baseEjection).toMatchObject({value: 30, how: 'given'})
    expect(f.maxEjection).toMatchObject({value: 300, how: 'given'})
    expect(f.maxEjectionPercent).toMatchObject({value: 100, how: 'given'})
    expect(f.failoverPercent).toMatchObject({value: 0, how: 'given'})
    expect(f.fall).toBeNull()
    expect(c.assumed.join('\n')).toContain(`requests: Prometheus ${url} had no value for 10 of the 1440 periods of 60 s; they are left out`)

    const text = readFileSync(scenario, 'utf8')
    expect(text).toContain(`Settings given by the operator in ${mapping}.`)
    expect(text).toContain(`  # given: checks.baseEjection at ${mapping}:4:38\n  baseEjection: 30`)
    expect(text).toMatch(/# fitted \(90%: [\d.]+–[\d.]+\): the plateau of requests served per server against offered/)
    const {scenario: loaded} = loadScenario(scenario)
    expect(loaded.pools[0]).toMatchObject({name: 'mailbox', servers: 8})
    expect(loaded.healthCheck).toEqual({interval: 10, baseEjection: 30, maxEjection: 300})
    expect(loaded.setups['as-configured']).toMatchObject({panicThreshold: 0, maxEjectionPercent: 100})
  }, 120_000)

  it("assess reads the pool now and places it inside its stuck region (exit 3, Envoy's levers) and outside it (exit 0)", async () => {
    const where = ['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick', '--json']
    // 3 of 8 out at 750 rps: the calibrated map has the pool stuck with 3–5 of 8 broken at that demand.
    fake.now = {rps: 750, healthy: 5, servers: 8, errorRate: 0.05}
    const stuck = await sluice(where)
    expect(stuck.code, stuck.stderr).toBe(3)
    const a = JSON.parse(stuck.stdout) as AssessJson
    expect(a.region).toBe('stuck')
    expect(a.state).toMatchObject({healthy: 5, servers: 8})
    expect(a.state.demand).toBeCloseTo(750, 6)
    expect(a.state.errorRate).toBeCloseTo(0.05, 6)
    // Envoy has an ejection cap and a panic threshold; either gets this pool out.
    const kinds = a.levers.map((l) => l.kind)
    expect(kinds).toContain('cap')
    expect(kinds).toContain('panic')
    expect(a.levers.find((l) => l.kind === 'cap')!.holds).toBe(true)

    // The same pool behind an ALB (a mapping that says so): failover, no ejection cap.
    const alb = join(dir, 'alb.yaml')
    writeFileSync(alb, mappingText('alb', '{interval: 10, fall: 2, rise: 3, slowStart: 0, failoverPercent: null}'))
    const onAlb = await sluice(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', alb, '--quick', '--json'])
    expect(onAlb.code, onAlb.stderr).toBe(3)
    const b = JSON.parse(onAlb.stdout) as AssessJson
    expect(b.levers.map((l) => l.kind)).not.toContain('cap')
    expect(b.levers.map((l) => l.kind)).toContain('panic')

    // Every server in rotation at the same demand, 94% of what the calibrated eight serve: nothing
    // out and serving in full, but drawn it tips (on every seed here), so at risk (exit 3), never
    // unharmed, and not stuck: nothing is broken to fix.
    fake.now = {rps: 750, healthy: 8, servers: 8, errorRate: 0}
    const whole = await sluice(where)
    expect(whole.code, whole.stderr).toBe(3)
    const w = JSON.parse(whole.stdout) as AssessJson & {overSeeds: {seeds: Array<{tipped: boolean}>}; sentences: string[]}
    expect(w).toMatchObject({region: 'at-risk', state: {healthy: 8, servers: 8}})
    expect(w.overSeeds.seeds.some((s) => s.tipped)).toBe(true)
    expect(w.sentences[0]).toMatch(/^AT RISK: with 0 of 8 servers out of rotation at 750 rps, left as it is it tips on \d+ of 10 seeds/)
    // At 600 rps (75%): outside it on every seed.
    fake.now = {rps: 600, healthy: 8, servers: 8, errorRate: 0}
    const roomy = await sluice(where)
    expect(roomy.code, roomy.stderr).toBe(0)
    expect(JSON.parse(roomy.stdout)).toMatchObject({region: 'unharmed', state: {healthy: 8, servers: 8}})
  }, 120_000)

  it('refuses flags that name no pool, two pools, or a URL it will not use: exit 2, naming the flag', async () => {
    const calibrate: Array<[string[], string]> = [
      [['--prometheus', url], '--prometheus: needs --mapping; a Prometheus pool is named by both --prometheus URL and --mapping FILE'],
      [['--mapping', mapping], '--mapping: needs --prometheus; a Prometheus pool is named by both --prometheus URL and --mapping FILE'],
      [
        ['--prometheus', url, '--mapping', mapping, '--haproxy', '/run/haproxy.sock'],
        '--haproxy: not with --prometheus or --mapping; calibrate reads one pool: an ALB target group and its CloudWatch metrics, a HAProxy backend, or Prometheus through a mapping',
      ],
      [
        ['--mapping', mapping, '--target-group', 'arn:x'],
        '--target-group: not with --mapping; calibrate reads one pool: an ALB target group and its CloudWatch metrics, a HAProxy backend, or Prometheus through a mapping',
      ],
      [
        ['--prometheus', 'prometheus:9090', '--mapping', mapping],
        '--prometheus: expected an http(s) URL such as http://prometheus:9090 but received: prometheus:9090',
      ],
      [['--prometheus', 'http://admin:hunter2@prometheus:9090', '--mapping', mapping], '--prometheus: a URL with credentials (user:password@)'],
      [['--prometheus', url, '--mapping', mapping, '--haproxy-config', 'h.cfg'], '--haproxy-config: needs --haproxy and --backend'],
      [
        ['--prometheus', url, '--mapping', mapping, '--window', '10m', '--period', '300'],
        '--period: 300 s gives fewer than three periods in a window of 600 s',
      ],
      [['--prometheus', url, '--mapping', mapping, '--until', 'yesterday'], '--until: expected an ISO 8601 time'],
      [['--prometheus', url, '--mapping', join(dir, 'none.yaml')], `--mapping: cannot read ${join(dir, 'none.yaml')}: ENOENT`],
      [
        [],
        'missing one of --target-group and --load-balancer, --haproxy and --backend, or --prometheus and --mapping; calibrate reads one pool: an ALB target group and its CloudWatch metrics',
      ],
    ]
    for (const [flags, message] of calibrate) {
      const out = await sluice(['calibrate', ...flags])
      expect(out.code, flags.join(' ')).toBe(2)
      expect(out.stderr, flags.join(' ')).toContain(message)
      expect(out.stderr).not.toContain('hunter2')
    }
    const assess: Array<[string[], string]> = [
      [['--prometheus', url], '--prometheus: needs --mapping; a Prometheus pool is named by both --prometheus URL and --mapping FILE'],
      [
        ['--prometheus', url, '--mapping', mapping, '--target-group', 'arn:x'],
        '--target-group: not with --prometheus or --mapping; read one live pool: an ALB target group, a HAProxy backend or Prometheus, not both',
      ],
      [
        ['--prometheus', url, '--mapping', mapping, '--demand', '700', '--in-rotation', '8'],
        '--demand: not with --prometheus or --mapping; describe a pool (--demand, --in-rotation) or read a live one',
      ],
    ]
    for (const [flags, message] of assess) {
      const out = await sluice(['assess', '--scenario', 'outlook-2026', ...flags])
      expect(out.code, flags.join(' ')).toBe(2)
      expect(out.stderr, flags.join(' ')).toContain(message)
    }
  }, 120_000)

  it('refuses a broken mapping at its file:line:column, before asking Prometheus anything: exit 2', async () => {
    const broken = join(dir, 'broken.yaml')
    writeFileSync(
      broken,
      mappingText('envoy', envoyChecks.replace('maxEjectionPercent: 100', 'maxEjectionPrecent: 100')).replace('pool: mailbox', 'pool: Mailbox'),
    )
    const asked = fake.asked.length
    const calibrate = await sluice(['calibrate', '--prometheus', url, '--mapping', broken])
    expect(calibrate.code).toBe(2)
    expect(calibrate.stderr.trim().split('\n')).toEqual([
      `Error: ${broken}:2:7: pool: expected a lower-case name of letters, digits and dashes`,
      `Error: ${broken}:4:60: checks: unknown key 'maxEjectionPrecent' (did you mean 'maxEjectionPercent'?)`,
    ])
    const assess = await sluice(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', broken, '--json'])
    expect(assess.code).toBe(2)
    expect((JSON.parse(assess.stdout) as {error: {problems: string[]}}).error.problems[0]).toBe(
      `${broken}:2:7: pool: expected a lower-case name of letters, digits and dashes`,
    )
    // A mapping that says HAProxy fronts the pool, against a scenario whose checks are not HAProxy's.
    const haproxy = join(dir, 'haproxy.yaml')
    writeFileSync(haproxy, mappingText('haproxy', '{inter: 2, fall: 3, rise: 2, slowstart: 0, timeoutServer: 30}'))
    const mismatch = await sluice(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', haproxy, '--quick'])
    expect(mismatch.code).toBe(2)
    expect(mismatch.stderr).toContain(`--mapping: ${haproxy} says family haproxy, and the scenario's healthCheck is not kind: haproxy`)
    // The Authorization header's variable unset: said where the mapping names it.
    const authed = join(dir, 'authed.yaml')
    writeFileSync(authed, mappingText('envoy', envoyChecks, 'authorizationEnv: SLUICE_TEST_UNSET_PROM_AUTH\n'))
    const unset = await sluice(['calibrate', '--prometheus', url, '--mapping', authed])
    expect(unset.code).toBe(2)
    expect(unset.stderr).toContain(`${authed}:11:19: authorizationEnv: $SLUICE_TEST_UNSET_PROM_AUTH is not set`)
    expect(fake.asked.length).toBe(asked)
  }, 120_000)

  it('a Prometheus that fails says which query, where, and what it answered: exit 1', async () => {
    const until = ['--until', new Date(end * 1000).toISOString()]
    try {
      fake.failWith = {status: 500, body: 'internal error', query: /envoy_cluster_upstream_rq_total/}
      const calibrate = await sluice(['calibrate', '--prometheus', url, '--mapping', mapping, ...until, '--json'])
      expect(calibrate.code).toBe(1)
      expect((JSON.parse(calibrate.stdout) as {error: {message: string; exit: number}}).error).toEqual({
        message: `Prometheus ${url}: query for requests answered HTTP 500`,
        exit: 1,
      })
      fake.failWith = {
        status: 422,
        body: JSON.stringify({status: 'error', errorType: 'execution', error: 'many-to-many matching not allowed'}),
        query: /membership_healthy/,
      }
      const assess = await sluice(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick'])
      expect(assess.code).toBe(1)
      expect(assess.stderr.trim()).toBe(`Error: Prometheus ${url}: query for healthy answered HTTP 422: execution: many-to-many matching not allowed`)
    } finally {
      fake.failWith = null
    }
  }, 120_000)
})
