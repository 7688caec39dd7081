import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {seedMetrics as seedFixtureMetrics, useLiveFixture, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))
const seedMetrics = (errorPercent: number) => seedFixtureMetrics(fx, errorPercent)

describe('more shipped runbooks live, and what status and iam-policy say', () => {
  it('iam-policy allows exactly the calls the runbook makes, on its own resources', async () => {
    const file = liveCopy('runbooks/outlook-staged-return.yaml', fx.targets, fx.dir, fx.hook)
    const out = await sluice(['iam-policy', file, '--json'], {env: fx.env})
    expect(out.code, out.stderr).toBe(0)
    const policy = JSON.parse(out.stdout) as {Statement: Array<{Action: string[]; Resource: string[]; Condition?: unknown}>}
    const actions = policy.Statement.flatMap((s) => s.Action).sort()
    expect(actions).toEqual([
      'cloudwatch:GetMetricData',
      // The remediate hook names {ip}: on an instance target group, the address comes from EC2.
      'ec2:DescribeInstances',
      'elasticloadbalancing:AddTags',
      'elasticloadbalancing:CreateRule',
      'elasticloadbalancing:DeleteRule',
      'elasticloadbalancing:DeregisterTargets',
      'elasticloadbalancing:DescribeRules',
      'elasticloadbalancing:DescribeTags',
      'elasticloadbalancing:DescribeTargetGroupAttributes',
      'elasticloadbalancing:DescribeTargetHealth',
      'elasticloadbalancing:ModifyTargetGroupAttributes',
      'elasticloadbalancing:RegisterTargets',
      'route53:ChangeResourceRecordSets',
      'route53:GetChange',
      'route53:ListResourceRecordSets',
    ])
    const on = (action: string) => policy.Statement.find((s) => s.Action.includes(action))!
    expect(on('route53:ChangeResourceRecordSets').Resource).toEqual([`arn:aws:route53:::hostedzone/${fx.targets.zoneId}`])
    expect(on('route53:ChangeResourceRecordSets').Condition).toMatchObject({
      'ForAllValues:StringEquals': {'route53:ChangeResourceRecordSetsActions': ['UPSERT']},
    })
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
