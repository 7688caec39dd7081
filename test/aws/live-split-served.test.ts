import {CloudWatchClient, GetMetricDataCommand, PutMetricDataCommand, type MetricDatum} from '@aws-sdk/client-cloudwatch'
import {
  DescribeListenersCommand,
  DescribeRulesCommand,
  ElasticLoadBalancingV2Client,
  ModifyListenerCommand,
  ModifyRuleCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {beforeEach, describe, expect, it} from 'vitest'
import {CloudWatchMetrics, targetGroupDimension} from '../../src/aws/cloudwatch.js'
import {ForwardWeights} from '../../src/aws/forward-weights.js'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {WeightMap} from '../../src/ports/control-plane.js'
import {control, FakeClock, RecordingIO} from '../helpers/fakes.js'
import {cfg, useLiveFixture, type Fixture} from './live-fixture.js'
import {seedTargetGroupBeside, seedWeightedRule} from './seed.js'

// The split served, measured from CloudWatch's per-target-group RequestCount (issue 49), through
// the real SDK and the recording proxy to moto. moto answers what was put, at once; a load
// balancer's counts of a change arrive later (the change applied, the minute published). So the
// test plays the ALB: as the run's clock passes, it puts each target group's requests for every
// 10 s, split as the rule's weights stood `lag` seconds before. The run's clock is virtual, so
// minutes of CloudWatch pass in a moment; the calls are real.

let fx: Fixture
let green: string
let ruleArn: string
const current = useLiveFixture()

beforeEach(async () => {
  fx = current()
  green = await seedTargetGroupBeside(cfg, fx.targets.targetGroupArn)
  ruleArn = await seedWeightedRule(cfg, fx.targets.listenerArn, fx.targets.targetGroupArn, green)
})

/** An ALB's counts as CloudWatch gets them: 100 requests a second, split as the rule stood `lag` s before. */
class LaggingAlb extends FakeClock {
  private readonly changes: Array<{at: number; weights: WeightMap}> = [{at: 0, weights: {blue: 100, green: 0}}]
  private put = 0
  constructor(
    private readonly cw: CloudWatchClient,
    private readonly lag: number,
    /** Seconds after now this ALB's time starts, so that two in one test count in hours of their own. */
    offset: number,
  ) {
    super()
    // Epoch seconds, on a 10 s mark: CloudWatch keeps what is put near the present.
    this.t = Math.floor(Date.now() / 10_000) * 10 + offset
    this.put = this.t
  }
  changed(weights: WeightMap): void {
    this.changes.push({at: this.t, weights})
  }
  private splitAt(t: number): WeightMap {
    return this.changes.filter((c) => c.at <= t - this.lag).at(-1)!.weights
  }
  override async sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    await super.sleep(seconds, signal)
    const data: MetricDatum[] = []
    for (; this.put + 10 <= this.t; this.put += 10) {
      const w = this.splitAt(this.put)
      const total = (w.blue ?? 0) + (w.green ?? 0)
      for (const [pool, arn] of [
        ['blue', fx.targets.targetGroupArn],
        ['green', green],
      ] as const)
        data.push({
          MetricName: 'RequestCount',
          Value: (1000 * (w[pool] ?? 0)) / total,
          Unit: 'Count',
          Timestamp: new Date((this.put + 10) * 1000),
          Dimensions: [
            {Name: 'LoadBalancer', Value: fx.targets.loadBalancer},
            {Name: 'TargetGroup', Value: targetGroupDimension(arn)},
          ],
        })
    }
    for (let i = 0; i < data.length; i += 20) await this.cw.send(new PutMetricDataCommand({Namespace: 'AWS/ApplicationELB', MetricData: data.slice(i, i + 20)}))
  }
}

async function shift(lag: number, offset: number) {
  const via = {...cfg, endpoint: fx.proxy.endpoint}
  const elb = new ElasticLoadBalancingV2Client(via)
  const cw = new CloudWatchClient(via)
  const alb = new LaggingAlb(new CloudWatchClient(cfg), lag, offset)
  try {
    const forward = new ForwardWeights(
      {
        describeRules: (input, abortSignal) => elb.send(new DescribeRulesCommand(input), {abortSignal}),
        modifyRule: (input, abortSignal) => elb.send(new ModifyRuleCommand(input), {abortSignal}),
        describeListeners: (input, abortSignal) => elb.send(new DescribeListenersCommand(input), {abortSignal}),
        modifyListener: (input, abortSignal) => elb.send(new ModifyListenerCommand(input), {abortSignal}),
      },
      ruleArn,
      {blue: fx.targets.targetGroupArn, green},
    )
    const apply = forward.applyWeights.bind(forward)
    // Each shift starts with everything on blue, as the ALB's counts below assume.
    await apply({blue: 100, green: 0})
    const before = fx.proxy.of('ModifyRule').filter((c) => c.status === 200).length
    forward.applyWeights = async (w, signal) => {
      await apply(w, signal)
      alb.changed(w)
    }
    const groups = {blue: fx.targets.targetGroupArn, green}
    const metrics = new CloudWatchMetrics({getMetricData: (input, abortSignal) => cw.send(new GetMetricDataCommand(input), {abortSignal})}, alb, {
      loadBalancer: fx.targets.loadBalancer,
      loadBalancers: {},
      targetGroups: groups,
      groups: new Map(),
    })
    const runbook = parseRunbook(
      'lag.yaml',
      `name: lag
targets:
  targetGroups: {blue: ${groups.blue}, green: ${green}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - action: weighted-target-groups
    rule: ${ruleArn}
    pool: green
    schedule: [50]
    bake: 30
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 10, successes: 2, pool: green}
`,
    )
    // A minute of history before the change, as a live balancer has.
    await alb.sleep(60)
    const io = new RecordingIO()
    const result = await runRunbook(runbook, {control: control({clock: alb, poolWeights: () => forward, metrics}), io, signal: new AbortController().signal})
    const line = io.of('progress').find((e) => / served /.test(e.message))?.message ?? ''
    const seconds = Number(/, (\d+) s after the change/.exec(line)?.[1] ?? NaN)
    return {result, line, seconds, changes: fx.proxy.of('ModifyRule').filter((c) => c.status === 200).length - before}
  } finally {
    elb.destroy()
    cw.destroy()
  }
}

describe('the split served, from RequestCount per target group (moto through the proxy)', () => {
  it('counts that lag the change hold the bake back until they show it; counts at once do not', async () => {
    const prompt = await shift(0, 0)
    expect(prompt.result.outcome, prompt.result.message).toBe('completed')
    const late = await shift(60, 3600)
    expect(late.result.outcome, late.result.message).toBe('completed')
    // One change each: the bake waited, nothing was put back.
    expect(late.changes).toBe(1)
    expect(late.line).toMatch(/green served \d+(\.\d)?% of [\d,]+ rps against 50% set, \d+ s after the change/)
    // Counts at once show the split once a minute's window holds little from before the change
    // (CloudWatch's finest ALB period); counts a minute late, a minute after that, to a look (10 s).
    expect(prompt.seconds).toBeLessThanOrEqual(80)
    expect(late.seconds - prompt.seconds).toBeGreaterThanOrEqual(50)
    expect(late.seconds - prompt.seconds).toBeLessThanOrEqual(70)
  }, 120_000)
})
