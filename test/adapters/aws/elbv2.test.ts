import {describe, expect, it} from 'vitest'
import {Elbv2TargetGroup, type TargetGroupCalls} from '../../../src/aws/elbv2.js'
import {FakeClock} from '../../helpers/fakes.js'
import {accessDenied, expectDenied, fakeCalls, names} from './fake-calls.js'

const arn = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/blue/0123456789abcdef'
const label = `target group blue (${arn})`

type State = 'healthy' | 'unhealthy' | 'initial' | 'draining' | 'unused' | 'unavailable'

/** A target group whose targets answer with the states given, and whose attributes are `attributes`. */
function group(targets: Array<{id: string; port?: number; state: State}>, attributes: Record<string, string> = {}) {
  return fakeCalls<TargetGroupCalls>({
    describeTargetHealth: async () => ({
      TargetHealthDescriptions: targets.map((t) => ({Target: {Id: t.id, ...(t.port === undefined ? {} : {Port: t.port})}, TargetHealth: {State: t.state}})),
    }),
    registerTargets: async () => ({}),
    deregisterTargets: async () => ({}),
    describeTargetGroupAttributes: async () => ({Attributes: Object.entries(attributes).map(([Key, Value]) => ({Key, Value}))}),
    modifyTargetGroupAttributes: async () => ({}),
  })
}

describe('an ELBv2 target group over a fake of its narrow interface', () => {
  it('lists each registration by target and port, with the address of an IP target; any state AWS adds later is not serving', async () => {
    const {calls, made} = group([
      {id: 'i-0abc', port: 443, state: 'healthy'},
      {id: '10.0.1.10', port: 8080, state: 'draining'},
      {id: 'i-0def', state: 'initial'},
      {id: 'i-0fed', port: 443, state: 'unavailable'},
    ])
    const targets = await new Elbv2TargetGroup(calls, new FakeClock(), 'blue', arn).targets()
    expect(targets).toEqual([
      {id: 'i-0abc:443', targetId: 'i-0abc', health: 'healthy', port: 443},
      {id: '10.0.1.10:8080', targetId: '10.0.1.10', health: 'draining', ip: '10.0.1.10', port: 8080},
      {id: 'i-0def', targetId: 'i-0def', health: 'initial'},
      {id: 'i-0fed:443', targetId: 'i-0fed', health: 'unhealthy', port: 443},
    ])
    expect(made[0]).toEqual({call: 'describeTargetHealth', input: {TargetGroupArn: arn}, signal: true})
  })

  it('deregisters and registers by target and port, a hundred a call', async () => {
    const {calls, made} = group([])
    const tg = new Elbv2TargetGroup(calls, new FakeClock(), 'blue', arn)
    const ids = Array.from({length: 150}, (_, k) => `10.0.${Math.floor(k / 100)}.${k % 100}:443`)
    await tg.deregister(ids)
    await tg.register(['i-0abc:443', 'i-0def'])
    // After a registration, the group's slow start is read: a target it brought back counts at its share while it lasts.
    expect(names(made)).toEqual(['deregisterTargets', 'deregisterTargets', 'registerTargets', 'describeTargetGroupAttributes'])
    const sent = made.slice(0, 3).map((m) => (m.input as {Targets: unknown[]}).Targets)
    expect(sent.map((t) => t.length)).toEqual([100, 50, 2])
    expect(sent[0][0]).toEqual({Id: '10.0.0.0', Port: 443})
    expect(sent[2]).toEqual([{Id: 'i-0abc', Port: 443}, {Id: 'i-0def'}])
  })

  it('counts a target it brought back at its slow-start share, from when it turned healthy, as an ALB ramps it', async () => {
    const states: Record<string, State> = {'i-0abc': 'healthy', 'i-0def': 'initial'}
    const {calls} = fakeCalls<TargetGroupCalls>({
      describeTargetHealth: async () => ({
        TargetHealthDescriptions: Object.entries(states).map(([Id, State]) => ({Target: {Id, Port: 443}, TargetHealth: {State}})),
      }),
      registerTargets: async () => ({}),
      describeTargetGroupAttributes: async () => ({Attributes: [{Key: 'slow_start.duration_seconds', Value: '60'}]}),
    })
    const clock = new FakeClock()
    const tg = new Elbv2TargetGroup(calls, clock, 'blue', arn)
    await tg.register(['i-0def:443'])
    const warmth = async () => Object.fromEntries((await tg.targets()).map((t) => [t.id, t.warmth]))
    // Still initial: no slow start yet; the other target was not brought back by this process.
    expect(await warmth()).toEqual({'i-0abc:443': undefined, 'i-0def:443': undefined})
    clock.t = 30
    states['i-0def'] = 'healthy'
    expect((await warmth())['i-0def:443']).toBe(0.01)
    clock.t = 60
    expect((await warmth())['i-0def:443']).toBeCloseTo(0.5)
    clock.t = 90
    expect((await warmth())['i-0def:443']).toBeUndefined()
  })

  it('waits for a drain no longer than the deregistration delay (and one poll), on the clock', async () => {
    const {calls} = group([{id: 'i-0abc', port: 443, state: 'draining'}], {'deregistration_delay.timeout_seconds': '20'})
    const clock = new FakeClock()
    expect(await new Elbv2TargetGroup(calls, clock, 'blue', arn).waitDrained(['i-0abc:443'], 600)).toBe(false)
    expect(clock.t).toBeGreaterThanOrEqual(25)
    expect(clock.t).toBeLessThan(35)
  })

  it('a drain ends when no target it waits for is draining', async () => {
    const {calls} = group([{id: 'i-0abc', port: 443, state: 'unused'}], {'deregistration_delay.timeout_seconds': '300'})
    expect(await new Elbv2TargetGroup(calls, new FakeClock(), 'blue', arn).waitDrained(['i-0abc:443'], 600)).toBe(true)
  })

  it('reads and sets slow start and routing failover as attributes, checking the ranges ELBv2 takes', async () => {
    const key = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'
    const {calls, made} = group([], {'slow_start.duration_seconds': '60', [key]: 'off'})
    const tg = new Elbv2TargetGroup(calls, new FakeClock(), 'blue', arn)
    expect(await tg.slowStart()).toBe(60)
    expect(await tg.failoverPercent()).toBeNull()
    await tg.setSlowStart(0)
    await tg.setSlowStart(120)
    await tg.setFailoverPercent(50)
    await tg.setFailoverPercent(null)
    expect(made.filter((m) => m.call === 'modifyTargetGroupAttributes').map((m) => m.input)).toEqual([
      {TargetGroupArn: arn, Attributes: [{Key: 'slow_start.duration_seconds', Value: '0'}]},
      {TargetGroupArn: arn, Attributes: [{Key: 'slow_start.duration_seconds', Value: '120'}]},
      {TargetGroupArn: arn, Attributes: [{Key: key, Value: '50'}]},
      {TargetGroupArn: arn, Attributes: [{Key: key, Value: 'off'}]},
    ])
    const before = made.length
    await expect(tg.setSlowStart(10)).rejects.toThrow(`slow start of 10 s for ${label} is out of range: 0 (off) or 30–900 s`)
    await expect(tg.setFailoverPercent(0)).rejects.toThrow(`routing failover of 0% for ${label} is out of range: a whole number from 1 to 100, or off`)
    expect(made).toHaveLength(before)
  })

  it('AccessDenied names the call, the target group and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<TargetGroupCalls>({deregisterTargets: async () => Promise.reject(accessDenied())})
    await expectDenied(new Elbv2TargetGroup(calls, new FakeClock(), 'blue', arn).deregister(['i-0abc:443']), 'elasticloadbalancing:DeregisterTargets', label)
    const read = fakeCalls<TargetGroupCalls>({describeTargetHealth: async () => Promise.reject(accessDenied())})
    await expectDenied(new Elbv2TargetGroup(read.calls, new FakeClock(), 'blue', arn).targets(), 'elasticloadbalancing:DescribeTargetHealth', label)
  })
})
