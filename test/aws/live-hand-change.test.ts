import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {DescribeRulesCommand, ElasticLoadBalancingV2Client, ModifyRuleCommand} from '@aws-sdk/client-elastic-load-balancing-v2'
import {beforeEach, describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {setWeightsByHand} from './by-hand.js'
import {cfg, dnsRunbook, useLiveFixture, weightChanges, weights, type Fixture} from './live-fixture.js'
import {seedTargetGroupBeside, seedWeightedRule} from './seed.js'
import {spawnRun, when} from './spawned-run.js'
import {stopsBefore} from './stops-before.js'

// The weighted-target-groups steps here say `split: off`: what they test is the rule's changes, and their
// CloudWatch seed counts the blue group only. The split served, measured from each group's
// RequestCount as it lags a change, is test/aws/live-split-served.test.ts.

// A person changes the weights in the middle of a ramp, between two of its steps: the next step
// reads them first, finds they are not what sluice set, and stops there (exit 4, as resume stops
// on drift), naming the weights it set and those it found, and leaves the person's change alone.
// One check in the weights ramp serves every backend: an ALB rule's forward and a Route 53 record
// here, HAProxy's ramp map in test/haproxy/readings.test.ts. A bake of 600 s that `sluice
// promote` ends once the hand change is in makes the order certain without timing anything.

let fx: Fixture
let green: string
let ruleArn: string
const current = useLiveFixture()

beforeEach(async () => {
  fx = current()
  green = await seedTargetGroupBeside(cfg, fx.targets.targetGroupArn)
  ruleArn = await seedWeightedRule(cfg, fx.targets.listenerArn, fx.targets.targetGroupArn, green)
})

/** The rule's forward weights now, as blue/green, read straight from moto. */
async function ruleWeights(): Promise<Record<string, number | undefined>> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const forward = (await elb.send(new DescribeRulesCommand({RuleArns: [ruleArn]}))).Rules![0].Actions!.find((a) => a.Type === 'forward')!
    return Object.fromEntries(forward.ForwardConfig!.TargetGroups!.map((t) => [t.TargetGroupArn === green ? 'green' : 'blue', t.Weight]))
  } finally {
    elb.destroy()
  }
}

/** What a person does in the console: the rule's forward set to these weights. */
async function setRuleByHand(blue: number, greenWeight: number): Promise<void> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    await elb.send(
      new ModifyRuleCommand({
        RuleArn: ruleArn,
        Actions: [
          {
            Type: 'forward',
            ForwardConfig: {
              TargetGroups: [
                {TargetGroupArn: fx.targets.targetGroupArn, Weight: blue},
                {TargetGroupArn: green, Weight: greenWeight},
              ],
            },
          },
        ],
      }),
    )
  } finally {
    elb.destroy()
  }
}

function journal(): Array<Record<string, any>> {
  const runs = join(fx.env.SLUICE_STATE, 'runs')
  const [file] = readdirSync(runs).filter((f) => f.endsWith('.jsonl'))
  return readFileSync(join(runs, file), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>)
}

const successful = (operation: string) => fx.proxy.of(operation).filter((c) => c.status === 200).length

describe('a hand change to the weights in the middle of a ramp', () => {
  it('on an ALB rule: the next step stops naming the rule, the weights sluice set and those found; nothing overwritten, exit 4, journalled', async () => {
    const file = dnsRunbook(
      fx,
      'shift-by-hand',
      `  targetGroups: {blue: ${fx.targets.targetGroupArn}, green: ${green}}
steps:
  - action: weighted-target-groups
    split: off
    rule: ${ruleArn}
    pool: green
    schedule: [10, 50, 100]
    bake: 600
`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await run.seen(/green at 10%/)
    expect(await ruleWeights()).toEqual({blue: 90, green: 10})
    await setRuleByHand(70, 30)
    expect((await sluice(['promote', runId], {env: fx.env})).code).toBe(0)
    const end = await stopsBefore(run, /green at 50%/)
    expect(end.code, end.stderr).toBe(4)
    const said = `stopped before green 50%: the weights of ${ruleArn} were changed outside this run: sluice set blue=90 green=10, and found blue=70 green=30`
    expect(end.stderr).toContain(said)
    expect(end.stderr).toContain(`\`sluice resume ${runId} --reapply\` puts back blue=90 green=10 and goes on with the ramp`)
    expect(end.stderr).toContain(`\`sluice rollback ${runId} --from-live\` takes the run back from the weights there now`)
    // sluice's one change, then none: the person's weights stand.
    expect(successful('ModifyRule')).toBe(1)
    expect(await ruleWeights()).toEqual({blue: 70, green: 30})
    const entries = journal()
    expect(entries.find((e) => e.type === 'step-end')).toMatchObject({status: 'refused'})
    expect(entries.find((e) => e.type === 'step-end')?.message).toContain(said)
    expect(entries.at(-1)).toMatchObject({type: 'run-end', outcome: 'refused'})

    // As the message says: resume finds the same drift, and will not go on over it without --reapply.
    const resume = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resume.code, resume.stderr).toBe(4)
    expect(resume.stderr).toContain('the journal says blue=90 green=10; now blue=70 green=30')
    expect(await ruleWeights()).toEqual({blue: 70, green: 30})
  }, 120_000)

  it('on a Route 53 record: the same check, the same stop', async () => {
    const file = dnsRunbook(
      fx,
      'ramp-by-hand',
      `steps:
  - action: ramp
    set: maintenance
    schedule: [20, 50, 100]
    bake: 600
`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await run.seen(/maintenance at 20%/)
    await when(() => successful('ChangeResourceRecordSets') === 1)
    await setWeightsByHand(cfg, fx.targets.zoneId, fx.targets.record, {mailbox: 100, maintenance: 0})
    expect((await sluice(['promote', runId], {env: fx.env})).code).toBe(0)
    const end = await stopsBefore(run, /maintenance at 50%/)
    expect(end.code, end.stderr).toBe(4)
    expect(end.stderr).toContain('stopped before maintenance 50%: the weights of')
    expect(end.stderr).toContain('were changed outside this run: sluice set mailbox=80 maintenance=20, and found mailbox=100 maintenance=0')
    expect(weightChanges(fx.proxy)).toEqual([{mailbox: 80, maintenance: 20}])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
  }, 120_000)
})
