import type {AttributeValue} from '@aws-sdk/client-dynamodb'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {DynamoStore} from '../../../src/aws/dynamo-store.js'
import {AwsCallError} from '../../../src/aws/errors.js'
import type {DynamoDbCalls} from '../../../src/aws/sdk.js'
import {InputError} from '../../../src/errors.js'
import {thisPlace} from '../../../src/platform/process-place.js'
import type {JournalEntry, LockRecord} from '../../../src/ports/state-store.js'
import {thisHost} from '../../../src/state/journal.js'
import {DamagedStateError} from '../../../src/state/records.js'
import {runStartFields} from '../../helpers/journal-entries.js'
import {accessDenied, awsError, expectDenied, fakeCalls, names} from './fake-calls.js'

// Leases of one second: a lock this file takes is renewed often, and let go at the end of each test.
let savedLease: string | undefined
beforeAll(() => {
  savedLease = process.env.SLUICE_LEASE_SECONDS
  process.env.SLUICE_LEASE_SECONDS = '1'
})
afterAll(() => {
  if (savedLease === undefined) delete process.env.SLUICE_LEASE_SECONDS
  else process.env.SLUICE_LEASE_SECONDS = savedLease
})

type Item = Record<string, AttributeValue>

/**
 * One DynamoDB table in memory, with the conditions the store writes under (an item that must not
 * exist yet, or must still be at the version read), answering queries and scans two items a page.
 * `exists` says whether the table is there before the first call.
 */
function table(exists = true, retried: Record<string, {attempts: number; totalRetryDelay: number}> = {}) {
  const items = new Map<string, Item>()
  const key = (item: Item) => `${item.pk.S}|${item.sk.N}`
  const conditionFailed = () => awsError('ConditionalCheckFailedException', 'The conditional request failed')
  const passes = (current: Item | undefined, expression: string | undefined, values: Item | undefined): boolean => {
    if (expression === undefined) return true
    if (expression === 'attribute_not_exists(pk)') return current === undefined
    if (expression === 'version = :v') return current?.version?.S === values?.[':v']?.S
    throw new Error(`the fake table knows no condition ${expression}`)
  }
  const page = (found: Item[], start: Item | undefined) => {
    const from = start ? found.findIndex((i) => key(i) === key(start)) + 1 : 0
    const slice = found.slice(from, from + 2)
    return {Items: slice, ...(from + 2 < found.length ? {LastEvaluatedKey: slice.at(-1)} : {})}
  }
  const meta = (call: string) => (retried[call] ? {$metadata: retried[call]} : {})
  const fake = fakeCalls<DynamoDbCalls>({
    describeTable: async () => {
      if (!exists) throw awsError('ResourceNotFoundException', 'Requested resource not found')
      return {Table: {TableStatus: 'ACTIVE'}}
    },
    createTable: async () => {
      exists = true
      return {}
    },
    putItem: async (input) => {
      const item = input.Item!
      if (!passes(items.get(key(item)), input.ConditionExpression, input.ExpressionAttributeValues)) throw conditionFailed()
      items.set(key(item), item)
      return meta('putItem')
    },
    getItem: async (input) => ({...(items.has(key(input.Key!)) ? {Item: items.get(key(input.Key!))} : {})}),
    deleteItem: async (input) => {
      if (!passes(items.get(key(input.Key!)), input.ConditionExpression, input.ExpressionAttributeValues)) throw conditionFailed()
      items.delete(key(input.Key!))
      return {}
    },
    query: async (input) => {
      const pk = input.ExpressionAttributeValues![':pk'].S
      const from = input.KeyConditionExpression === 'pk = :pk AND sk >= :from' ? Number(input.ExpressionAttributeValues![':from'].N) : -Infinity
      if (input.KeyConditionExpression !== 'pk = :pk' && from === -Infinity)
        throw new Error(`the fake table knows no key condition ${input.KeyConditionExpression}`)
      const found = [...items.values()].filter((i) => i.pk.S === pk && Number(i.sk.N) >= from).sort((a, b) => Number(a.sk.N) - Number(b.sk.N))
      return page(found, input.ExclusiveStartKey)
    },
    transactWriteItems: async (input) => {
      // All or nothing: every condition is checked before anything is written.
      const items_ = input.TransactItems!
      const reasons = items_.map((t) => {
        if (t.ConditionCheck) {
          const c = t.ConditionCheck
          if (c.ConditionExpression !== 'lockId = :id AND fence = :fence') throw new Error(`the fake table knows no condition ${c.ConditionExpression}`)
          const current = items.get(key(c.Key!))
          const v = c.ExpressionAttributeValues!
          return current?.lockId?.S === v[':id'].S && current?.fence?.N === v[':fence'].N ? 'None' : 'ConditionalCheckFailed'
        }
        const put = t.Put!
        return passes(items.get(key(put.Item!)), put.ConditionExpression, put.ExpressionAttributeValues) ? 'None' : 'ConditionalCheckFailed'
      })
      if (reasons.some((r) => r !== 'None'))
        throw awsError('TransactionCanceledException', `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.join(', ')}]`)
      for (const t of items_) if (t.Put) items.set(key(t.Put.Item!), t.Put.Item!)
      return {}
    },
    scan: async (input) => {
      const prefix = input.ExpressionAttributeValues![':lock'].S!
      return page(
        [...items.values()].filter((i) => i.pk.S!.startsWith(prefix)),
        input.ExclusiveStartKey,
      )
    },
  })
  return {...fake, items}
}

const RUN = '20261104-100000-aaaa'
const entry = (seq: number, type: string, extra: Record<string, unknown> = {}): JournalEntry => ({seq, at: `2026-11-04T10:00:0${seq}.000Z`, type, ...extra})
const who = {runId: RUN, operator: 'alice', host: 'laptop'}

describe('the DynamoDB state store over a fake of its narrow interface', () => {
  it('creates its table on first use (pk string, sk number, on demand), and only when DescribeTable finds none', async () => {
    const fresh = table(false)
    const store = new DynamoStore('sluice-state', {}, fresh.calls)
    expect(await store.runIds()).toEqual([])
    expect(names(fresh.made)).toEqual(['describeTable', 'createTable', 'describeTable', 'query'])
    expect(fresh.made[1].input).toEqual({
      TableName: 'sluice-state',
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        {AttributeName: 'pk', AttributeType: 'S'},
        {AttributeName: 'sk', AttributeType: 'N'},
      ],
      KeySchema: [
        {AttributeName: 'pk', KeyType: 'HASH'},
        {AttributeName: 'sk', KeyType: 'RANGE'},
      ],
    })
    const there = table(true)
    await new DynamoStore('sluice-state', {}, there.calls).runIds()
    expect(names(there.made)).toEqual(['describeTable', 'query'])
  })

  it('writes a journal entry only where its sequence number is free, and reads the journal back in order across pages', async () => {
    const t = table()
    const store = new DynamoStore('sluice-state', {}, t.calls)
    const start = entry(1, 'run-start', runStartFields(RUN))
    await store.append(RUN, start)
    await store.acquire([], who)
    for (const seq of [2, 3, 4]) await store.append(RUN, entry(seq, 'note', {text: `n${seq}`}))
    expect((await store.read(RUN)).entries.map((e) => e.seq)).toEqual([1, 2, 3, 4])
    expect(await store.runIds()).toEqual([RUN])
    const journalPut = t.made.find((m) => m.call === 'putItem' && (m.input as {Item: Item}).Item.pk.S === `run#${RUN}`)!
    expect(journalPut.input).toMatchObject({TableName: 'sluice-state', ConditionExpression: 'attribute_not_exists(pk)'})
    await expect(store.append(RUN, entry(3, 'note'))).rejects.toThrow(
      new DamagedStateError(`dynamodb://sluice-state run#${RUN}: the journal already has entry 3; another process is writing this run`),
    )
    await store.release([], RUN)
  })

  it('readAfter queries from the entry a follower has on, one query a page, and tells an unknown run from one with nothing new', async () => {
    const t = table()
    const store = new DynamoStore('sluice-state', {}, t.calls)
    await store.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    await store.acquire([], who)
    for (const seq of [2, 3, 4, 5]) await store.append(RUN, entry(seq, 'note'))
    const before = t.made.length
    // The fake answers two items a page: from entry 4, one page.
    expect((await store.readAfter(RUN, 4)).entries.map((e) => e.seq)).toEqual([5])
    expect(t.made.slice(before).map((m) => [m.call, (m.input as {KeyConditionExpression?: string}).KeyConditionExpression])).toEqual([
      ['query', 'pk = :pk AND sk >= :from'],
    ])
    expect((await store.readAfter(RUN, 2)).entries.map((e) => e.seq)).toEqual([3, 4, 5])
    expect(await store.readAfter(RUN, 5)).toEqual({entries: [], torn: null})
    await expect(store.readAfter('20261104-100000-ffff', 5)).rejects.toThrow(
      new InputError('no run 20261104-100000-ffff in dynamodb://sluice-state; `sluice journal` lists the runs'),
    )
    // Damage after the entry asked from is named by its item.
    t.items.set(`run#${RUN}|6`, {pk: {S: `run#${RUN}`}, sk: {N: '6'}, entry: {S: '{"seq":8,"at":"2026-11-04T10:00:06.000Z","type":"note"}'}})
    await expect(store.readAfter(RUN, 5)).rejects.toThrow(`dynamodb://sluice-state run#${RUN}:6: entry number 8 where 6 was expected`)
    await store.release([], RUN)
  })

  it('an entry that is not JSON is damage, named by its item', async () => {
    const t = table()
    const store = new DynamoStore('sluice-state', {}, t.calls)
    await store.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    t.items.set(`run#${RUN}|2`, {pk: {S: `run#${RUN}`}, sk: {N: '2'}, entry: {S: '{"seq": 2,'}})
    await expect(store.read(RUN)).rejects.toThrow(`dynamodb://sluice-state run#${RUN}:2: not JSON; the journal was changed after it was written`)
  })

  it('a lock is created only if none is there, lists by scanning for locks, and is removed only at the version it holds', async () => {
    const t = table()
    const store = new DynamoStore('sluice-state', {}, t.calls)
    await store.acquire(['route53:Z1/api.example.com./A', 'elbv2:arn:tg'], who)
    expect((await store.locks()).map((l) => [l.resource, l.runId])).toEqual([
      ['elbv2:arn:tg', RUN],
      ['route53:Z1/api.example.com./A', RUN],
    ])
    const created = t.made.filter((m) => m.call === 'putItem').map((m) => m.input as {ConditionExpression?: string})
    expect(created.every((c) => c.ConditionExpression === 'attribute_not_exists(pk)')).toBe(true)
    await store.release(['route53:Z1/api.example.com./A', 'elbv2:arn:tg'], RUN)
    const removed = t.made.filter((m) => m.call === 'deleteItem').map((m) => m.input as {ConditionExpression?: string})
    expect(removed.map((r) => r.ConditionExpression)).toEqual(['version = :v', 'version = :v'])
    expect(await store.locks()).toEqual([])
  })

  it("takes over a lock whose holder's process is gone from this host, only at the version it found", async () => {
    const t = table()
    const store = new DynamoStore('sluice-state', {}, t.calls)
    const dead: LockRecord = {
      resource: 'route53:Z1',
      runId: '20261104-090000-dead',
      operator: 'bob',
      host: thisHost,
      pid: 999999,
      since: '2026-11-04T09:00:00.000Z',
      heartbeat: '2026-11-04T09:00:00.000Z',
      leaseSeconds: 1,
      lockId: '0123456789abcdef',
      version: 'v-dead',
      fence: 7,
      ...(thisPlace === undefined ? {} : {place: thisPlace}),
    }
    t.items.set('lock#route53:Z1|0', {
      pk: {S: 'lock#route53:Z1'},
      sk: {N: '0'},
      runId: {S: dead.runId},
      lockId: {S: dead.lockId},
      version: {S: 'v-dead'},
      holder: {S: JSON.stringify(dead)},
    })
    await store.acquire(['route53:Z1'], who)
    const replaced = t.made.filter((m) => m.call === 'putItem').at(-1)!.input as {ConditionExpression: string; ExpressionAttributeValues: Item}
    expect(replaced.ConditionExpression).toBe('version = :v')
    expect(replaced.ExpressionAttributeValues).toEqual({':v': {S: 'v-dead'}})
    expect((await store.locks()).map((l) => l.runId)).toEqual([RUN])
    await store.release(['route53:Z1'], RUN)
  })

  it('sets, reads and clears the freeze; one that has expired is none', async () => {
    const store = new DynamoStore('sluice-state', {}, table().calls)
    expect(await store.freeze.get()).toBeNull()
    const record = {by: 'alice', reason: 'outage', since: '2026-11-04T10:00:00.000Z'}
    await store.freeze.set(record)
    expect(await store.freeze.get()).toEqual(record)
    await store.freeze.set({...record, expires: '2000-01-01T00:00:00.000Z'})
    expect(await store.freeze.get()).toBeNull()
    await store.freeze.set(record)
    await store.freeze.clear()
    expect(await store.freeze.get()).toBeNull()
  })

  it('says when calls needed retries, and what the backoff cost, on the notice channel', async () => {
    const store = new DynamoStore('sluice-state', {}, table(true, {putItem: {attempts: 3, totalRetryDelay: 1500}}).calls)
    const notices: string[] = []
    store.notice = (message) => notices.push(message)
    await store.freeze.set({by: 'alice', reason: 'outage', since: '2026-11-04T10:00:00.000Z'})
    expect(notices).toEqual([
      'dynamodb://sluice-state is throttling or failing calls: 1 call (the last PutItem) needed 2 retries, 1.5 s of backoff in all; the run goes on, slower',
    ])
  })

  it('AccessDenied names the call, the table and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<DynamoDbCalls>({
      describeTable: async () => ({Table: {TableStatus: 'ACTIVE'}}),
      putItem: async () => Promise.reject(accessDenied()),
    })
    const denied = new DynamoStore('sluice-state', {}, calls)
    await expectDenied(denied.freeze.set({by: 'alice', reason: 'r', since: '2026-11-04T10:00:00.000Z'}), 'dynamodb:PutItem', 'dynamodb://sluice-state')
  })

  it('a setting refused while its client is made (a profile that is not there) stays bad input, not a failed call', async () => {
    const refused = new InputError('--profile nope: there is no profile nope in the shared config file')
    const {calls} = fakeCalls<DynamoDbCalls>({describeTable: async () => Promise.reject(refused)})
    const error = await new DynamoStore('sluice-state', {}, calls).runIds().catch((e: Error) => e)
    expect(error).toBe(refused)
    expect(error).not.toBeInstanceOf(AwsCallError)
  })
})
