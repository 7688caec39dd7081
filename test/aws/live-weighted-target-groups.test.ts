import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {DescribeListenersCommand, DescribeRulesCommand, ElasticLoadBalancingV2Client, type Action} from '@aws-sdk/client-elastic-load-balancing-v2'
import {beforeEach, describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {targetGroupDimension} from '../../src/aws/cloudwatch.js'
import type {GateVerdict} from '../../src/ports/io.js'
import {cfg, seedMetrics, useLiveFixture, type Fixture} from './live-fixture.js'
import {putAlbMetrics, seedTargetGroupBeside, seedWeightedRule} from './seed.js'

// The weighted-target-groups steps here say `split: off`: what they test is the rule's changes, and their
// CloudWatch seed counts the blue group only. The split served, measured from each group's
// RequestCount as it lags a change, is test/aws/live-split-served.test.ts.

// The ALB-native ramp (weighted-target-groups) through the real SDK against moto, gated by
// CloudWatch like the DNS ramp. moto keeps a rule's weighted forward as given, so what sluice
// sent is read back from the API; the weights each change carried are read from the proxy.

let fx: Fixture
let green: string
let ruleArn: string
const current = useLiveFixture()

beforeEach(async () => {
  fx = current()
  green = await seedTargetGroupBeside(cfg, fx.targets.targetGroupArn)
  ruleArn = await seedWeightedRule(cfg, fx.targets.listenerArn, fx.targets.targetGroupArn, green, true)
})

function runbook(name: string, step: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  targetGroups: {blue: ${fx.targets.targetGroupArn}, green: ${green}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
${step}`,
  )
  return file
}

const gated = (at: string) => `  - action: weighted-target-groups
    split: off
    ${at}
    pool: green
    schedule: [10, 50, 100]
    bake: 2
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 1, successes: 2}
`

/** The forward of the rule (or the listener's default action), by target group ARN. */
async function forwardOf(arn: string): Promise<Action> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const actions = arn.includes(':listener-rule/')
      ? (await elb.send(new DescribeRulesCommand({RuleArns: [arn]}))).Rules![0].Actions!
      : (await elb.send(new DescribeListenersCommand({ListenerArns: [arn]}))).Listeners![0].DefaultActions!
    return actions.find((a) => a.Type === 'forward')!
  } finally {
    elb.destroy()
  }
}

const weightsOf = (forward: Action) =>
  Object.fromEntries(
    (forward.ForwardConfig?.TargetGroups ?? []).map((t) => [
      t.TargetGroupArn === green ? 'green' : t.TargetGroupArn === fx.targets.targetGroupArn ? 'blue' : t.TargetGroupArn,
      t.Weight,
    ]),
  )

/** The weights each successful ModifyRule or ModifyListener carried, in order, as blue/green. */
function weightChanges(operation: 'ModifyRule' | 'ModifyListener'): Array<Record<string, number>> {
  return fx.proxy
    .of(operation)
    .filter((c) => c.status === 200)
    .map((c) => {
      const params = new URLSearchParams(c.body)
      const out: Record<string, number> = {}
      for (const [key, value] of params) {
        const m = /ForwardConfig\.TargetGroups\.member\.(\d+)\.TargetGroupArn$/.exec(key)
        if (!m) continue
        const weightKey = key.replace(/TargetGroupArn$/, 'Weight')
        out[value === green ? 'green' : value === fx.targets.targetGroupArn ? 'blue' : value] = Number(params.get(weightKey))
      }
      return out
    })
}

describe('weighted-target-groups against moto', () => {
  it('shifts a rule to green step by step behind its gate, one ModifyRule per step, keeping the stickiness', async () => {
    await seedMetrics(fx, 0)
    const file = runbook('shift-green', gated(`rule: ${ruleArn}`))
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(JSON.parse(result.stdout).outcome).toBe('completed')
    expect(weightChanges('ModifyRule')).toEqual([
      {blue: 90, green: 10},
      {blue: 50, green: 50},
      {blue: 0, green: 100},
    ])
    const forward = await forwardOf(ruleArn)
    expect(weightsOf(forward)).toEqual({blue: 0, green: 100})
    expect(forward.ForwardConfig?.TargetGroupStickinessConfig).toEqual({Enabled: true, DurationSeconds: 300})
  }, 120_000)

  it('a failed gate puts the rule back to the weights it started from', async () => {
    await seedMetrics(fx, 5)
    const file = runbook('shift-into-errors', gated(`rule: ${ruleArn}`))
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr).toBe(3)
    const json = JSON.parse(result.stdout)
    expect(json.outcome).toBe('gate-failed')
    expect(json.message).toContain('measured 5.00%')
    expect(weightChanges('ModifyRule')).toEqual([
      {blue: 90, green: 10},
      {blue: 100, green: 0},
    ])
    expect(weightsOf(await forwardOf(ruleArn))).toEqual({blue: 100, green: 0})
  }, 120_000)

  it('plan --live says it did not read the split the step shifts, rather than that every step finds what it expects (issue 48)', async () => {
    const file = runbook(
      'plan-unread',
      `  - {action: freeze, reason: INC-3}
  - {action: weighted-target-groups, split: off, rule: ${ruleArn}, pool: green, schedule: [10, 100], bake: 2}
`,
    )
    const out = await sluice(['plan', file, '--live'], {env: fx.env})
    expect(out.code, out.stderr).toBe(0)
    expect(out.stdout).toMatch(/^ {3}\? not read: a live plan does not read what this weighted-target-groups step changes; the step reads it when it starts$/m)
    expect(out.stdout).not.toContain('Every step finds what it expects.')
    expect(out.stdout.trimEnd().split('\n').at(-1)).toBe('Every step read finds what it expects; step 2 was not read (marked ?).')
    const json = await sluice(['plan', file, '--live', '--json'], {env: fx.env})
    expect(json.code, json.stderr).toBe(0)
    const plan = JSON.parse(json.stdout) as {live: {drift: number; unread: number}; steps: Array<{unread?: string[]}>}
    expect(plan.live).toMatchObject({drift: 0, unread: 1})
    expect(plan.steps.map((s) => s.unread?.length ?? 0)).toEqual([0, 1])
  }, 60_000)

  it("on a listener's default action (a plain forward to blue), adds green to the forward and shifts with ModifyListener", async () => {
    await seedMetrics(fx, 0)
    const file = runbook(
      'shift-default',
      `  - {action: weighted-target-groups, split: off, rule: ${fx.targets.listenerArn}, pool: green, schedule: [25, 100], bake: 1}
`,
    )
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(0)
    expect(weightChanges('ModifyListener')).toEqual([
      {blue: 75, green: 25},
      {blue: 0, green: 100},
    ])
    expect(fx.proxy.of('ModifyRule')).toEqual([])
    expect(weightsOf(await forwardOf(fx.targets.listenerArn))).toEqual({blue: 0, green: 100})
  }, 120_000)

  /** A minute a point around now for one target group: `requests` a minute, `errorPercent` of them 5xx. */
  const seedGroup = (arn: string, requests: number, errorPercent: number) =>
    putAlbMetrics(cfg, {
      loadBalancer: fx.targets.loadBalancer,
      targetGroup: targetGroupDimension(arn),
      points: Array.from({length: 16}, (_, i) => ({
        at: new Date(Date.now() + (i - 5) * 60_000),
        requests,
        target5xx: (requests * errorPercent) / 100,
        elb5xx: 0,
      })),
    })

  it('mid-outage, a gate relative to the stable group passes green at 31% errors beside blue at 30%, reading both groups from CloudWatch', async () => {
    await Promise.all([seedGroup(fx.targets.targetGroupArn, 10_000, 30), seedGroup(green, 1000, 31)])
    const file = runbook(
      'relative-green',
      `  - action: weighted-target-groups
    split: off
    rule: ${ruleArn}
    pool: green
    schedule: [10, 100]
    bake: 2
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 1, successes: 2, pool: green, relativeTo: stable}
`,
    )
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(0)
    const verdicts = (JSON.parse(result.stdout) as {steps: Array<{verdicts: GateVerdict[]}>}).steps[0].verdicts
    expect(verdicts.length).toBeGreaterThan(0)
    for (const v of verdicts) {
      expect(v).toMatchObject({outcome: 'pass', requests: 1000, baseline: {of: 'pool blue', requests: 10_000}})
      expect(v.value).toBeCloseTo(31, 6)
      expect(v.bound).toBeCloseTo(32, 6)
    }
    expect(weightsOf(await forwardOf(ruleArn))).toEqual({blue: 0, green: 100})
  }, 120_000)

  it('at 1% a gate with minRequests stays inconclusive on the few requests CloudWatch counts, and the rule goes back', async () => {
    await Promise.all([seedGroup(fx.targets.targetGroupArn, 10_000, 0), seedGroup(green, 40, 0)])
    const file = runbook(
      'too-few',
      `  - action: weighted-target-groups
    split: off
    rule: ${ruleArn}
    pool: green
    schedule: [1, 100]
    bake: 2
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 1, successes: 2, pool: green, minRequests: 100}
`,
    )
    const result = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(3)
    const json = JSON.parse(result.stdout) as {message: string; steps: Array<{verdicts: GateVerdict[]}>}
    expect(json.steps[0].verdicts.map((v) => [v.outcome, v.requests, v.why])).toEqual(
      Array(3).fill(['inconclusive', 40, '40 requests in the window, fewer than minRequests 100']),
    )
    expect(json.message).toContain('was inconclusive 3 times at green 1%')
    expect(weightChanges('ModifyRule')).toEqual([
      {blue: 99, green: 1},
      {blue: 100, green: 0},
    ])
  }, 120_000)

  it('rollback of a finished shift puts the rule back, read back from the API', async () => {
    await seedMetrics(fx, 0)
    const file = runbook('shift-and-back', gated(`rule: ${ruleArn}`))
    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr + run.stdout).toBe(0)
    const runId = JSON.parse(run.stdout).runId as string
    const back = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(back.code, back.stderr + back.stdout).toBe(0)
    expect(back.stdout).toContain(`set the weights of ${ruleArn} back to blue=100 green=0`)
    expect(weightsOf(await forwardOf(ruleArn))).toEqual({blue: 100, green: 0})
  }, 120_000)
})
