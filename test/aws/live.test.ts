import {chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {DescribeRulesCommand, DescribeTargetGroupAttributesCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {afterEach, beforeEach, describe, expect, inject, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {liveCopy, type LiveTargets} from './live-runbook.js'
import {awsTestEnv, clientConfig} from './moto.js'
import {RecordingProxy, route53Throttling} from './proxy.js'
import {readWeights, registeredTargets} from './readback.js'
import {putAlbMetrics, seedLoadBalancer, seedZone, targetGroupDimension, uniqueName} from './seed.js'

const moto = inject('motoEndpoint')
const cfg = clientConfig(moto)

interface Fixture {
  proxy: RecordingProxy
  targets: LiveTargets
  dir: string
  hook: string
  hookLog: string
  env: Record<string, string>
}

let fx: Fixture

const weights = (zoneId: string, record: string) => readWeights(cfg, zoneId, record)
const registered = (arn: string) => registeredTargets(cfg, arn)

async function groupAttributes(arn: string): Promise<Record<string, string>> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const out = await elb.send(new DescribeTargetGroupAttributesCommand({TargetGroupArn: arn}))
  elb.destroy()
  return Object.fromEntries((out.Attributes ?? []).map((a) => [a.Key!, a.Value!]))
}

async function ruleCount(listenerArn: string): Promise<number> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const out = await elb.send(new DescribeRulesCommand({ListenerArn: listenerArn}))
  elb.destroy()
  return (out.Rules ?? []).filter((r) => !r.IsDefault).length
}

/** Minute points from five minutes ago to ten minutes ahead, for the load balancer and the group. */
async function seedMetrics(errorPercent: number): Promise<void> {
  const now = Date.now()
  const points = Array.from({length: 16}, (_, i) => ({at: new Date(now + (i - 5) * 60_000), requests: 1000, target5xx: errorPercent * 10, elb5xx: 0}))
  await putAlbMetrics(cfg, {loadBalancer: fx.targets.loadBalancer, targetGroup: targetGroupDimension(fx.targets.targetGroupArn), points})
}

/** The weights each ChangeResourceRecordSets carried, in order, from the calls the proxy saw. */
function weightChanges(proxy: RecordingProxy): Array<Record<string, number>> {
  return proxy.of('ChangeResourceRecordSets').filter((c) => c.status === 200).map((c) => {
    const sets = [...c.body.matchAll(/<SetIdentifier>([^<]+)<\/SetIdentifier>[\s\S]*?<Weight>(\d+)<\/Weight>/g)]
    return Object.fromEntries(sets.map((m) => [m[1], Number(m[2])]))
  })
}

const mutating = ['ChangeResourceRecordSets', 'RegisterTargets', 'DeregisterTargets', 'CreateRule', 'DeleteRule', 'ModifyTargetGroupAttributes']

beforeEach(async () => {
  const proxy = new RecordingProxy(moto)
  await proxy.start()
  const name = uniqueName('mail')
  const zone = await seedZone(cfg, {zoneName: `${name}.example.com`, record: 'outlook', ttl: 1, sets: {mailbox: 100, maintenance: 0}})
  const lb = await seedLoadBalancer(cfg, {name, targets: 8})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-live-'))
  const hookLog = join(dir, 'hooks.log')
  const hook = join(dir, 'hook.sh')
  writeFileSync(hook, `#!/bin/sh\necho "$1 $2 $3 $4 target=$SLUICE_TARGET_ID" >> '${hookLog}'\n`)
  chmodSync(hook, 0o755)
  fx = {
    proxy,
    dir,
    hook,
    hookLog,
    targets: {zoneId: zone.zoneId, record: zone.record, targetGroupArn: lb.targetGroupArn, listenerArn: lb.listenerArn, loadBalancer: lb.loadBalancerDimension},
    env: {...awsTestEnv(proxy.endpoint), SLUICE_STATE: join(dir, 'state')},
  }
})

afterEach(async () => {
  await fx.proxy.stop()
})

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

    const steps = [[0, 100], [1, 99], [5, 95], [25, 75], [50, 50], [75, 25], [100, 0]]
    const expected = steps.map(([mailbox, maintenance]) => JSON.stringify({mailbox, maintenance}))
    expect(seen.map((s) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(s)).sort())))).toEqual([JSON.stringify({mailbox: 100, maintenance: 0}), ...expected])
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
    expect(hooks[0]).toMatch(/^restart 10\.0\.1\.\d+:443 10\.0\.1\.\d+ 443 target=10\.0\.1\.\d+:443$/)
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
    expect(await groupAttributes(fx.targets.targetGroupArn)).toMatchObject({'slow_start.duration_seconds': '60', 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage': '50'})
    // The freeze recorded and cleared.
    expect(existsSync(join(fx.dir, 'state', 'freeze.json'))).toBe(false)
  }, 120_000)

  it('a gate fails when the seeded 5xx exceed its threshold, and the weights go back, read back from the API', async () => {
    await seedMetrics(5)
    const file = join(fx.dir, 'ramp.yaml')
    writeFileSync(file, `name: ramp-into-errors
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
`)
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr).toBe(3)
    const json = JSON.parse(result.stdout)
    expect(json.outcome).toBe('gate-failed')
    expect(json.message).toContain('error-rate ≤ 2% over 60 s (mailbox)')
    expect(json.message).toContain('measured 5.00%')
    expect(json.message).toContain('threshold 2.00%')
    expect(weightChanges(fx.proxy)).toEqual([{mailbox: 0, maintenance: 100}, {mailbox: 10, maintenance: 90}, {mailbox: 0, maintenance: 100}])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
  }, 60_000)
})

describe('more shipped runbooks live, and what status and iam-policy say', () => {
  it('thread-hold-recovery: the restriction goes on, every target is restarted in batches of 5 within the budget, and status reads it all back', async () => {
    const name = uniqueName('cafe')
    const lb = await seedLoadBalancer(cfg, {name, targets: 30})
    const targets = {...fx.targets, targetGroupArn: lb.targetGroupArn, listenerArn: lb.listenerArn, loadBalancer: lb.loadBalancerDimension}
    const now = Date.now()
    await putAlbMetrics(cfg, {
      loadBalancer: lb.loadBalancerDimension,
      targetGroup: targetGroupDimension(lb.targetGroupArn),
      points: Array.from({length: 16}, (_, i) => ({at: new Date(now + (i - 5) * 60_000), requests: 60_000, target5xx: 0, elb5xx: 0})),
    })
    const file = liveCopy('runbooks/thread-hold-recovery.yaml', targets, fx.dir, fx.hook)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(0)
    const batches = fx.proxy.of('DeregisterTargets').map((c) => [...c.body.matchAll(/Targets\.member\.\d+\.Id=/g)].length)
    expect(batches).toEqual([5, 5, 5, 5, 5, 5])
    expect(await registered(lb.targetGroupArn)).toHaveLength(30)
    // The headroom guard read the request rate before each batch.
    expect(fx.proxy.count('GetMetricData')).toBeGreaterThanOrEqual(6)
    // The restriction stays on (the runbook does not lift it), and status finds it by its tag.
    expect(await ruleCount(lb.listenerArn)).toBe(1)
    const status = await sluice(['status', file, '--json'], {env: fx.env})
    expect(status.code, status.stderr).toBe(0)
    const s = JSON.parse(status.stdout)
    expect(s.targetGroups).toEqual([expect.objectContaining({pool: 'cafe', total: 30, counts: {healthy: 30}})])
    expect(s.restrictions.rules).toEqual([{type: 'decommissioned-lookup', paths: ['/routing/lookup/legacy-*'], headers: {}, retryAfterSeconds: 600}])
    expect(s.freeze).toBeNull()
  }, 120_000)

  it('iam-policy allows exactly the calls the runbook makes, on its own resources', async () => {
    const file = liveCopy('runbooks/outlook-staged-return.yaml', fx.targets, fx.dir, fx.hook)
    const out = await sluice(['iam-policy', file, '--json'], {env: fx.env})
    expect(out.code, out.stderr).toBe(0)
    const policy = JSON.parse(out.stdout) as {Statement: Array<{Action: string[]; Resource: string[]; Condition?: unknown}>}
    const actions = policy.Statement.flatMap((s) => s.Action).sort()
    expect(actions).toEqual([
      'cloudwatch:GetMetricData',
      'elasticloadbalancing:AddTags', 'elasticloadbalancing:CreateRule', 'elasticloadbalancing:DeleteRule',
      'elasticloadbalancing:DeregisterTargets', 'elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTags',
      'elasticloadbalancing:DescribeTargetGroupAttributes', 'elasticloadbalancing:DescribeTargetHealth',
      'elasticloadbalancing:ModifyTargetGroupAttributes', 'elasticloadbalancing:RegisterTargets',
      'route53:ChangeResourceRecordSets', 'route53:GetChange', 'route53:ListResourceRecordSets',
    ])
    const on = (action: string) => policy.Statement.find((s) => s.Action.includes(action))!
    expect(on('route53:ChangeResourceRecordSets').Resource).toEqual([`arn:aws:route53:::hostedzone/${fx.targets.zoneId}`])
    expect(on('route53:ChangeResourceRecordSets').Condition).toMatchObject({'ForAllValues:StringEquals': {'route53:ChangeResourceRecordSetsActions': ['UPSERT']}})
    expect(on('elasticloadbalancing:RegisterTargets').Resource).toEqual([fx.targets.targetGroupArn])
    expect(on('elasticloadbalancing:CreateRule').Resource).toContain(fx.targets.listenerArn)
    // Every call the live run of this runbook made is one the policy allows.
    const asIam: Record<string, string> = {Route53: 'route53', ELBv2: 'elasticloadbalancing', CloudWatch: 'cloudwatch'}
    await seedMetrics(0)
    const run = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(run.code, run.stderr).toBe(0)
    const made = new Set(fx.proxy.calls.filter((c) => asIam[c.service]).map((c) => `${asIam[c.service]}:${c.operation}`))
    for (const call of made) expect(actions, call).toContain(call)
  }, 120_000)
})

describe('live errors change nothing', () => {
  const runbookWith = (targets: string) => {
    const file = join(fx.dir, 'bad.yaml')
    writeFileSync(file, `name: bad\ntargets:\n${targets}\nsteps:\n  - {action: ramp, set: mailbox, schedule: [50], bake: 1}\n  - {action: cycle, pool: mailbox, batch: 1}\n  - {action: restrict, type: sync, paths: [/sync/*]}\n`)
    return file
  }
  const good = () => ({
    dns: `  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}`,
    tg: `  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}`,
    listener: `  listener: ${fx.targets.listenerArn}`,
  })

  it.each([
    ['an unknown hosted zone', (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace(fx.targets.zoneId, 'Z0000000000NOSUCH')}), /Route53 ListResourceRecordSets on hosted zone Z0000000000NOSUCH failed: NoSuchHostedZone/],
    ['an unknown record', (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace(`record: ${fx.targets.record}`, 'record: nosuch.example.com.')}), /no weighted A record nosuch\.example\.com\. in hosted zone/],
    ['an unknown set identifier', (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace('maintenance: maintenance', 'standby: maintenance')}), /has no weighted set "standby"; it has mailbox, maintenance/],
    ['an unknown target group', (g: ReturnType<typeof good>) => ({...g, tg: g.tg.replace(/targetgroup\/[^/]+\//, 'targetgroup/nosuch/')}), /ELBv2 DescribeTargetHealth on target group mailbox .*targetgroup\/nosuch\/.* failed: TargetGroupNotFound/],
    ['an unknown listener', (g: ReturnType<typeof good>) => ({...g, listener: g.listener.replace(/\/[^/]+$/, '/0000000000000000')}), /ELBv2 DescribeRules on listener .*\/0000000000000000 failed: ListenerNotFound/],
  ])('%s exits 1, names the resource, and changes nothing', async (_name, mutate, message) => {
    const g = mutate(good())
    const file = runbookWith([g.dns, g.tg, g.listener].join('\n'))
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(message)
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
  }, 30_000)

  it('throttling is retried with backoff and the change still lands once', async () => {
    fx.proxy.inject({operation: 'ChangeResourceRecordSets', times: 2, ...route53Throttling})
    const file = join(fx.dir, 'shift.yaml')
    writeFileSync(file, `name: shift\ntargets:\n  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}\nsteps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code, result.stderr).toBe(0)
    const attempts = fx.proxy.of('ChangeResourceRecordSets')
    expect(attempts.map((a) => a.status)).toEqual([400, 400, 200])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 60, maintenance: 40})
  }, 30_000)

  it('AccessDenied names the operation, the resource and the IAM permission to grant', async () => {
    fx.proxy.inject({operation: 'ChangeResourceRecordSets', times: 10, status: 403, contentType: 'text/xml', body: '<?xml version="1.0"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/oncall is not authorized to perform: route53:ChangeResourceRecordSets</Message></Error><RequestId>1</RequestId></ErrorResponse>'})
    const file = join(fx.dir, 'denied.yaml')
    writeFileSync(file, `name: denied\ntargets:\n  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}\nsteps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain(`Route53 ChangeResourceRecordSets on ${fx.targets.zoneId} ${fx.targets.record} A was denied: the caller needs IAM permission route53:ChangeResourceRecordSets`)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
  }, 30_000)

  it('a live run without a terminal and without --yes is refused with exit 4 and changes nothing', async () => {
    const file = join(fx.dir, 'shift.yaml')
    writeFileSync(file, `name: shift\ntargets:\n  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}\nsteps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file], {env: fx.env})
    expect(result.code).toBe(4)
    expect(result.stderr).toContain('pass --yes')
    // The plan was shown as a diff before the question.
    expect(result.stderr).toMatch(/mailbox=100 maintenance=0 → mailbox=60 maintenance=40/)
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
  }, 30_000)
})

describe('what loads the AWS SDK', () => {
  const spy = (file: string) => ({NODE_OPTIONS: `--import ${join(process.cwd(), 'test/helpers/module-spy.mjs')}`, SLUICE_MODULE_SPY: file})

  it('--help and a dry run load no AWS SDK module; a live run does', async () => {
    const help = join(fx.dir, 'help.log')
    const dry = join(fx.dir, 'dry.log')
    const live = join(fx.dir, 'live.log')
    await sluice(['--help'], {env: spy(help)})
    const rehearsal = await sluice(['run', 'runbooks/regional-dns-ramp.yaml', '--dry-run'], {env: spy(dry)})
    expect(rehearsal.code).toBe(0)
    const status = await sluice(['status', liveCopy('runbooks/naive-full-return.yaml', fx.targets, fx.dir, fx.hook)], {env: {...fx.env, ...spy(live)}})
    expect(status.code, status.stderr).toBe(0)
    const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '')
    expect(read(help)).toBe('')
    expect(read(dry)).toBe('')
    expect(read(live)).toContain('@aws-sdk/client-elastic-load-balancing-v2')
  }, 60_000)
})
