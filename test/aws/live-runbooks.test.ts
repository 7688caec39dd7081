import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {
  groupAttributes,
  registered,
  ruleCount,
  seedMetrics as seedFixtureMetrics,
  useLiveFixture,
  weightChanges,
  weights,
  type Fixture,
} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))
const seedMetrics = (errorPercent: number) => seedFixtureMetrics(fx, errorPercent)

describe('live runs of the shipped runbooks against moto', () => {
  it('outlook-staged-return: every change lands in order, batch by batch, and is read back from the API', async () => {
    await seedMetrics(0)
    const file = liveCopy('runbooks/outlook-staged-return.yaml', fx.targets, fx.dir, fx.hook)
    // Read the weights while the run goes, to see every step land.
    const seen: string[] = []
    let polling = true
    const poller = (async () => {
      while (polling) {
        const w = JSON.stringify(await weights(fx.targets.zoneId, fx.targets.record))
        if (seen.at(-1) !== w) seen.push(w)
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    polling = false
    await poller
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(result.stdout).toContain('Outcome: completed')

    const steps = [
      [0, 100],
      [1, 99],
      [5, 95],
      [25, 75],
      [50, 50],
      [60, 40],
      [70, 30],
      [80, 20],
      [90, 10],
      [100, 0],
    ]
    const expected = steps.map(([mailbox, maintenance]) => JSON.stringify({mailbox, maintenance}))
    expect(seen.map((s) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(s)).sort())))).toEqual([
      JSON.stringify({mailbox: 100, maintenance: 0}),
      ...expected,
    ])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})

    // One ChangeResourceRecordSets per ramp step, carrying every set that changed.
    expect(weightChanges(fx.proxy)).toEqual(steps.map(([mailbox, maintenance]) => ({mailbox, maintenance})))
    // Batches of 25% of 8 targets: four batch calls each way, two targets each, never one call per target.
    const batches = (op: string) => fx.proxy.of(op).map((c) => [...c.body.matchAll(/Targets\.member\.\d+\.Id=([^&]+)/g)].map((m) => decodeURIComponent(m[1])))
    expect(batches('DeregisterTargets').map((b) => b.length)).toEqual([2, 2, 2, 2])
    expect(batches('RegisterTargets')).toEqual(batches('DeregisterTargets'))
    expect(new Set(batches('DeregisterTargets').flat()).size).toBe(8)
    expect(await registered(fx.targets.targetGroupArn)).toHaveLength(8)
    // Hooks ran once per target and kind, with the target passed as arguments and environment.
    const hooks = readFileSync(fx.hookLog, 'utf8').trim().split('\n')
    expect(hooks.filter((l) => l.startsWith('restart '))).toHaveLength(8)
    expect(hooks.filter((l) => l.startsWith('remediate '))).toHaveLength(8)
    // {id} and SLUICE_TARGET_ID are the bare target (here the IP), the port apart.
    expect(hooks[0]).toMatch(/^restart 10\.0\.1\.\d+ 10\.0\.1\.\d+ 443 target=10\.0\.1\.\d+$/)
    const [, id, ip, , env] = hooks[0].split(' ')
    expect([id, env]).toEqual([ip, `target=${ip}`])
    // The restriction was created on the listener and lifted again.
    expect(fx.proxy.count('CreateRule')).toBe(1)
    expect(decodeURIComponent(fx.proxy.of('CreateRule')[0].body)).toContain('PathPatternConfig.Values.member.1=/sync/*')
    expect(fx.proxy.count('DeleteRule')).toBe(1)
    expect(await ruleCount(fx.targets.listenerArn)).toBe(0)
    // Routing failover and slow start set once each, with the values AWS would check; read back.
    const attributes = fx.proxy.of('ModifyTargetGroupAttributes').map((c) => decodeURIComponent(c.body))
    expect(attributes).toHaveLength(2)
    expect(attributes[0]).toContain('Key=target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage&Attributes.member.1.Value=50')
    expect(attributes[1]).toContain('Key=slow_start.duration_seconds&Attributes.member.1.Value=60')
    expect(await groupAttributes(fx.targets.targetGroupArn)).toMatchObject({
      'slow_start.duration_seconds': '60',
      'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage': '50',
    })
    // The freeze recorded and cleared.
    expect(existsSync(join(fx.dir, 'state', 'freeze.json'))).toBe(false)
  }, 120_000)

  it('a gate fails when the seeded 5xx exceed its threshold, and the weights go back, read back from the API', async () => {
    await seedMetrics(5)
    const file = join(fx.dir, 'ramp.yaml')
    writeFileSync(
      file,
      `name: ramp-into-errors
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - {action: ramp, set: maintenance, schedule: [100], bake: 1}
  - action: ramp
    set: mailbox
    schedule: [10, 50, 100]
    bake: 2
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 1, successes: 2, pool: mailbox}
`,
    )
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr).toBe(3)
    const json = JSON.parse(result.stdout)
    expect(json.outcome).toBe('gate-failed')
    expect(json.message).toContain('error-rate ≤ 2% over 60 s (mailbox)')
    expect(json.message).toContain('measured 5.00%')
    expect(json.message).toContain('threshold 2.00%')
    expect(weightChanges(fx.proxy)).toEqual([
      {mailbox: 0, maintenance: 100},
      {mailbox: 10, maintenance: 90},
      {mailbox: 0, maintenance: 100},
    ])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
  }, 120_000)
})
