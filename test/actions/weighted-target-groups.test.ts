import {describe, expect, it} from 'vitest'
import {actionOf} from '../../src/actions/registry.js'
import {ForwardWeights} from '../../src/aws/forward-weights.js'
import type {ForwardCalls} from '../../src/aws/forward-weights.js'
import {InputError} from '../../src/errors.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {lockedResources} from '../../src/wiring/live.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {RecordingIO} from '../helpers/fakes.js'

const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`
const rule = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/api/9f0d3a2b1c4e5f67/abcdef0123456789/0123456789abcdef'
const listener = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/api/9f0d3a2b1c4e5f67/abcdef0123456789'

/** A runbook on AWS with target groups east and west (lines 1–7), then `steps` from line 8. */
const onAws = (steps: string) => `name: wtg
targets:
  targetGroups: {east: ${tg('east')}, west: ${tg('west')}}
  metrics: {source: cloudwatch, loadBalancer: app/api/9f0d3a2b1c4e5f67}
rehearsal: {scenario: two-regions, setup: cap-shed-slow-start, startAt: 60}
defaults: {bake: 60, gate: {window: 30, interval: 5, successes: 2}}
steps:
${steps}`

const onHaproxy = (steps: string, rampMap = '    rampMap: /etc/haproxy/ramp.map\n') => `name: wtg
targets:
  haproxy:
    socket: /run/haproxy/admin.sock
    backends: {east: be_east, west: be_west}
${rampMap}steps:
${steps}`

function problems(text: string): string[] {
  try {
    parseRunbook('wtg.yaml', text)
  } catch (error) {
    if (error instanceof InputError) return [...error.problems]
    throw error
  }
  throw new Error('the loader accepted it')
}

describe('weighted-target-groups: loading', () => {
  it('on AWS: needs a listener rule or listener ARN, a pool of targets.targetGroups, and a schedule as a ramp takes it', () => {
    expect(problems(onAws('  - {action: weighted-target-groups, pool: west, schedule: [10, 50]}\n'))).toEqual([
      expect.stringMatching(
        /^wtg\.yaml:8:5: steps\[0\]: expected rule: the ARN of the ALB listener rule whose forward action splits traffic between target groups/,
      ),
    ])
    expect(problems(onAws(`  - {action: weighted-target-groups, rule: ${tg('east')}, pool: west, schedule: [10, 50]}\n`))[0]).toMatch(
      /^wtg\.yaml:8:44: steps\[0\]\.rule: expected rule: .*; got arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup\/east/,
    )
    expect(problems(onAws(`  - {action: weighted-target-groups, rule: ${rule}, pool: north, schedule: [50, 10]}\n`))).toEqual([
      expect.stringMatching(new RegExp(`^wtg\\.yaml:8:\\d+: steps\\[0\\]\\.pool: no pool "north" to weigh in listener rule ${rule}; it has east, west$`)),
      expect.stringMatching(/^wtg\.yaml:8:\d+: steps\[0\]\.schedule\[1\]: expected each step above the one before, got 10% after 50%$/),
    ])
  })

  it('on HAProxy: the split is the ramp map, so a rule is refused and a ramp map is needed', () => {
    expect(problems(onHaproxy(`  - {action: weighted-target-groups, rule: ${rule}, pool: west, schedule: [50]}\n`))).toEqual([
      expect.stringMatching(/^wtg\.yaml:8:44: steps\[0\]\.rule: names an ALB listener rule, but on HAProxy the split between backends is the ramp map/),
    ])
    expect(problems(onHaproxy('  - {action: weighted-target-groups, pool: west, schedule: [50]}\n', ''))).toEqual([
      expect.stringMatching(
        /^wtg\.yaml:7:5: steps\[0\]: on HAProxy a weighted-target-groups step moves traffic through the ramp map: targets.haproxy.rampMap names it$/,
      ),
    ])
  })

  it('plans, locks and asks IAM for the rule it changes (ModifyRule on the rule; ModifyListener for a default action)', () => {
    const runbook = parseRunbook(
      'wtg.yaml',
      onAws(`  - {action: weighted-target-groups, rule: ${rule}, pool: west, schedule: [10, 50], gate: {metric: error-rate, threshold: 1, pool: west}}
  - {action: weighted-target-groups, rule: ${listener}, pool: east, schedule: [100]}
`),
    )
    const [onRule, onListener] = runbook.steps
    expect(actionOf(onRule).plan(onRule, {targets: runbook.targets})).toEqual([
      `west 10% → 50% of listener rule ${rule} (the rest to east)`,
      'bake 60 s per step',
      "after each change the bake starts once east and west's requests show the split within ±5 points of it (and at least half the step), waiting up to 300 s",
      'gate: error-rate ≤ 1% over 30 s (west), every 5 s, 2 passes in a row; on failure: rollback',
      'rollback: back through the weights it passed, each judged on the pool receiving the traffic; `sluice rollback --now` moves at once',
    ])
    expect(lockedResources(runbook)).toEqual([`elbv2:${rule}`, `elbv2:${listener}`])
    expect(
      actionOf(onRule)
        .iam(onRule, runbook.targets)
        .flatMap((s) => [s.Action, s.Resource]),
    ).toEqual([['elasticloadbalancing:DescribeRules'], ['*'], ['elasticloadbalancing:ModifyRule'], [rule]])
    expect(
      actionOf(onListener)
        .iam(onListener, runbook.targets)
        .flatMap((s) => s.Action),
    ).toEqual(['elasticloadbalancing:DescribeListeners', 'elasticloadbalancing:ModifyListener'])
  })
})

describe('weighted-target-groups: the ALB adapter checks what moto would take', () => {
  /** ELBv2 calls that answer DescribeRules with a forward to `groups` and record every call made. */
  function clients(groups: string[]): {clients: ForwardCalls; sent: string[]} {
    const sent: string[] = []
    const made = (call: string) => async () => {
      sent.push(call)
      return {}
    }
    return {
      clients: {
        describeRules: async () => {
          sent.push('DescribeRules')
          return {Rules: [{Actions: [{Type: 'forward', ForwardConfig: {TargetGroups: groups.map((g) => ({TargetGroupArn: g, Weight: 1}))}}]}]}
        },
        modifyRule: made('ModifyRule'),
        describeListeners: made('DescribeListeners'),
        modifyListener: made('ModifyListener'),
      },
      sent,
    }
  }

  it('refuses weights an ALB would refuse: above 999, fractions, more than five groups, all zero; nothing is modified', async () => {
    const pools = {a: tg('a'), b: tg('b'), c: tg('c'), d: tg('d'), e: tg('e'), f: tg('f')}
    const {clients: c, sent} = clients([tg('a'), tg('b')])
    const port = new ForwardWeights(c, rule, pools)
    await expect(port.applyWeights({a: 1000, b: 0})).rejects.toThrow('a weight of 1000 for a is out of range; an ALB takes whole numbers from 0 to 999')
    await expect(port.applyWeights({a: 1.5})).rejects.toThrow('a weight of 1.5 for a is out of range')
    await expect(port.applyWeights({a: 1, b: 1, c: 1, d: 1, e: 1, f: 1})).rejects.toThrow('a forward takes at most 5 target groups, and these weights name 6')
    await expect(port.applyWeights({a: 0, b: 0})).rejects.toThrow('every weight would be 0')
    await expect(port.applyWeights({z: 1})).rejects.toThrow('no target group for "z"')
    expect(sent.filter((s) => s !== 'DescribeRules')).toEqual([])
    expect(await port.readWeights()).toEqual({a: 1, b: 1, c: 0, d: 0, e: 0, f: 0})
  })
})

describe('weighted-target-groups: rehearsed', () => {
  /** West's share of the attempts reaching the pools, 5 s after the first step. */
  async function westShareAfterStep(text: string): Promise<number> {
    const runbook = parseRunbook('wtg.yaml', text)
    const report = await rehearse(runbook, {operator: 'test', io: new RecordingIO('no-tty'), signal: new AbortController().signal}, {pace: null})
    expect(report.run.outcome).toBe('completed')
    const {record, startAt} = report.rehearsal
    const i = record.t.findIndex((t) => t >= startAt + 5)
    const [east, west] = ['east', 'west'].map((name) => record.pools.find((p) => p.name === name)!.offered[i])
    return west / (east + west)
  }

  it('the load balancer splits the next request: half the traffic reaches west at once, where a DNS ramp waits out the TTL', async () => {
    const split = await westShareAfterStep(onAws(`  - {action: weighted-target-groups, rule: ${rule}, pool: west, schedule: [50], bake: 60}\n`))
    expect(split).toBeGreaterThan(0.45)
    expect(split).toBeLessThan(0.55)
    const dns = await westShareAfterStep(
      onAws('  - {action: ramp, set: api-west, schedule: [50], bake: 60}\n').replace(
        'targets:\n',
        'targets:\n  dns: {zone: Z2FDTNDATAQYW2, record: api.example.com., ttl: 60, sets: {api-east: east, api-west: west}}\n',
      ),
    )
    expect(dns).toBeLessThan(0.2)
  })
})
