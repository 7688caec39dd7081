import {describe, expect, it} from 'vitest'
import {AwsCallError, AwsCallInterrupted} from '../../../src/aws/errors.js'
import {Route53Dns} from '../../../src/aws/route53.js'
import type {Route53Calls} from '../../../src/aws/sdk.js'
import {FakeClock} from '../../helpers/fakes.js'
import {accessDenied, awsError, expectDenied, fakeCalls, names} from './fake-calls.js'

const set = (id: string, weight: number, ttl = 60, name = 'api.example.com.') => ({
  Name: name,
  Type: 'A' as const,
  SetIdentifier: id,
  Weight: weight,
  TTL: ttl,
  ResourceRecords: [{Value: '192.0.2.1'}],
})

/** Route 53 with one weighted record of the given sets, changes answered PENDING then INSYNC after `pending` polls. */
function route53(sets = [set('blue', 200), set('green', 55, 30)], pending = 1) {
  let polls = 0
  return fakeCalls<Route53Calls>({
    listResourceRecordSets: async () => ({ResourceRecordSets: [...sets, set('x', 1, 60, 'zzz.example.com.')], IsTruncated: false, MaxItems: 100}),
    changeResourceRecordSets: async () => ({ChangeInfo: {Id: '/change/C1', Status: 'PENDING', SubmittedAt: new Date()}}),
    getChange: async () => ({ChangeInfo: {Id: '/change/C1', Status: ++polls > pending ? 'INSYNC' : 'PENDING', SubmittedAt: new Date()}}),
  })
}

describe('Route 53 weights over a fake of its narrow interface', () => {
  it("reads the record's weighted sets page by page from its own name and type, and stops at the first other record", async () => {
    const {calls, made} = fakeCalls<Route53Calls>({
      listResourceRecordSets: async (input) =>
        input.StartRecordIdentifier === undefined
          ? {
              ResourceRecordSets: [set('blue', 200), set('green', 55, 30)],
              IsTruncated: true,
              NextRecordName: 'api.example.com.',
              NextRecordType: 'A',
              NextRecordIdentifier: 'purple',
              MaxItems: 2,
            }
          : {
              ResourceRecordSets: [set('purple', 0, 90), set('other', 7, 60, 'www.example.com.')],
              IsTruncated: true,
              NextRecordName: 'www.example.com.',
              MaxItems: 2,
            },
    })
    const dns = new Route53Dns(calls, new FakeClock(), 'Z1', 'API.example.com', 'A')
    expect(await dns.readWeights()).toEqual({blue: 200, green: 55, purple: 0})
    expect(await dns.ttl()).toBe(90)
    expect(made.slice(0, 2).map((m) => m.input)).toEqual([
      {HostedZoneId: 'Z1', StartRecordName: 'api.example.com.', StartRecordType: 'A', StartRecordIdentifier: undefined},
      {HostedZoneId: 'Z1', StartRecordName: 'api.example.com.', StartRecordType: 'A', StartRecordIdentifier: 'purple'},
    ])
    expect(made.every((m) => m.signal)).toBe(true)
  })

  it('stops paging when a page adds no new set (an API repeating itself)', async () => {
    const {calls, made} = fakeCalls<Route53Calls>({
      listResourceRecordSets: async () => ({
        ResourceRecordSets: [set('blue', 1)],
        IsTruncated: true,
        NextRecordName: 'api.example.com.',
        NextRecordType: 'A',
        MaxItems: 1,
      }),
    })
    expect(await new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').readWeights()).toEqual({blue: 1})
    expect(made).toHaveLength(2)
  })

  it('applies the changed sets in one UPSERT batch, each set whole, and waits for INSYNC on the clock', async () => {
    const {calls, made} = route53(undefined, 2)
    const clock = new FakeClock()
    await new Route53Dns(calls, clock, 'Z1', 'api.example.com.', 'A').applyWeights({blue: 100, green: 55})
    expect(names(made)).toEqual(['listResourceRecordSets', 'changeResourceRecordSets', 'getChange', 'getChange', 'getChange'])
    expect(made[1].input).toEqual({
      HostedZoneId: 'Z1',
      ChangeBatch: {Comment: 'sluice: blue=100 green=55', Changes: [{Action: 'UPSERT', ResourceRecordSet: set('blue', 100)}]},
    })
    expect(made[2].input).toEqual({Id: '/change/C1'})
    // One poll every 5 s until the third answer says INSYNC.
    expect(clock.t).toBe(15)
  })

  it('changes nothing when every weight is already what is asked', async () => {
    const {calls, made} = route53()
    await new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').applyWeights({blue: 200})
    expect(names(made)).toEqual(['listResourceRecordSets'])
  })

  it('refuses a set the record does not have, and weights Route 53 does not take, before any change', async () => {
    const {calls, made} = route53()
    const dns = new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A')
    await expect(dns.applyWeights({purple: 10})).rejects.toThrow('Z1 api.example.com. A has no weighted set "purple"; it has blue, green')
    await expect(dns.applyWeights({blue: 256})).rejects.toThrow('weight 256 for set "blue" of Z1 api.example.com. A is not a whole number from 0 to 255')
    await expect(dns.applyWeights({blue: 1.5})).rejects.toThrow('weight 1.5 for set "blue"')
    expect(names(made).filter((n) => n !== 'listResourceRecordSets')).toEqual([])
  })

  it('says so when the zone has no weighted record of that name and type', async () => {
    const {calls} = route53([])
    await expect(new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').readWeights()).rejects.toThrow(
      'no weighted A record api.example.com. in hosted zone Z1',
    )
  })

  it('gives up watching a change that is not INSYNC within 300 s, saying it is applied', async () => {
    const {calls} = route53(undefined, Number.POSITIVE_INFINITY)
    await expect(new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').applyWeights({blue: 0})).rejects.toThrow(
      'Z1 api.example.com. A: change /change/C1 was not INSYNC after 300 s; it is applied but may not have reached every name server',
    )
  })

  it('interrupted once the change is accepted, returns at once: the change is applied and reaches the name servers unwatched', async () => {
    const {calls, made} = route53()
    const stop = new AbortController()
    const clock = new FakeClock()
    const sleep = clock.sleep.bind(clock)
    clock.sleep = async (seconds, signal) => {
      stop.abort()
      return sleep(seconds, signal)
    }
    await new Route53Dns(calls, clock, 'Z1', 'api.example.com.', 'A').applyWeights({blue: 0}, stop.signal)
    expect(names(made)).toEqual(['listResourceRecordSets', 'changeResourceRecordSets'])
  })

  it('interrupted before it starts, makes no call', async () => {
    const {calls, made} = route53()
    const stop = new AbortController()
    stop.abort()
    await expect(new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').readWeights(stop.signal)).rejects.toBeInstanceOf(AwsCallInterrupted)
    expect(made).toEqual([])
  })

  it('AccessDenied names the call, the hosted zone or record, and the IAM permission to grant', async () => {
    const read = fakeCalls<Route53Calls>({listResourceRecordSets: async () => Promise.reject(accessDenied())})
    await expectDenied(
      new Route53Dns(read.calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').readWeights(),
      'route53:ListResourceRecordSets',
      'hosted zone Z1',
    )
    const change = fakeCalls<Route53Calls>({
      listResourceRecordSets: async () => ({ResourceRecordSets: [set('blue', 200)], IsTruncated: false, MaxItems: 100}),
      changeResourceRecordSets: async () => Promise.reject(accessDenied()),
    })
    const dns = new Route53Dns(change.calls, new FakeClock(), 'Z1', 'api.example.com.', 'A')
    await expectDenied(dns.applyWeights({blue: 1}), 'route53:ChangeResourceRecordSets', 'Z1 api.example.com. A')
  })

  it('any other refusal is named with its code and the first line of its message', async () => {
    const {calls} = fakeCalls<Route53Calls>({listResourceRecordSets: async () => Promise.reject(awsError('Throttling', 'Rate exceeded\nmore'))})
    const error = await new Route53Dns(calls, new FakeClock(), 'Z1', 'api.example.com.', 'A').readWeights().catch((e: Error) => e)
    expect(error).toBeInstanceOf(AwsCallError)
    expect((error as Error).message).toBe('Route53 ListResourceRecordSets on hosted zone Z1 failed: Throttling: Rate exceeded')
  })
})
