import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {cfg, registered, ruleCount, seedMetrics as seedFixtureMetrics, useLiveFixture, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'
import {putAlbMetrics, seedLoadBalancer, targetGroupDimension, uniqueName} from './seed.js'

let fx: Fixture
const current = useLiveFixture()
beforeEach(() => {
  fx = current()
})
const seedMetrics = (errorPercent: number) => seedFixtureMetrics(fx, errorPercent)

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
