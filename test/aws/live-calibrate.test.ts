import {CloudWatchClient, PutMetricDataCommand, type MetricDatum} from '@aws-sdk/client-cloudwatch'
import {ElasticLoadBalancingV2Client, ModifyTargetGroupAttributesCommand, ModifyTargetGroupCommand} from '@aws-sdk/client-elastic-load-balancing-v2'
import {readFileSync, writeFileSync} from 'node:fs'
import {parse, stringify} from 'yaml'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {Random} from '../../src/sim/random.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, useLiveFixture, type Fixture} from './live-fixture.js'
import {targetGroupDimension} from './seed.js'
import {spawnRun} from './spawned-run.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

/** The fleet the metrics are made from: what calibrate must recover. */
const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}

/**
 * A day of minute points for the fixture's 8 targets, as an ALB would report them: demand on a
 * diurnal curve from 300 to 1,050 rps (past the pool's 800 at its peak), each server answering at
 * most 100 rps (2% noise) and the rest failing with 5xx, latency flat at 40 ms until the servers are
 * full and climbing past it, every target healthy but for an hour at the peak in which, within
 * each minute, all 8 were healthy and then 1 (their mean, 4.5, divides what the pool answered by too
 * few: 178 rps a server, which would pull the fitted capacity 8% high unless calibrate leaves the
 * minutes whose healthy count moved out). Put in batches of 1,000 data, AWS's limit.
 */
async function putDay(end: number): Promise<void> {
  const random = new Random(3)
  const noise = () => 1 + (random.next() - 0.5) * 0.04
  const lb = [{Name: 'LoadBalancer', Value: fx.targets.loadBalancer}]
  const tg = [...lb, {Name: 'TargetGroup', Value: targetGroupDimension(fx.targets.targetGroupArn)}]
  const data: MetricDatum[] = []
  for (let i = 0; i < 1440; i++) {
    const at = new Date(end - (1440 - i) * 60_000)
    const rps = (truth.low + (truth.high - truth.low) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / 1440))) * noise()
    const perServer = rps / truth.servers
    const served = Math.min(perServer, truth.capacity * noise())
    const failed = (perServer - served) * truth.servers * 60
    const latency = truth.latencyFloor * noise() * (perServer > truth.capacity ? 1 + (perServer / truth.capacity - 1) * 20 : 1)
    const datum = (MetricName: string, Value: number, Dimensions: typeof lb, Unit: 'Count' | 'Seconds' = 'Count'): MetricDatum => ({
      MetricName,
      Value,
      Unit,
      Timestamp: at,
      Dimensions,
    })
    data.push(
      datum('RequestCount', Math.round(rps * 60), tg),
      datum('HTTPCode_Target_5XX_Count', Math.round(failed), tg),
      datum('HTTPCode_ELB_5XX_Count', 0, lb),
      datum('HealthyHostCount', truth.servers, tg),
      ...(i >= 690 && i < 750 ? [{...datum('HealthyHostCount', 1, tg), Timestamp: new Date(at.getTime() + 30_000)}] : []),
      datum('TargetResponseTime', latency, tg, 'Seconds'),
    )
  }
  // The SDK gzips a PutMetricData body over 10 KB, which moto cannot read (it answers 500).
  const cw = new CloudWatchClient({...cfg, disableRequestCompression: true})
  try {
    for (let i = 0; i < data.length; i += 1000) await cw.send(new PutMetricDataCommand({Namespace: 'AWS/ApplicationELB', MetricData: data.slice(i, i + 1000)}))
  } finally {
    cw.destroy()
  }
}

/** The pool now: the last ten minutes at `rps`, no errors, as CloudWatch would have them. */
async function putNow(rps: number): Promise<void> {
  const now = Math.floor(Date.now() / 60_000) * 60_000
  const tg = [
    {Name: 'LoadBalancer', Value: fx.targets.loadBalancer},
    {Name: 'TargetGroup', Value: targetGroupDimension(fx.targets.targetGroupArn)},
  ]
  const data: MetricDatum[] = Array.from({length: 10}, (_, i) => new Date(now - (10 - i) * 60_000)).flatMap((at) => [
    {MetricName: 'RequestCount', Value: rps * 60, Unit: 'Count', Timestamp: at, Dimensions: tg},
    {MetricName: 'HTTPCode_Target_5XX_Count', Value: 0, Unit: 'Count', Timestamp: at, Dimensions: tg},
  ])
  const cw = new CloudWatchClient({...cfg, disableRequestCompression: true})
  try {
    await cw.send(new PutMetricDataCommand({Namespace: 'AWS/ApplicationELB', MetricData: data}))
  } finally {
    cw.destroy()
  }
}

/**
 * The question assess asks, written out from the calibrated scenario by hand: its pool at `rps`,
 * `broken` servers broken from 30 s until the fix at 90 s (the checks' 10 s × 3, at least 60 s),
 * watched 600 s after, one setup with no guards of its own (simulate --policy gives them).
 */
function questionOf(calibrated: string, rps: number, broken: number): string {
  const doc = parse(calibrated) as Record<string, unknown>
  return stringify({
    ...doc,
    name: 'question',
    duration: 690,
    demand: {rps},
    faults: [{kind: 'broken', servers: broken, from: 30, to: 90}],
    setups: {plain: {}},
  })
}

/** The target group's settings calibrate must read back. */
async function configure(): Promise<void> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    await elb.send(
      new ModifyTargetGroupCommand({
        TargetGroupArn: fx.targets.targetGroupArn,
        HealthCheckIntervalSeconds: 10,
        HealthCheckTimeoutSeconds: 5,
        HealthyThresholdCount: 3,
        UnhealthyThresholdCount: 2,
      }),
    )
    await elb.send(
      new ModifyTargetGroupAttributesCommand({
        TargetGroupArn: fx.targets.targetGroupArn,
        Attributes: [
          {Key: 'slow_start.duration_seconds', Value: '45'},
          {Key: 'deregistration_delay.timeout_seconds', Value: '60'},
        ],
      }),
    )
  } finally {
    elb.destroy()
  }
}

describe('sluice calibrate and assess against moto: a day of CloudWatch metrics, a target group with known settings, and the pool now', () => {
  it('recovers the capacity within 5%, the settings exactly and demand, writes a scenario that simulates, and assess places the pool now inside and outside its stuck region', async () => {
    await configure()
    // The day ends 20 minutes ago: the last quarter hour is the pool now, for assess below.
    const end = Math.floor(Date.now() / 60_000) * 60_000 - 20 * 60_000
    await putDay(end)
    const file = join(fx.dir, 'mailbox.yaml')
    const args = ['calibrate', '--target-group', fx.targets.targetGroupArn, '--load-balancer', fx.targets.loadBalancer]
    const until = ['--window', '24h', '--until', new Date(end).toISOString(), '--pool', 'mailbox']
    const out = await sluice([...args, ...until, '--out', file, '--json'], {env: fx.env})
    expect(out.code, out.stderr + out.stdout).toBe(0)
    const c = JSON.parse(out.stdout) as {
      figures: Record<string, {value: number; low?: number; high?: number; how: string; method?: string}>
      window: {periods: number}
      assumed: string[]
    }
    expect(c.window.periods).toBe(1440)
    expect(c.figures.capacity.method).toBe('plateau')
    expect(Math.abs(c.figures.capacity.value - truth.capacity) / truth.capacity).toBeLessThan(0.05)
    expect(c.figures.capacity.low).toBeLessThanOrEqual(c.figures.capacity.value)
    expect(c.figures.capacity.high).toBeGreaterThanOrEqual(c.figures.capacity.value)
    expect(c.figures.servers).toMatchObject({value: 8, how: 'read'})
    expect(c.figures.interval).toMatchObject({value: 10, how: 'read'})
    expect(c.figures.fall).toMatchObject({value: 2, how: 'read'})
    expect(c.figures.rise).toMatchObject({value: 3, how: 'read'})
    expect(c.figures.slowStart).toMatchObject({value: 45, how: 'read'})
    expect(c.figures.drainDelay).toMatchObject({value: 60, how: 'read'})
    expect(c.figures.attempts.how).toBe('assumed')
    expect(Math.abs(c.figures.demandPeak.value - truth.high) / truth.high).toBeLessThan(0.05)
    expect(Math.abs(c.figures.serviceTime.value - truth.latencyFloor) / truth.latencyFloor).toBeLessThan(0.1)
    expect(c.assumed.join('\n')).toContain('retries and client timeouts are not in these metrics')

    // The scenario loads as any scenario does, says where each figure came from, and simulates.
    const text = readFileSync(file, 'utf8')
    expect(text).toMatch(/# fitted \(90%: [\d.]+–[\d.]+\): the plateau of requests served per server against offered/)
    expect(text).toContain('# read: HealthCheckIntervalSeconds\n  interval: 10')
    expect(text).toContain(`Settings read from target group `)
    const {scenario} = loadScenario(file)
    expect(scenario.pools[0]).toMatchObject({name: 'mailbox', servers: 8})
    expect(scenario.healthCheck).toMatchObject({interval: 10, baseEjection: 30, maxEjection: 30})
    expect(scenario.setups['as-configured']).toMatchObject({slowStart: 45, panicThreshold: 1})
    const sim = await sluice(['simulate', '--scenario', file, '--duration', '3600', '--json'])
    expect(sim.code, sim.stderr).toBe(0)

    // Without --out: the scenario on stdout, the figures on stderr.
    const plain = await sluice([...args, ...until], {env: fx.env})
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).toBe(text)
    // The figure's name wraps at its spaces to leave the explanation room, never inside a word.
    expect(plain.stderr).toMatch(/^capacity\s+\d+(\.\d+)? rps\s+[\d.]+–[\d.]+\s+fitted .*\nper\s.*\nserver\b/m)

    // assess reads the pool now from the same APIs and places it on the map of the scenario calibrate wrote.
    await putNow(750)
    const live = ['assess', '--scenario', file, '--target-group', fx.targets.targetGroupArn, '--load-balancer', fx.targets.loadBalancer, '--quick', '--json']
    // Placed at the mean, where a count of broken servers decides it exactly: drawn, at 94% of what
    // the calibrated eight serve, the pool tips with none broken (below).
    const where = [...live, '--randomness', 'none']
    // 3 of 8 targets failing their checks at 750 rps: inside the stuck region (the map has it stuck with 2–4 out).
    fx.proxy.failChecks(fx.targets.targetGroupArn, ['10.0.1.10', '10.0.1.11', '10.0.1.12'])
    const stuck = await sluice(where, {env: fx.env})
    expect(stuck.code, stuck.stderr).toBe(3)
    const a = JSON.parse(stuck.stdout) as {
      region: string
      out: number
      state: {demand: number; healthy: number; servers: number}
      levers: Array<{kind: string; value: number; holds: boolean}>
    }
    expect(a.state).toMatchObject({healthy: 5, servers: 8})
    expect(a.state.demand).toBeCloseTo(750, 0)
    expect(a.region).toBe('stuck')
    // An ALB has routing failover but no ejection cap, and turns away whole types only (this pool has one): the lever is failover.
    expect(a.levers.map((l) => l.kind)).not.toContain('cap')
    const failover = a.levers.find((l) => l.kind === 'panic')!
    expect(failover.holds).toBe(true)
    // Described by hand against the same scenario, the pool is still an ALB's (the scenario says frontedBy: alb).
    expect(text).toContain('frontedBy: alb')
    const described = await sluice(['assess', '--scenario', file, '--demand', '750', '--in-rotation', '5', '--quick', '--randomness', 'none', '--json'])
    expect(described.code, described.stderr).toBe(3)
    expect((JSON.parse(described.stdout) as typeof a).levers.map((l) => l.kind)).not.toContain('cap')
    // The simulator confirms it, through simulate, on the question written out: stuck as it is, back with the failover.
    const question = join(fx.dir, 'question.yaml')
    // Placed where the fewest broken servers take the pool down to 5 in rotation: at most the 3 out.
    expect(a.out).toBeGreaterThan(0)
    expect(a.out).toBeLessThanOrEqual(3)
    writeFileSync(question, questionOf(text, 750, a.out))
    const simulate = async (policy: string) => {
      const r = await sluice(['simulate', '--scenario', question, '--policy', policy, '--randomness', 'none', '--json'])
      expect(r.code, r.stderr).toBe(0)
      return (JSON.parse(r.stdout) as {setups: Array<{recoveredSecondsAfterFix: number | null}>}).setups[0].recoveredSecondsAfterFix
    }
    expect(await simulate('panicThreshold=1,slowStart=45')).toBeNull()
    expect(await simulate(`panicThreshold=${failover.value},slowStart=45`)).not.toBeNull()

    // Every target passing its checks at the same demand: outside it at the mean; by default, drawn
    // on ten seeds, at risk (exit 3): 94% of capacity with nothing broken tips by chance.
    fx.proxy.failChecks(fx.targets.targetGroupArn, [])
    const whole = await sluice(where, {env: fx.env})
    expect(whole.code, whole.stderr).toBe(0)
    expect(JSON.parse(whole.stdout)).toMatchObject({region: 'unharmed', state: {healthy: 8}})
    const drawn = await sluice(live, {env: fx.env})
    expect(drawn.code, drawn.stderr).toBe(3)
    const risk = JSON.parse(drawn.stdout) as {region: string; overSeeds: {seeds: Array<{tipped: boolean}>}}
    expect(risk.region).toBe('at-risk')
    expect(risk.overSeeds.seeds.filter((x) => x.tipped).length).toBeGreaterThan(0)
  }, 180_000)

  it('assess --watch re-assesses the pool every interval, one JSON line each, until Ctrl-C, and ends as the last one did', async () => {
    const file = join(fx.dir, 'calibrated.yaml')
    writeFileSync(
      file,
      `name: calibrated-mailbox
pools: [{name: mailbox, servers: 8, capacity: 100, serviceTime: 0.04}]
demand: {rps: 500}
healthCheck: {interval: 10, baseEjection: 30, maxEjection: 30}
setups: {as-configured: {panicThreshold: 1, slowStart: 45}}
`,
    )
    await putNow(750)
    fx.proxy.failChecks(fx.targets.targetGroupArn, ['10.0.1.10', '10.0.1.11', '10.0.1.12'])
    const run = spawnRun(
      [
        'assess',
        '--scenario',
        file,
        '--target-group',
        fx.targets.targetGroupArn,
        '--load-balancer',
        fx.targets.loadBalancer,
        '--quick',
        '--watch',
        '5',
        '--json',
      ],
      fx.env,
    )
    await run.seen(/assessed at [\d:]+Z: STUCK[\s\S]*assessed at [\d:]+Z: STUCK/)
    run.signal('SIGINT')
    const end = await run.ended
    expect(end.code, end.stderr).toBe(3)
    const lines = end.stdout.trim().split('\n')
    expect(lines.length).toBeGreaterThanOrEqual(2)
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({region: 'stuck', state: {healthy: 5, servers: 8}})
  }, 120_000)

  it('says which flag is wrong, and a window with no metrics, before or without writing anything', async () => {
    const args = ['calibrate', '--target-group', fx.targets.targetGroupArn, '--load-balancer', fx.targets.loadBalancer]
    const badGroup = await sluice(['calibrate', '--target-group', 'mailbox', '--load-balancer', fx.targets.loadBalancer], {env: fx.env})
    expect(badGroup.code).toBe(2)
    expect(badGroup.stderr).toContain('--target-group: expected a target group ARN')
    const badUntil = await sluice([...args, '--until', 'yesterday'], {env: fx.env})
    expect(badUntil.code).toBe(2)
    expect(badUntil.stderr).toContain('--until: expected an ISO 8601 time')
    const longWindow = await sluice([...args, '--window', '720h', '--period', '60'], {env: fx.env})
    expect(longWindow.code).toBe(2)
    expect(longWindow.stderr).toContain('--period: CloudWatch keeps one-minute points for 15 days only')
    const empty = await sluice([...args, '--window', '1h'], {env: fx.env})
    expect(empty.code).toBe(1)
    expect(empty.stderr).toContain('no requests recorded for target group')
  }, 60_000)
})
