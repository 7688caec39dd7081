import type {AttributeValue, TransactWriteItem} from '@aws-sdk/client-dynamodb'
import {AwsClients, type AwsOptions} from './clients.js'
import {awsCall} from './errors.js'
import {sdkCalls, type DynamoDbCalls} from './sdk.js'
import type {FreezePort, FreezeRecord} from '../ports/control-plane.js'
import {createHash} from 'node:crypto'
import type {ControlIntent} from '../ports/controls.js'
import type {JournalEntry, JournalRead, LockRecord} from '../ports/state-store.js'
import {fenceCheck, LeasingStore} from '../state/leases.js'
import {checkEntry, checkStart, DamagedStateError, parseControl, parseFreeze, parseJournal, parseLock} from '../state/records.js'

type Item = Record<string, AttributeValue>

const conditionFailed = (error: unknown): boolean => String((error as Error).message).includes('ConditionalCheckFailed')

/**
 * State a team shares, in one DynamoDB table (key: pk string, sk number), with conditional writes:
 * a journal entry is written only if its sequence number is free; a lock is created only if none
 * exists, and renewed, taken over or removed only if it is still at the version the writer read,
 * so two operators on two machines cannot both proceed. The table is created on first use.
 */
export class DynamoStore extends LeasingStore {
  readonly label: string
  readonly freeze: FreezePort
  private readonly dynamodb: DynamoDbCalls
  private ready?: Promise<void>

  /** The table's calls are the SDK's, with the run's AWS settings, unless a test hands it its own. */
  constructor(
    private readonly table: string,
    aws: AwsOptions,
    calls?: DynamoDbCalls,
  ) {
    super()
    this.label = `dynamodb://${table}`
    this.dynamodb = calls ?? sdkCalls(new AwsClients(aws)).dynamodb
    this.freeze = this.runFencedFreeze()
  }

  /** Throttled calls since the last notice, and the backoff they waited. */
  private throttled = {calls: 0, attempts: 0, delayMs: 0, since: 0}

  /**
   * One DynamoDB call, with its deadline and error naming (awsCall). The SDK retries a throttled
   * call by itself and says only in the answer's metadata that it did: a store that throttles is
   * said on the notice channel, at most every 5 s with what it cost, so an operator can tell a
   * run that is slow on its state store from one that is stuck.
   */
  private async call<T extends {$metadata?: {attempts?: number; totalRetryDelay?: number}}>(operation: string, send: () => Promise<T>): Promise<T> {
    let out: T
    try {
      out = await awsCall('DynamoDB', operation, this.label, send)
    } catch (error) {
      this.noteRetries(operation, (error as {$metadata?: T['$metadata']}).$metadata)
      throw error
    }
    this.noteRetries(operation, out.$metadata)
    return out
  }

  private noteRetries(operation: string, metadata: {attempts?: number; totalRetryDelay?: number} | undefined): void {
    const attempts = metadata?.attempts ?? 1
    if (attempts <= 1) return
    const t = this.throttled
    t.calls++
    t.attempts += attempts - 1
    t.delayMs += metadata?.totalRetryDelay ?? 0
    const now = Date.now()
    if (now - t.since < 5000) return
    this.notice?.(
      `${this.label} is throttling or failing calls: ${t.calls} call${t.calls === 1 ? '' : 's'} (the last ${operation}) needed ${t.attempts} retr${t.attempts === 1 ? 'y' : 'ies'}, ${(t.delayMs / 1000).toFixed(1)} s of backoff in all; the run goes on, slower`,
    )
    this.throttled = {calls: 0, attempts: 0, delayMs: 0, since: now}
  }

  /** The table's calls, once the table is there. */
  private async sdk(): Promise<DynamoDbCalls> {
    this.ready ??= this.ensureTable(this.dynamodb)
    await this.ready
    return this.dynamodb
  }

  private async ensureTable(dynamodb: DynamoDbCalls): Promise<void> {
    const exists = await awsCall('DynamoDB', 'DescribeTable', this.label, () =>
      dynamodb.describeTable({TableName: this.table}).then(
        () => true,
        (error: Error) => {
          if (error.name === 'ResourceNotFoundException') return false
          throw error
        },
      ),
    )
    if (exists) return
    await awsCall('DynamoDB', 'CreateTable', this.label, () =>
      dynamodb
        .createTable({
          TableName: this.table,
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
        .catch((error) => {
          // Another process created it first: fine.
          if ((error as Error).name !== 'ResourceInUseException') throw error
        }),
    )
    for (let i = 0; i < 60; i++) {
      const out = await dynamodb.describeTable({TableName: this.table})
      if (out.Table?.TableStatus === 'ACTIVE') return
      await new Promise((r) => setTimeout(r, 1000))
    }
  }

  async put(item: Item, condition?: {expression: string; values?: Item}): Promise<boolean> {
    const dynamodb = await this.sdk()
    try {
      await this.call('PutItem', () =>
        dynamodb.putItem({
          TableName: this.table,
          Item: item,
          ...(condition ? {ConditionExpression: condition.expression, ...(condition.values ? {ExpressionAttributeValues: condition.values} : {})} : {}),
        }),
      )
      return true
    } catch (error) {
      if (conditionFailed(error)) return false
      throw error
    }
  }

  async get(pk: string): Promise<Item | undefined> {
    const dynamodb = await this.sdk()
    const out = await this.call('GetItem', () => dynamodb.getItem({TableName: this.table, Key: {pk: {S: pk}, sk: {N: '0'}}, ConsistentRead: true}))
    return out.Item
  }

  /** Deletes an item; with a version, only if it is still at that version. */
  async delete(pk: string, version?: string): Promise<boolean> {
    const dynamodb = await this.sdk()
    try {
      await this.call('DeleteItem', () =>
        dynamodb.deleteItem({
          TableName: this.table,
          Key: {pk: {S: pk}, sk: {N: '0'}},
          ...(version ? {ConditionExpression: 'version = :v', ExpressionAttributeValues: {':v': {S: version}}} : {}),
        }),
      )
      return true
    } catch (error) {
      if (!conditionFailed(error)) throw error
      return false
    }
  }

  /** Every item under a key, or those from sort key `from` on. */
  private async query(pk: string, from?: number): Promise<Item[]> {
    const dynamodb = await this.sdk()
    const items: Item[] = []
    let start: Item | undefined
    do {
      const out = await this.call('Query', () =>
        dynamodb.query({
          TableName: this.table,
          KeyConditionExpression: from === undefined ? 'pk = :pk' : 'pk = :pk AND sk >= :from',
          ExpressionAttributeValues: {':pk': {S: pk}, ...(from === undefined ? {} : {':from': {N: String(from)}})},
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      )
      items.push(...(out.Items ?? []))
      start = out.LastEvaluatedKey
    } while (start)
    return items
  }

  protected async appendEntry(runId: string, entry: JournalEntry, holder: LockRecord | null): Promise<void> {
    if (entry.seq === 1) await this.put({pk: {S: 'runs'}, sk: {N: String(Date.parse(entry.at) * 1000 + Math.floor(Math.random() * 1000))}, runId: {S: runId}})
    const item = {pk: {S: `run#${runId}`}, sk: {N: String(entry.seq)}, entry: {S: JSON.stringify(entry)}}
    const taken = () => new DamagedStateError(`${this.label} run#${runId}: the journal already has entry ${entry.seq}; another process is writing this run`)
    if (!holder) {
      if (!(await this.put(item, {expression: 'attribute_not_exists(pk)'}))) throw taken()
      return
    }
    // Refused for either condition: the lock is not the writer's (named by the fence check), or the number is taken.
    if (!(await this.underLock(holder, {Put: {TableName: this.table, Item: item, ConditionExpression: 'attribute_not_exists(pk)'}}))) throw taken()
  }

  /**
   * One transaction: the write is made only while the journal's lock is the writer's own (its id
   * and fencing token), so a holder woken after another took the lock writes nothing. False when
   * the write's own condition refused it; LostLockError, naming the holder, when the lock did.
   */
  private async underLock(holder: LockRecord, write: TransactWriteItem): Promise<boolean> {
    const dynamodb = await this.sdk()
    try {
      await this.call('TransactWriteItems', () =>
        dynamodb.transactWriteItems({
          TransactItems: [
            {
              ConditionCheck: {
                TableName: this.table,
                Key: {pk: {S: `lock#${holder.resource}`}, sk: {N: '0'}},
                ConditionExpression: 'lockId = :id AND fence = :fence',
                ExpressionAttributeValues: {':id': {S: holder.lockId}, ':fence': {N: String(holder.fence)}},
              },
            },
            write,
          ],
        }),
      )
      return true
    } catch (error) {
      if (!/TransactionCanceled/.test((error as Error).message)) throw error
      fenceCheck(holder, await this.readLock(holder.resource))
      return false
    }
  }

  /** A run's change to the freeze, under the run's lock as its journal entries are. */
  private runFencedFreeze(): FreezePort {
    const plain = new DynamoFreeze(this)
    const key = {pk: {S: 'freeze'}, sk: {N: '0'}}
    return {
      get: () => plain.get(),
      set: (record, byRun = record.runId) =>
        this.underRunLock(byRun, async (holder) => {
          if (!holder) return plain.set(record)
          if (!(await this.underLock(holder, {Put: {TableName: this.table, Item: {...key, record: {S: JSON.stringify(record)}}}})))
            throw new Error(`${this.label}: the freeze was not written, though the lock is still this run's`)
        }),
      clear: (byRun) =>
        this.underRunLock(byRun, async (holder) => {
          if (!holder) return plain.clear()
          if (!(await this.underLock(holder, {Delete: {TableName: this.table, Key: key}})))
            throw new Error(`${this.label}: the freeze was not cleared, though the lock is still this run's`)
        }),
    }
  }

  protected async readJournal(runId: string): Promise<JournalRead | null> {
    const items = await this.query(`run#${runId}`)
    if (items.length === 0) return null
    const source = `${this.label} run#${runId}`
    return checkStart(source, this.journalOf(source, items, 0))
  }

  /** From the entry `afterSeq` itself, so a run unknown to the table is told from one with nothing new: one query either way. */
  protected async readJournalAfter(runId: string, afterSeq: number): Promise<JournalRead | null> {
    const items = await this.query(`run#${runId}`, afterSeq)
    if (items.length === 0) return null
    return this.journalOf(
      `${this.label} run#${runId}`,
      items.filter((i) => Number(i.sk.N) > afterSeq),
      afterSeq,
    )
  }

  /**
   * Journal items as a journal. DynamoDB writes an item whole or not at all: there is no torn
   * write to find here. Each entry is checked as a journal line is, and named by its item.
   */
  private journalOf(source: string, unsorted: Item[], afterSeq: number): JournalRead {
    const items = unsorted.sort((a, b) => Number(a.sk.N) - Number(b.sk.N))
    for (const item of items) {
      const text = item.entry?.S
      if (text === undefined) throw new DamagedStateError(`${source}:${item.sk.N}: the item has no entry attribute`)
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        throw new DamagedStateError(`${source}:${item.sk.N}: not JSON; the journal was changed after it was written`)
      }
      const checked = checkEntry(value)
      if (typeof checked === 'string') throw new DamagedStateError(`${source}:${item.sk.N}: ${checked}`)
    }
    return parseJournal(source, items.map((i) => `${i.entry.S}\n`).join(''), {afterSeq, line: afterSeq})
  }

  async runIds(): Promise<string[]> {
    return (await this.query('runs'))
      .map((i) => i.runId?.S ?? '')
      .filter((id) => /^\d{8}-\d{6}-[0-9a-f]{4}$/.test(id))
      .sort()
  }

  /** A run's controls: items `control#RUN`, one per sequence number, each written only if its number is free. */
  protected createControl(runId: string, control: ControlIntent): Promise<boolean> {
    return this.put(
      {pk: {S: `control#${runId}`}, sk: {N: String(control.seq)}, control: {S: JSON.stringify(control)}},
      {expression: 'attribute_not_exists(pk)'},
    )
  }

  protected async listControls(runId: string): Promise<ControlIntent[]> {
    const items = (await this.query(`control#${runId}`)).sort((a, b) => Number(a.sk.N) - Number(b.sk.N))
    return items.map((i) => parseControl(`${this.label} control#${runId}:${i.sk.N}`, i.control?.S ?? ''))
  }

  private lockItem(record: LockRecord): Item {
    return {
      pk: {S: `lock#${record.resource}`},
      sk: {N: '0'},
      runId: {S: record.runId},
      lockId: {S: record.lockId},
      version: {S: record.version},
      fence: {N: String(record.fence)},
      holder: {S: JSON.stringify(record)},
    }
  }

  private lockOf(resource: string, item: Item): LockRecord {
    const text = item.holder?.S ?? ''
    const record = parseLock(resource, text, createHash('sha256').update(text).digest('hex'), this.lease)
    // The item's own version attribute is what conditional writes compare.
    return item.version?.S ? {...record, version: item.version.S} : record
  }

  protected createLock(record: LockRecord): Promise<boolean> {
    return this.put(this.lockItem(record), {expression: 'attribute_not_exists(pk)'})
  }

  protected async readLock(resource: string): Promise<LockRecord | null> {
    const item = await this.get(`lock#${resource}`)
    return item ? this.lockOf(resource, item) : null
  }

  protected replaceLock(record: LockRecord, version: string): Promise<boolean> {
    return this.put(this.lockItem(record), {expression: 'version = :v', values: {':v': {S: version}}})
  }

  protected removeLock(resource: string, version: string): Promise<boolean> {
    return this.delete(`lock#${resource}`, version)
  }

  protected async listLocks(): Promise<LockRecord[]> {
    const dynamodb = await this.sdk()
    const items: Item[] = []
    let start: Item | undefined
    do {
      const out = await awsCall('DynamoDB', 'Scan', this.label, () =>
        dynamodb.scan({
          TableName: this.table,
          FilterExpression: 'begins_with(pk, :lock)',
          ExpressionAttributeValues: {':lock': {S: 'lock#'}},
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      )
      items.push(...(out.Items ?? []))
      start = out.LastEvaluatedKey
    } while (start)
    return items.map((i) => this.lockOf(i.pk.S!.slice('lock#'.length), i)).sort((a, b) => a.resource.localeCompare(b.resource))
  }
}

class DynamoFreeze implements FreezePort {
  constructor(private readonly store: DynamoStore) {}

  async get(): Promise<FreezeRecord | null> {
    const item = await this.store.get('freeze')
    if (!item) return null
    const record = parseFreeze(`${this.store.label} freeze`, item.record?.S ?? '')
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
