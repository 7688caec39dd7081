import type {AttributeValue} from '@aws-sdk/client-dynamodb'
import {AwsClients, type AwsOptions} from './clients.js'
import {awsCall} from './errors.js'
import type {FreezePort, FreezeRecord} from '../ports/control-plane.js'
import {LockedError, type JournalEntry, type JournalRead, type LockHolder, type StateStore} from '../ports/state-store.js'

type Item = Record<string, AttributeValue>

const conditionFailed = (error: unknown): boolean => String((error as Error).message).includes('ConditionalCheckFailed')

/**
 * State a team shares, in one DynamoDB table (key: pk string, sk number), with conditional writes:
 * a journal entry is written only if its sequence number is free, a lock only if nobody else holds
 * it, so two operators on two machines cannot both proceed. The table is created on first use.
 */
export class DynamoStore implements StateStore {
  readonly label: string
  readonly freeze: FreezePort
  private readonly clients: AwsClients
  private ready?: Promise<void>

  constructor(
    private readonly table: string,
    aws: AwsOptions,
  ) {
    this.label = `dynamodb://${table}`
    this.clients = new AwsClients(aws)
    this.freeze = new DynamoFreeze(this)
  }

  private async sdk() {
    const m = await import('@aws-sdk/client-dynamodb')
    const client = await this.clients.dynamodb()
    this.ready ??= this.ensureTable(m, client)
    await this.ready
    return {m, client}
  }

  private async ensureTable(m: typeof import('@aws-sdk/client-dynamodb'), client: Awaited<ReturnType<AwsClients['dynamodb']>>): Promise<void> {
    const exists = await awsCall('DynamoDB', 'DescribeTable', this.label, () =>
      client.send(new m.DescribeTableCommand({TableName: this.table})).then(
        () => true,
        (error: Error) => {
          if (error.name === 'ResourceNotFoundException') return false
          throw error
        },
      ),
    )
    if (exists) return
    await awsCall('DynamoDB', 'CreateTable', this.label, () =>
      client.send(new m.CreateTableCommand({
        TableName: this.table,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{AttributeName: 'pk', AttributeType: 'S'}, {AttributeName: 'sk', AttributeType: 'N'}],
        KeySchema: [{AttributeName: 'pk', KeyType: 'HASH'}, {AttributeName: 'sk', KeyType: 'RANGE'}],
      })).catch((error) => {
        // Another process created it first: fine.
        if ((error as Error).name !== 'ResourceInUseException') throw error
      }),
    )
    for (let i = 0; i < 60; i++) {
      const out = await client.send(new m.DescribeTableCommand({TableName: this.table}))
      if (out.Table?.TableStatus === 'ACTIVE') return
      await new Promise((r) => setTimeout(r, 1000))
    }
  }

  async put(item: Item, condition?: {expression: string; values?: Item}): Promise<boolean> {
    const {m, client} = await this.sdk()
    try {
      await awsCall('DynamoDB', 'PutItem', this.label, () =>
        client.send(new m.PutItemCommand({
          TableName: this.table, Item: item,
          ...(condition ? {ConditionExpression: condition.expression, ...(condition.values ? {ExpressionAttributeValues: condition.values} : {})} : {}),
        })),
      )
      return true
    } catch (error) {
      if (conditionFailed(error)) return false
      throw error
    }
  }

  async get(pk: string): Promise<Item | undefined> {
    const {m, client} = await this.sdk()
    const out = await awsCall('DynamoDB', 'GetItem', this.label, () => client.send(new m.GetItemCommand({TableName: this.table, Key: {pk: {S: pk}, sk: {N: '0'}}, ConsistentRead: true})))
    return out.Item
  }

  async delete(pk: string, runId?: string): Promise<void> {
    const {m, client} = await this.sdk()
    try {
      await awsCall('DynamoDB', 'DeleteItem', this.label, () =>
        client.send(new m.DeleteItemCommand({
          TableName: this.table, Key: {pk: {S: pk}, sk: {N: '0'}},
          ...(runId ? {ConditionExpression: 'runId = :run', ExpressionAttributeValues: {':run': {S: runId}}} : {}),
        })),
      )
    } catch (error) {
      if (!conditionFailed(error)) throw error
    }
  }

  private async query(pk: string): Promise<Item[]> {
    const {m, client} = await this.sdk()
    const items: Item[] = []
    let start: Item | undefined
    do {
      const out = await awsCall('DynamoDB', 'Query', this.label, () =>
        client.send(new m.QueryCommand({
          TableName: this.table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: {':pk': {S: pk}}, ConsistentRead: true, ExclusiveStartKey: start,
        })),
      )
      items.push(...(out.Items ?? []))
      start = out.LastEvaluatedKey
    } while (start)
    return items
  }

  async append(runId: string, entry: JournalEntry): Promise<void> {
    if (entry.seq === 1) await this.put({pk: {S: 'runs'}, sk: {N: String(Date.parse(entry.at) * 1000 + Math.floor(Math.random() * 1000))}, runId: {S: runId}})
    const written = await this.put(
      {pk: {S: `run#${runId}`}, sk: {N: String(entry.seq)}, entry: {S: JSON.stringify(entry)}},
      {expression: 'attribute_not_exists(pk)'},
    )
    if (!written) throw new Error(`journal of run ${runId} already has entry ${entry.seq}: another process is writing this run`)
  }

  async read(runId: string): Promise<JournalRead> {
    const items = await this.query(`run#${runId}`)
    if (items.length === 0) throw new Error(`no run ${runId} in ${this.label}`)
    const entries = items.map((i) => JSON.parse(i.entry.S!) as JournalEntry).sort((a, b) => a.seq - b.seq)
    // DynamoDB writes an item whole or not at all: there is no torn write to find here.
    return {entries, torn: null}
  }

  async runIds(): Promise<string[]> {
    return (await this.query('runs')).map((i) => i.runId.S!).sort()
  }

  async acquire(resources: string[], holder: Omit<LockHolder, 'resource'>): Promise<void> {
    const taken: string[] = []
    for (const resource of resources) {
      const record: LockHolder = {...holder, resource}
      const ok = await this.put(
        {pk: {S: `lock#${resource}`}, sk: {N: '0'}, runId: {S: holder.runId}, holder: {S: JSON.stringify(record)}},
        {expression: 'attribute_not_exists(pk) OR runId = :run', values: {':run': {S: holder.runId}}},
      )
      if (ok) {
        taken.push(resource)
        continue
      }
      await this.release(taken, holder.runId)
      const current = await this.get(`lock#${resource}`)
      throw new LockedError(current ? (JSON.parse(current.holder.S!) as LockHolder) : {...record, runId: 'unknown', operator: 'unknown', host: 'unknown', since: 'unknown'})
    }
  }

  async release(resources: string[], runId: string): Promise<void> {
    for (const resource of resources) await this.delete(`lock#${resource}`, runId)
  }

  async breakLocks(runId: string): Promise<string[]> {
    const {m, client} = await this.sdk()
    const out = await awsCall('DynamoDB', 'Scan', this.label, () =>
      client.send(new m.ScanCommand({TableName: this.table, FilterExpression: 'begins_with(pk, :lock) AND runId = :run', ExpressionAttributeValues: {':lock': {S: 'lock#'}, ':run': {S: runId}}, ConsistentRead: true})),
    )
    const broken: string[] = []
    for (const item of out.Items ?? []) {
      await this.delete(item.pk.S!, runId)
      broken.push(item.pk.S!.slice('lock#'.length))
    }
    return broken
  }
}

class DynamoFreeze implements FreezePort {
  constructor(private readonly store: DynamoStore) {}

  async get(): Promise<FreezeRecord | null> {
    const item = await this.store.get('freeze')
    if (!item) return null
    const record = JSON.parse(item.record.S!) as FreezeRecord
    if (record.expires && Date.parse(record.expires) <= Date.now()) return null
    return record
  }

  async set(record: FreezeRecord): Promise<void> {
    await this.store.put({pk: {S: 'freeze'}, sk: {N: '0'}, record: {S: JSON.stringify(record)}})
  }

  async clear(): Promise<void> {
    await this.store.delete('freeze')
  }
}
