import {describe, expect, it} from 'vitest'
import {actionOf, rulesOf} from '../../src/actions/registry.js'
import {planRunbook} from '../../src/engine/plan.js'
import {RefusedError} from '../../src/errors.js'
import {lockedResources} from '../../src/wiring/live.js'
import {iamPolicy, readOnlyPolicy} from '../../src/live/iam-policy.js'
import type {Undo} from '../../src/actions/action.js'
import {mutationKinds, type Mutation, type MutationKind, type RecordedMutation} from '../../src/ports/io.js'
import {control, FakeDns, FakeFreeze, FakeGroup, FakeRules, runbook} from '../helpers/fakes.js'

const every = runbook(`  - {action: freeze, reason: drill}
  - {action: restrict, type: sync, paths: [/sync/*]}
  - {action: cycle, pool: blue, batch: 1, slowStart: 30}
  - {action: ramp, set: green, schedule: [5, 50]}
  - {action: approve, message: go on?}
  - {action: wait, for: 1m}
  - {action: check, gate: {metric: error-rate, threshold: 1}}
  - {action: lift, type: sync}
  - {action: unfreeze}
`)

let seq = 0
const recorded = (kind: MutationKind, before: unknown, after: unknown, resource = 'r'): RecordedMutation => ({
  step: 0,
  phase: 'intent',
  kind,
  resource,
  before,
  after,
  seq: ++seq,
  at: '2026-11-30T00:00:00Z',
  outcome: {ok: true},
})

const undoOf = (changes: RecordedMutation[], plane = control({})) => rulesOf(changes.at(-1)!).undo(changes, plane)

/** An undo that must be one, not a reason to leave the subject alone. */
async function undoing(changes: RecordedMutation[], plane = control({})): Promise<Undo> {
  const undo = await undoOf(changes, plane)
  if (typeof undo === 'string') throw new Error(`expected an undo, got left alone: ${undo}`)
  return undo
}

describe('the action registry', () => {
  it('gives every step its definition, and the loader its default title and onFailure', () => {
    expect(every.steps.map((s) => actionOf(s).action)).toEqual(every.steps.map((s) => s.action))
    expect(every.steps.map((s) => s.title)).toEqual([
      'Freeze changes: drill',
      'Restrict sync traffic',
      'Cycle blue in batches of 1',
      'Ramp green: 5% → 50%',
      'Approval: go on?',
      'Wait 60 s',
      'Check error-rate',
      'Lift the restriction on sync traffic',
      'Lift the change freeze',
    ])
    expect(every.steps.map((s) => s.onFailure)).toEqual(['abort', 'abort', 'hold', 'rollback', 'abort', 'abort', 'abort', 'abort', 'abort'])
  })

  it('plans every step, and with what preflight read the ramp is told in live weights', () => {
    const plain = planRunbook(every)
    expect(plain.every((p) => p.details.length > 0)).toBe(true)
    const live = planRunbook(every, {weights: {blue: 100, green: 0}, groupSizes: new Map([['blue', 8]]), rulesLabel: 'listener L'})
    expect(live[3].details).toContain('weights blue=100 green=0 → blue=95 green=5 → blue=50 green=50, one change per step')
    expect(live[2].details).toContain('all 8 targets now in the group, 1 per batch')
    expect(live[1].details).toContain('on listener L')
    expect(plain[3].details.some((d) => d.startsWith('weights '))).toBe(false)
  })

  it('locks only what the run changes on the load balancer and DNS, once each', () => {
    expect(lockedResources(every)).toEqual(['elbv2:arn:listener', 'elbv2:arn:blue', 'route53:Z1/app.example.com./A'])
    expect(lockedResources(runbook('  - {action: freeze, reason: drill}\n  - {action: wait, for: 5}\n'))).toEqual([])
    expect(every.steps.filter((s) => actionOf(s).changesLive).map((s) => s.action)).toEqual(['restrict', 'cycle', 'ramp', 'lift'])
  })

  it("builds one IAM policy from each step's statements, merged by Sid with no action twice", () => {
    const policy = iamPolicy(every)
    const actions = policy.Statement.flatMap((s) => s.Action)
    expect(new Set(actions).size).toBe(actions.length)
    const rules = policy.Statement.find((s) => s.Sid === 'RestrictionRules')!
    expect(rules.Action).toEqual(['elasticloadbalancing:CreateRule', 'elasticloadbalancing:AddTags', 'elasticloadbalancing:DeleteRule'])
    expect(rules.Resource).toEqual(['arn:listener', 'arn:listener/*'])
    expect(policy.Statement.find((s) => s.Sid === 'CycleTargets')!.Action).toContain('elasticloadbalancing:ModifyTargetGroupAttributes')
    expect(actions).toContain('cloudwatch:GetMetricData')
    // A freeze changes only sluice's own state, but a live run still reads every target before it asks.
    expect(iamPolicy(runbook('  - {action: freeze, reason: drill}\n')).Statement.flatMap((s) => s.Action)).toEqual([
      'route53:ListResourceRecordSets',
      'elasticloadbalancing:DescribeTargetHealth',
      'elasticloadbalancing:DescribeTargetGroupAttributes',
      'elasticloadbalancing:DescribeRules',
      'elasticloadbalancing:DescribeTags',
    ])
  })

  it('gives a read-only policy with every read of the whole one and no change', () => {
    const whole = iamPolicy(every).Statement.flatMap((s) => s.Action)
    const reads = readOnlyPolicy(every).Statement.flatMap((s) => s.Action)
    expect(reads.sort()).toEqual(whole.filter((a) => /:(Describe|List|Get)/.test(a)).sort())
    expect(reads).toContain('route53:ListResourceRecordSets')
    expect(reads.filter((a) => /:(Create|Delete|Change|Register|Deregister|Modify|Add)/.test(a))).toEqual([])
  })

  it('says, step by step, where the live state is not what the step expects, chained from the steps before', () => {
    const found = {by: 'ana', reason: 'INC-1', since: '2026-12-04T10:00:00Z'}
    const live = planRunbook(every, {
      weights: {blue: 10, green: 90},
      groupSizes: new Map([['blue', 0]]),
      rulesLabel: 'listener L',
      restricted: [],
      freeze: found,
    })
    expect(live.map((p) => p.drift ?? [])).toEqual([
      ['a change freeze is in place already (frozen since 2026-12-04T10:00:00Z by ana: INC-1): the step leaves it and sets none of its own'],
      [],
      ['blue has no targets registered now: the step fails, as there is nothing to cycle'],
      ["green has 90% of app.example.com. now, more than the ramp's first step of 5%: its first change takes green down to 5%"],
      [],
      [],
      [],
      // The restrict before it leaves sync restricted: the lift finds what it expects.
      [],
      ["the freeze in place is not this run's (frozen since 2026-12-04T10:00:00Z by ana: INC-1): the step leaves it in place (force: true lifts it)"],
    ])
    // Nothing frozen, nothing restricted, traffic parked: the freeze step's own freeze is the one unfreeze lifts.
    const calm = planRunbook(every, {
      weights: {blue: 100, green: 0},
      groupSizes: new Map([['blue', 8]]),
      rulesLabel: 'listener L',
      restricted: [],
      freeze: null,
    })
    expect(calm.filter((p) => p.drift)).toEqual([])
    const lifted = planRunbook(runbook('  - {action: lift, type: sync}\n  - {action: unfreeze}\n'), {
      groupSizes: new Map(),
      rulesLabel: 'listener L',
      restricted: [],
      freeze: null,
    })
    expect(lifted.map((p) => p.drift)).toEqual([
      ['sync is not restricted on listener L: there is nothing to lift, and the step changes nothing'],
      ['no change freeze is in place: there is nothing to lift'],
    ])
    expect(planRunbook(every).some((p) => p.drift)).toBe(false)
  })

  it('has exactly one owner for every kind of change, and refuses a kind nobody owns', () => {
    for (const kind of mutationKinds) expect(() => rulesOf({kind, resource: 'r'})).not.toThrow()
    expect(() => rulesOf({kind: 'teleport' as MutationKind, resource: 'dns'})).toThrow(RefusedError)
    expect(() => rulesOf({kind: 'teleport' as MutationKind, resource: 'dns'})).toThrow(/does not know: teleport on dns/)
  })
})

describe("undo nets a run's changes to one subject", () => {
  it('weights go back to what the run found, however many steps it took', async () => {
    const dns = new FakeDns({blue: 5, green: 95})
    const undo = await undoing(
      [recorded('weights', {blue: 100, green: 0}, {blue: 50, green: 50}), recorded('weights', {blue: 50, green: 50}, {blue: 5, green: 95})],
      control({weights: dns}),
    )
    expect(undo).toMatchObject({kind: 'weights', after: {blue: 100, green: 0}})
    await undo.apply()
    expect(dns.weights).toEqual({blue: 100, green: 0})
    expect(
      await undoOf([recorded('weights', {blue: 100, green: 0}, {blue: 50, green: 50}), recorded('weights', {blue: 50, green: 50}, {blue: 100, green: 0})]),
    ).toMatch(/back where the run found them/)
  })

  it('a freeze the run set and cleared, or a rule it added and lifted, is left alone, and says so', async () => {
    const record = {by: 'a', reason: 'drill', since: 'now'}
    expect(await undoOf([recorded('freeze', null, record, 'change freeze'), recorded('unfreeze', record, null, 'change freeze')])).toBe(
      'the run set the freeze and lifted it itself',
    )
    const rule = {type: 'sync', paths: ['/sync/*'], headers: {}, retryAfterSeconds: 60}
    expect(await undoOf([recorded('restrict', null, rule), recorded('lift', rule, null)])).toBe('the run added the restriction on sync and lifted it itself')
  })

  it('a freeze the run set is cleared only while it is still the one in place', async () => {
    const mine = {by: 'a', reason: 'drill', since: 'now', runId: 'r1'}
    const freeze = new FakeFreeze()
    freeze.record = mine
    const clear = await undoing([recorded('freeze', null, mine, 'change freeze')], control({freeze}))
    await clear.apply()
    expect(freeze.record).toBeNull()
    freeze.record = {by: 'b', reason: 'their own', since: 'later', runId: 'r2'}
    expect(await undoOf([recorded('freeze', null, mine, 'change freeze')], control({freeze}))).toMatch(
      /^the freeze in place now is not the one the run set \(frozen since later by b in run r2: their own\)$/,
    )
  })

  it('a rule the run found and lifted is put back; a freeze it found and cleared is put back', async () => {
    const rules = new FakeRules()
    const rule = {type: 'sync', paths: ['/sync/*'], headers: {}, retryAfterSeconds: 60}
    const putBack = await undoing([recorded('lift', rule, null)], control({restrictions: rules}))
    expect(putBack.kind).toBe('restrict')
    await putBack.apply()
    expect(await rules.list()).toEqual([rule])
    const freeze = new FakeFreeze()
    const record = {by: 'b', reason: 'found', since: 'then'}
    const refreeze = await undoing([recorded('unfreeze', record, null, 'change freeze')], control({freeze}))
    await refreeze.apply()
    expect(freeze.record).toEqual(record)
  })

  it('returns only the targets the run left out of rotation', async () => {
    const group = new FakeGroup('blue', ['a', 'b', 'c'])
    const plane = control({pools: new Map([['blue', group]])})
    expect(await undoing([recorded('deregister', ['a', 'b'], null, group.label), recorded('register', null, ['a'], group.label)], plane)).toMatchObject({
      kind: 'register',
      after: ['b'],
    })
    expect(await undoOf([recorded('deregister', ['a'], null, group.label), recorded('register', null, ['a'], group.label)], plane)).toMatch(
      /every target the run took out of target group blue is back in it/,
    )
  })
})

describe('settle reads the live state a change left', () => {
  const change = (before: unknown, after: unknown): Mutation => ({step: 0, phase: 'intent', kind: 'weights', resource: 'd', before, after})

  it('weights: applied, not applied, or neither', async () => {
    const at = (weights: Record<string, number>) => control({weights: new FakeDns(weights)})
    const m = change({blue: 100, green: 0}, {blue: 50, green: 50})
    expect(await rulesOf(m).settle(m, at({blue: 50, green: 50}))).toBe('applied')
    expect(await rulesOf(m).settle(m, at({blue: 100, green: 0}))).toBe('not applied')
    expect(await rulesOf(m).settle(m, at({blue: 70, green: 30}))).toBeNull()
  })

  it('a restriction: found on the listener or not', async () => {
    const rule = {type: 'sync', paths: [], headers: {}, retryAfterSeconds: 60}
    const m: Mutation = {step: 0, phase: 'intent', kind: 'restrict', resource: 'l', before: null, after: rule}
    const rules = new FakeRules()
    expect(await rulesOf(m).settle(m, control({restrictions: rules}))).toBe('not applied')
    await rules.add(rule)
    expect(await rulesOf(m).settle(m, control({restrictions: rules}))).toBe('applied')
  })
})
