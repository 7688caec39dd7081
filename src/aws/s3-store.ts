import {AwsClients, type AwsOptions} from './clients.js'
import {awsCall} from './errors.js'
import {sdkCalls, type S3Calls} from './sdk.js'
import type {FreezePort, FreezeRecord} from '../ports/control-plane.js'
import type {ControlIntent} from '../ports/controls.js'
import {RUN_ID_PATTERN, type JournalEntry, type JournalRead, type LockRecord} from '../ports/state-store.js'
import {fenceCheck, LeasingStore} from '../state/leases.js'
import {checkEntry, checkStart, DamagedStateError, parseControl, parseFreeze, parseJournal, parseLock} from '../state/records.js'

/** A sequence number as a key part: ten digits, so keys list in the order of their numbers. */
const seqKey = (seq: number): string => String(seq).padStart(10, '0')

/** What S3 answers when a conditional write or delete finds the object not as asked. */
function conditionFailed(error: unknown): boolean {
  const status = (error as {$metadata?: {httpStatusCode?: number}}).$metadata?.httpStatusCode
  const name = (error as Error).name
  // 412: not at the ETag asked (or there already, for If-None-Match); 409: another write to the key
  // was in flight; 404: gone (a lock let go while it was being renewed).
  return status === 412 || status === 409 || name === 'PreconditionFailed' || name === 'ConditionalRequestConflict' || name === 'NoSuchKey'
}

const notFound = (error: unknown): boolean =>
  (error as Error).name === 'NoSuchKey' || (error as {$metadata?: {httpStatusCode?: number}}).$metadata?.httpStatusCode === 404

/** How many objects are read at once when a journal or the locks are read whole. */
const READS_AT_ONCE = 16

/**
 * State a team shares in an S3 bucket, kept by conditional writes only (as Terraform's S3 backend
 * keeps its lock since 1.11), under a prefix:
 *   runs/RUN/entries/SEQ.json    one object per journal entry, written only if its number is free
 *   runs/RUN/controls/SEQ.json   one per control, the same way
 *   locks/RESOURCE.json          created only if none is there; renewed, taken over or removed only
 *                                at the ETag the writer read
 *   freeze.json
 * An object is written whole or not at all, so nothing here can be torn. The bucket must exist:
 * sluice creates no bucket (its policy, encryption and versioning are the team's to choose).
 */
export class S3Store extends LeasingStore {
  readonly label: string
  readonly freeze: FreezePort
  private readonly s3: S3Calls
  private readonly prefix: string

  constructor(
    private readonly bucket: string,
    prefix: string,
    aws: AwsOptions,
    calls?: S3Calls,
  ) {
    super()
    this.prefix = prefix.replace(/^\/+|\/+$/g, '')
    this.label = `s3://${bucket}${this.prefix ? `/${this.prefix}` : ''}`
    this.s3 = calls ?? sdkCalls(new AwsClients(aws)).s3
    this.freeze = this.fencedFreeze(new S3Freeze(this))
  }

  private key(path: string): string {
    return this.prefix ? `${this.prefix}/${path}` : path
  }

  private journalKey(runId: string, seq: number): string {
    return this.key(`runs/${runId}/entries/${seqKey(seq)}.json`)
  }

  private lockKey(resource: string): string {
    return this.key(`locks/${encodeURIComponent(resource)}.json`)
  }

  /** Writes an object; with a condition, only if it holds (false when it did not). */
  put(key: string, body: string, condition: {ifNoneMatch: '*'} | {ifMatch: string} | null): Promise<boolean> {
    return awsCall('S3', 'PutObject', `${this.label} (${key})`, (abortSignal) =>
      this.s3
        .putObject(
          {
            Bucket: this.bucket,
            Key: key,
            Body: body,
            ContentType: 'application/json',
            ...(condition && 'ifNoneMatch' in condition ? {IfNoneMatch: '*'} : {}),
            ...(condition && 'ifMatch' in condition ? {IfMatch: condition.ifMatch} : {}),
          },
          abortSignal,
        )
        .then(
          () => true,
          (error: unknown) => {
            if (condition && conditionFailed(error)) return false
            throw error
          },
        ),
    )
  }

  /** An object's text and ETag, or null when there is none. */
  get(key: string): Promise<{text: string; etag: string} | null> {
    return awsCall('S3', 'GetObject', `${this.label} (${key})`, async (abortSignal) => {
      try {
        const out = await this.s3.getObject({Bucket: this.bucket, Key: key}, abortSignal)
        return {text: (await out.Body?.transformToString()) ?? '', etag: out.ETag ?? ''}
      } catch (error) {
        if (notFound(error)) return null
        throw error
      }
    })
  }

  /** Deletes an object; with an ETag, only if it is still that one. */
  delete(key: string, etag?: string): Promise<boolean> {
    return awsCall('S3', 'DeleteObject', `${this.label} (${key})`, (abortSignal) =>
      this.s3.deleteObject({Bucket: this.bucket, Key: key, ...(etag ? {IfMatch: etag} : {})}, abortSignal).then(
        () => true,
        (error: unknown) => {
          if (etag && conditionFailed(error)) return false
          throw error
        },
      ),
    )
  }

  /** Every key under a prefix (after `startAfter`), in key order, with its common prefixes when a delimiter is given. */
  private async list(under: string, options: {startAfter?: string; delimiter?: string} = {}): Promise<{keys: string[]; prefixes: string[]}> {
    const keys: string[] = []
    const prefixes: string[] = []
    let token: string | undefined
    do {
      const out = await awsCall('S3', 'ListObjectsV2', `${this.label} (${under})`, (abortSignal) =>
        this.s3.listObjectsV2(
          {
            Bucket: this.bucket,
            Prefix: under,
            ...(options.delimiter ? {Delimiter: options.delimiter} : {}),
            ...(options.startAfter && !token ? {StartAfter: options.startAfter} : {}),
            ...(token ? {ContinuationToken: token} : {}),
          },
          abortSignal,
        ),
      )
      for (const o of out.Contents ?? []) if (o.Key) keys.push(o.Key)
      for (const p of out.CommonPrefixes ?? []) if (p.Prefix) prefixes.push(p.Prefix)
      token = out.IsTruncated ? out.NextContinuationToken : undefined
    } while (token)
    return {keys: keys.sort(), prefixes}
  }

  /** The objects at these keys, read a few at a time, in the keys' order (null where one went missing meanwhile). */
  private async getAll(keys: string[]): Promise<Array<{key: string; text: string; etag: string} | null>> {
    const out: Array<{key: string; text: string; etag: string} | null> = new Array<null>(keys.length).fill(null)
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < keys.length) {
        const i = next++
        const got = await this.get(keys[i])
        out[i] = got && {key: keys[i], ...got}
      }
    }
    await Promise.all(Array.from({length: Math.min(READS_AT_ONCE, keys.length)}, worker))
    return out
  }

  protected async appendEntry(runId: string, entry: JournalEntry, holder: LockRecord | null): Promise<void> {
    // S3 conditions a write on its own object only: the lock is read just before, and the entry
    // written only if its number is free, so a holder that took over and wrote its first entry
    // first leaves a woken old holder's write refused either way.
    if (holder) fenceCheck(holder, await this.readLock(holder.resource))
    const written = await this.put(this.journalKey(runId, entry.seq), JSON.stringify(entry), {ifNoneMatch: '*'})
    if (!written)
      throw new DamagedStateError(
        `${this.label} ${this.journalKey(runId, entry.seq)}: the journal already has entry ${entry.seq}; another process is writing this run`,
      )
  }

  protected async readJournal(runId: string): Promise<JournalRead | null> {
    const {keys} = await this.list(this.key(`runs/${runId}/entries/`))
    if (keys.length === 0) return null
    return checkStart(`${this.label} runs/${runId}`, await this.journalOf(runId, keys, 0))
  }

  /** From the entry `afterSeq` itself, so a run unknown to the bucket is told from one with nothing new. */
  protected async readJournalAfter(runId: string, afterSeq: number): Promise<JournalRead | null> {
    const {keys} = await this.list(this.key(`runs/${runId}/entries/`), {startAfter: this.journalKey(runId, afterSeq - 1)})
    if (keys.length === 0) return null
    return this.journalOf(
      runId,
      keys.filter((k) => k !== this.journalKey(runId, afterSeq)),
      afterSeq,
    )
  }

  /** Entry objects as a journal: each checked as a journal line is, and named by its key. */
  private async journalOf(runId: string, keys: string[], afterSeq: number): Promise<JournalRead> {
    const objects = await this.getAll(keys)
    const texts: string[] = []
    for (const [i, o] of objects.entries()) {
      const key = keys[i]
      if (!o) throw new DamagedStateError(`${this.label} ${key}: listed, then gone when read; the journal was changed after it was written`)
      let value: unknown
      try {
        value = JSON.parse(o.text)
      } catch {
        throw new DamagedStateError(`${this.label} ${key}: not JSON; the journal was changed after it was written`)
      }
      const checked = checkEntry(value)
      if (typeof checked === 'string') throw new DamagedStateError(`${this.label} ${key}: ${checked}`)
      if (key !== this.journalKey(runId, checked.seq))
        throw new DamagedStateError(`${this.label} ${key}: holds entry ${checked.seq}; the journal was changed after it was written`)
      texts.push(`${o.text}\n`)
    }
    return parseJournal(`${this.label} runs/${runId}`, texts.join(''), {afterSeq, line: afterSeq})
  }

  async runIds(): Promise<string[]> {
    const under = this.key('runs/')
    const {prefixes} = await this.list(under, {delimiter: '/'})
    return prefixes
      .map((p) => p.slice(under.length).replace(/\/$/, ''))
      .filter((id) => RUN_ID_PATTERN.test(id))
      .sort()
  }

  protected createControl(runId: string, control: ControlIntent): Promise<boolean> {
    return this.put(this.key(`runs/${runId}/controls/${seqKey(control.seq)}.json`), JSON.stringify(control), {ifNoneMatch: '*'})
  }

  protected async listControls(runId: string): Promise<ControlIntent[]> {
    const {keys} = await this.list(this.key(`runs/${runId}/controls/`))
    const objects = await this.getAll(keys)
    return objects.flatMap((o, i) => (o ? [parseControl(`${this.label} ${keys[i]}`, o.text)] : []))
  }

  private lockOf(resource: string, object: {text: string; etag: string}): LockRecord {
    return parseLock(resource, object.text, object.etag, this.lease)
  }

  protected createLock(record: LockRecord): Promise<boolean> {
    return this.put(this.lockKey(record.resource), JSON.stringify(record), {ifNoneMatch: '*'})
  }

  protected async readLock(resource: string): Promise<LockRecord | null> {
    const object = await this.get(this.lockKey(resource))
    return object ? this.lockOf(resource, object) : null
  }

  /**
   * The lock's object as it is now, if its record is still at `version`: its ETag is what the
   * write or delete after it is conditioned on, so nothing written between the two is overwritten.
   */
  private async lockAt(resource: string, version: string): Promise<string | null> {
    const object = await this.get(this.lockKey(resource))
    return object && this.lockOf(resource, object).version === version ? object.etag : null
  }

  protected async replaceLock(record: LockRecord, version: string): Promise<boolean> {
    const etag = await this.lockAt(record.resource, version)
    return etag !== null && this.put(this.lockKey(record.resource), JSON.stringify(record), {ifMatch: etag})
  }

  protected async removeLock(resource: string, version: string): Promise<boolean> {
    const etag = await this.lockAt(resource, version)
    return etag !== null && this.delete(this.lockKey(resource), etag)
  }

  protected async listLocks(): Promise<LockRecord[]> {
    const under = this.key('locks/')
    const {keys} = await this.list(under)
    const objects = await this.getAll(keys)
    return objects
      .flatMap((o, i) => (o ? [this.lockOf(decodeURIComponent(keys[i].slice(under.length, -'.json'.length)), o)] : []))
      .sort((a, b) => a.resource.localeCompare(b.resource))
  }

  freezeKey(): string {
    return this.key('freeze.json')
  }
}

class S3Freeze implements FreezePort {
  constructor(private readonly store: S3Store) {}

  async get(): Promise<FreezeRecord | null> {
    const object = await this.store.get(this.store.freezeKey())
    if (!object) return null
    const record = parseFreeze(`${this.store.label} freeze.json`, object.text)
    if (record.expires && Date.parse(record.expires) <= Date.now()) return null
    return record
  }

  async set(record: FreezeRecord): Promise<void> {
    await this.store.put(this.store.freezeKey(), JSON.stringify(record), null)
  }

  async clear(): Promise<void> {
    await this.store.delete(this.store.freezeKey())
  }
}
