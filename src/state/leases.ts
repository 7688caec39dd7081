import {randomBytes} from 'node:crypto'
import {InputError, RefusedError} from '../errors.js'
import {envSeconds} from '../input/env-seconds.js'
import type {FreezePort} from '../ports/control-plane.js'
import type {ControlIntent} from '../ports/controls.js'
import {operatorName} from './journal.js'
import {byPid, judgeHolder} from './liveness.js'
import {performance} from 'node:perf_hooks'
import {thisPlace, thisStart} from '../platform/process-place.js'
import {
  checkRunId,
  journalLock,
  MAX_LEASE_SECONDS,
  RUN_ID_PATTERN,
  LockedError,
  LostLockError,
  type JournalEntry,
  type JournalRead,
  type LockRecord,
  type LockRequest,
  type StateStore,
} from '../ports/state-store.js'

/**
 * How long a lock lasts without a renewal. Long enough that a holder stalled for a while (a slow
 * AWS call, two busy cores, a laptop lid closed for a moment) keeps its locks: it renews three
 * times per lease, so two renewals can fail or run late and the lease still holds. Short enough
 * that after a kill -9 a resume waits at most half a minute, which an operator in an outage can
 * bear. $SLUICE_LEASE_SECONDS overrides it: longer for a flaky link, a few seconds in the tests.
 */
export const LEASE_SECONDS = 30
/** How many renewals per lease: every 10 s with the default lease. */
export const HEARTBEATS_PER_LEASE = 3

/** The lease this process writes into its locks: $SLUICE_LEASE_SECONDS, else LEASE_SECONDS. */
export function leaseSeconds(env: NodeJS.ProcessEnv = process.env): number {
  return envSeconds({name: 'SLUICE_LEASE_SECONDS', what: "a lock's lease", fallback: LEASE_SECONDS, min: 1, max: MAX_LEASE_SECONDS}, env)
}

/** A lock id as `sluice locks` shows it: bad input otherwise (a run id is the usual mistake). */
export function checkLockId(lockId: string): string {
  if (!/^([0-9a-f]{16}|legacy-[0-9a-f]{12})$/.test(lockId))
    throw new InputError(
      `--break-lock: expected a lock id as \`sluice locks\` shows it (16 hex digits), got ${JSON.stringify(lockId)}${RUN_ID_PATTERN.test(lockId) ? ', which is a run id' : ''}`,
    )
  return lockId
}

/** A moment by both clocks: how long since it is the longer of the two (below). */
const now = (): {mono: number; wall: number} => ({mono: performance.now(), wall: Date.now()})

/**
 * Milliseconds since a moment, by whichever clock says longer: the monotonic one runs on while a
 * process is stopped but not while the machine sleeps (a laptop's lid closed); the wall clock runs
 * through both, and a jump forward only renews a lease early.
 */
const since = (t: {mono: number; wall: number} | undefined): number => (t ? Math.max(performance.now() - t.mono, Date.now() - t.wall) : Infinity)

/**
 * What a store checks before it writes under a lock: that the lock there now is the one the writer
 * holds (its id and fencing token). Anything else is the lock lost: refused, naming who holds it.
 */
export function fenceCheck(holder: LockRecord, current: LockRecord | null): void {
  if (current && current.lockId === holder.lockId && current.fence === holder.fence) return
  throw new LostLockError(
    holder.resource,
    current,
    current
      ? `its lease lapsed (this process was stopped, suspended or cut off for longer than ${holder.leaseSeconds} s) and another took the lock, with fencing token ${current.fence} against this process's ${holder.fence}`
      : 'it was let go or broken while this process was stopped, suspended or cut off',
  )
}

/** The lease algorithm, over what a store can do with one lock record atomically. */
export abstract class LeasingStore implements StateStore {
  abstract readonly label: string
  abstract readonly freeze: FreezePort
  notice?: (message: string) => void
  protected readonly lease = leaseSeconds()
  /** The locks this process holds, by resource: renewed every lease / HEARTBEATS_PER_LEASE. */
  private readonly held = new Map<string, LockRecord>()
  private readonly troubles = new Map<string, Error>()
  /** When each held lock was last renewed (since(), above). */
  private readonly renewedAt = new Map<string, {mono: number; wall: number}>()
  private timer?: NodeJS.Timeout
  private beat?: Promise<void>
  private renewals: Promise<void> = Promise.resolve()
  private who?: LockRequest

  /** Creates the record if no lock exists on its resource. */
  protected abstract createLock(record: LockRecord): Promise<boolean>
  protected abstract readLock(resource: string): Promise<LockRecord | null>
  /** Replaces the lock on record.resource only if it is still at `version`. */
  protected abstract replaceLock(record: LockRecord, version: string): Promise<boolean>
  /** Removes the lock on a resource only if it is still at `version`. */
  protected abstract removeLock(resource: string, version: string): Promise<boolean>
  protected abstract listLocks(): Promise<LockRecord[]>
  /**
   * Appends a checked entry; the first entry creates the journal, and must be the first. After it,
   * `holder` is the journal's lock as this process holds it: the store writes the entry only while
   * the lock it finds is that one (its lock id and fencing token), else throws LostLockError.
   */
  protected abstract appendEntry(runId: string, entry: JournalEntry, holder: LockRecord | null): Promise<void>
  protected abstract readJournal(runId: string): Promise<JournalRead | null>
  /** The entries after `afterSeq`; null for an unknown run. */
  protected abstract readJournalAfter(runId: string, afterSeq: number): Promise<JournalRead | null>
  abstract runIds(): Promise<string[]>
  /** Writes a control only if its sequence number is free. */
  protected abstract createControl(runId: string, control: ControlIntent): Promise<boolean>
  /** A run's controls, checked, oldest first. */
  protected abstract listControls(runId: string): Promise<ControlIntent[]>

  async sendControl(runId: string, control: Omit<ControlIntent, 'seq'>): Promise<ControlIntent> {
    checkRunId(runId)
    // Two senders at once: the one whose number is taken reads again and takes the next.
    for (let attempt = 0; attempt < 20; attempt++) {
      const seq = ((await this.listControls(runId)).at(-1)?.seq ?? 0) + 1
      const intent = {...control, seq}
      if (await this.createControl(runId, intent)) return intent
    }
    throw new RefusedError(
      `could not record the ${control.kind} for run ${runId} in ${this.label}: others were sending controls to it at the same moment; try again`,
    )
  }

  controls(runId: string): Promise<ControlIntent[]> {
    checkRunId(runId)
    return this.listControls(runId)
  }

  async append(runId: string, entry: JournalEntry): Promise<void> {
    // The first entry creates the journal (and only a new run writes it); anyone who writes after
    // it must hold the journal's lock, so two live processes never write one journal.
    if (entry.seq === 1) return this.appendEntry(runId, entry, null)
    const resource = journalLock(runId)
    // A lock this process lost is not taken again behind the run's back: it stops.
    const trouble = this.troubles.get(runId)
    if (trouble) throw trouble
    if (!this.held.has(resource)) await this.acquire([resource], {...(this.who ?? {operator: operatorName(), host: 'unknown'}), runId})
    const lost = await this.stillHolds(runId)
    if (lost) throw lost
    const holder = this.held.get(resource)
    if (!holder) throw new LostLockError(resource, await this.readLock(resource), 'it was let go')
    try {
      // The entry carries the token it was written under: whoever reads the journal sees whose it is.
      await this.appendEntry(runId, {...entry, fence: holder.fence}, holder)
    } catch (error) {
      if (error instanceof LostLockError) this.lose(holder, error)
      throw error
    }
  }

  /**
   * A change a run makes to shared state besides its journal (the freeze), made under that run's
   * journal lock as its entries are: only while the lock is still this process's, `write` given
   * the lock to condition the write on. Without a run, or for a run this process never held (an
   * operator's own \`sluice freeze\`), `write` gets null and writes as it is.
   */
  protected async underRunLock(runId: string | undefined, write: (holder: LockRecord | null) => Promise<void>): Promise<void> {
    if (runId === undefined) return write(null)
    const trouble = this.troubles.get(runId)
    if (trouble) throw trouble
    const holder = this.held.get(journalLock(runId))
    if (!holder) return write(null)
    const lost = await this.stillHolds(runId)
    if (lost) throw lost
    try {
      await write(holder)
    } catch (error) {
      if (error instanceof LostLockError) this.lose(holder, error)
      throw error
    }
  }

  /**
   * The freeze, with a run's changes to it fenced by the run's lock: for a store that cannot
   * condition a write on another record (a file, an S3 object), the lock is read just before.
   */
  protected fencedFreeze(inner: FreezePort): FreezePort {
    const fenced = async (holder: LockRecord | null, write: () => Promise<void>) => {
      if (holder) fenceCheck(holder, await this.readLock(holder.resource))
      await write()
    }
    return {
      get: () => inner.get(),
      set: (record, byRun = record.runId) => this.underRunLock(byRun, (holder) => fenced(holder, () => inner.set(record))),
      clear: (byRun) => this.underRunLock(byRun, (holder) => fenced(holder, () => inner.clear())),
    }
  }

  /** A lock this process held and lost: never renewed again, and the run stops before its next change. */
  private lose(record: LockRecord, error: LostLockError): void {
    if (this.held.get(record.resource)?.lockId === record.lockId) this.held.delete(record.resource)
    this.troubles.set(record.runId, error)
  }

  async stillHolds(runId: string): Promise<Error | null> {
    const trouble = this.troubles.get(runId)
    if (trouble) return trouble
    const stale = [...this.held.values()].filter((r) => r.runId === runId && since(this.renewedAt.get(r.resource)) > (this.lease * 1000) / 2)
    if (stale.length === 0) return null
    // Stopped, suspended or starved past half a lease: renewed before anything more is written or changed.
    await this.inTurn(async () => {
      for (const record of stale) if (since(this.renewedAt.get(record.resource)) > (this.lease * 1000) / 2) await this.renew(record.resource)
    })
    return this.troubles.get(runId) ?? null
  }

  /**
   * Renewals one at a time, the heartbeat's and those made before a change alike: two in flight
   * at once would race, the second at the version the first replaced, and find the lock "taken".
   */
  private inTurn(renewal: () => Promise<void>): Promise<void> {
    const turn = this.renewals.then(renewal)
    this.renewals = turn.catch(() => undefined)
    return turn
  }

  async read(runId: string): Promise<JournalRead> {
    checkRunId(runId)
    const read = await this.readJournal(runId)
    if (!read) throw new InputError(`no run ${runId} in ${this.label}; \`sluice journal\` lists the runs`)
    return read
  }

  async readAfter(runId: string, afterSeq: number): Promise<JournalRead> {
    checkRunId(runId)
    if (afterSeq === 0) return this.read(runId)
    const read = await this.readJournalAfter(runId, afterSeq)
    if (!read) throw new InputError(`no run ${runId} in ${this.label}; \`sluice journal\` lists the runs`)
    return read
  }

  /**
   * A lock's fencing token: one more than the lock it takes over, and never less than the time in
   * microseconds, so a lock let go and taken anew still gets a larger one than any before it (by
   * clocks that agree to within the time between the two).
   */
  private fence(after?: LockRecord): number {
    return Math.max(Date.now() * 1000, (after?.fence ?? 0) + 1)
  }

  private record(resource: string, who: LockRequest, after?: LockRecord): LockRecord {
    const at = new Date().toISOString()
    return {
      fence: this.fence(after),
      resource,
      runId: who.runId,
      operator: who.operator,
      host: who.host,
      pid: process.pid,
      since: who.since ?? at,
      heartbeat: at,
      leaseSeconds: this.lease,
      lockId: randomBytes(8).toString('hex'),
      version: randomBytes(8).toString('hex'),
      ...(thisPlace === undefined ? {} : {place: thisPlace}),
      ...(thisStart === undefined ? {} : {started: thisStart}),
    }
  }

  async acquire(resources: string[], who: LockRequest, options: {notify?: (message: string) => void} = {}): Promise<void> {
    this.who = who
    const taken: string[] = []
    const contended: LockRecord[] = []
    const cancel = {done: false}
    try {
      for (const resource of [...new Set(resources)]) {
        const mine = this.held.get(resource)
        if (mine) {
          if (mine.runId !== who.runId) throw new LockedError(mine)
          continue
        }
        const record = this.record(resource, who)
        if (await this.createLock(record)) {
          this.hold(record)
          taken.push(resource)
          continue
        }
        const current = await this.readLock(resource)
        if (current) contended.push(current)
        else if (await this.createLock(record)) {
          this.hold(record)
          taken.push(resource)
        } else throw new LockedError((await this.readLock(resource)) ?? record)
      }
      if (contended.length > 0) {
        // Said from the first second: whose lock, and what sluice waits for (nothing, when the
        // holder ran on this host and its pid is gone).
        const gone = contended.filter((c) => byPid(c)?.alive === false)
        const watched = contended.filter((c) => !gone.includes(c))
        if (gone.length > 0)
          options.notify?.(
            `${gone.map((c) => `${c.resource} is locked by run ${c.runId} of ${c.operator} on ${c.host} (pid ${c.pid})`).join('; ')}: ` +
              `that process is gone from this host, so ${gone.length === 1 ? 'its lock is' : 'its locks are'} taken now`,
          )
        if (watched.length > 0) {
          const longest = Math.max(...watched.map((c) => c.leaseSeconds))
          options.notify?.(
            `${watched.map((c) => `${c.resource} is locked by run ${c.runId} of ${c.operator} on ${c.host} (pid ${c.pid})${c.damaged ? ` (its lock record is damaged: ${c.damaged})` : ''}`).join('; ')}: ` +
              `watching for up to ${longest} s whether that process is alive (it renews its lease every ${Math.round(longest / HEARTBEATS_PER_LEASE)} s)`,
          )
        }
        const results = await Promise.allSettled(
          contended
            .map(async (c) => {
              const dead = await this.watch(c, cancel)
              if (cancel.done) return
              const record = this.record(c.resource, who, dead)
              // Taken only if it is still the version that went unrenewed (or was let go meanwhile).
              const took = (await this.replaceLock(record, dead.version)) || ((await this.readLock(c.resource)) === null && (await this.createLock(record)))
              if (!took) throw new LockedError((await this.readLock(c.resource)) ?? dead)
              this.hold(record)
              taken.push(c.resource)
            })
            .map((p) =>
              p.catch((error: unknown) => {
                cancel.done = true
                throw error
              }),
            ),
        )
        const failed = results.find((r) => r.status === 'rejected')
        if (failed) throw failed.reason
      }
    } catch (error) {
      cancel.done = true
      await this.letGo(taken).catch(() => undefined)
      throw error
    }
  }

  /**
   * Judges a lock's holder (src/state/liveness.ts): at once by its pid when it ran on this host,
   * else by watching its lease for at most a whole lease on this process's clock. Resolves with
   * the lock when its holder is dead; throws LockedError naming the holder once it shows it lives.
   * A holder whose pid is alive is still watched: a process stalled for a whole lease loses its
   * locks, as the lease promises, and stops before its next change.
   */
  private async watch(lock: LockRecord, cancel: {done: boolean}): Promise<LockRecord> {
    const pid = byPid(lock)
    if (pid && !pid.alive) return lock
    const found = await judgeHolder(lock, () => this.readLock(lock.resource), {cancelled: () => cancel.done, leaseOnly: true})
    if (found.alive && found.current) throw new LockedError(found.current)
    return lock
  }

  private hold(record: LockRecord): void {
    this.held.set(record.resource, record)
    this.renewedAt.set(record.resource, now())
    this.troubles.delete(record.runId)
    if (!this.timer) {
      this.timer = setInterval(
        () => {
          // One renewal at a time: a slow one must not race the next with a stale version.
          this.beat ??= this.inTurn(() => this.heartbeat()).finally(() => {
            this.beat = undefined
          })
        },
        (this.lease * 1000) / HEARTBEATS_PER_LEASE,
      )
      // Renewals must not keep a finished command alive.
      this.timer.unref()
    }
  }

  /** Renews every lock this process holds; a lock lost or not renewed stops the run's next change. */
  private async heartbeat(): Promise<void> {
    for (const resource of [...this.held.keys()]) await this.renew(resource)
  }

  /** Renews one lock at the version this process last wrote (in its turn: inTurn); one another process has taken is lost. */
  private async renew(resource: string): Promise<void> {
    const record = this.held.get(resource)
    if (!record) return
    const renewed = {...record, heartbeat: new Date().toISOString(), version: randomBytes(8).toString('hex')}
    const asked = now()
    try {
      if (await this.replaceLock(renewed, record.version)) {
        if (this.held.get(record.resource) === record) {
          this.held.set(record.resource, renewed)
          // From when it was asked: the lease the store now holds began no later than that.
          this.renewedAt.set(record.resource, asked)
        }
        return
      }
      const current = await this.readLock(record.resource)
      this.lose(
        record,
        new LostLockError(
          record.resource,
          current,
          `its lease was not renewed for ${record.leaseSeconds} s (this process was stopped, suspended or cut off), and ${current ? 'another took the lock' : 'it was let go'}`,
        ),
      )
    } catch (error) {
      // A renewal in flight when the process was stopped fails on waking (its deadline passed
      // while it slept), before it can find the lock taken. If another holds it now, that is what
      // happened, and what the operator must be told (exit 4, naming the holder), not a timeout.
      const current = await this.readLock(record.resource).catch(() => undefined)
      if (current && current.lockId !== record.lockId) {
        this.lose(
          record,
          new LostLockError(
            record.resource,
            current,
            `its lease was not renewed for ${record.leaseSeconds} s (this process was stopped, suspended or cut off), and another took the lock`,
          ),
        )
        return
      }
      if (!this.troubles.has(record.runId))
        this.troubles.set(
          record.runId,
          new RefusedError(
            `could not renew the lock on ${record.resource}: ${(error as Error).message}; stopped before the next change, so as not to go on without it`,
          ),
        )
    }
  }

  trouble(runId: string): Error | null {
    return this.troubles.get(runId) ?? null
  }

  /**
   * Lets go of locks: first out of what the heartbeat renews, then, once a renewal in flight has
   * landed, removed at the version last written. A renewal that lands between the two would
   * otherwise write the lock back under a new version, and the removal at the old one find nothing
   * to remove: a lock left held by a process that has ended (seen in the team-store game day).
   */
  private async letGo(resources: string[]): Promise<void> {
    const records = resources.flatMap((resource) => {
      const record = this.held.get(resource)
      return record ? [record] : []
    })
    for (const record of records) this.held.delete(record.resource)
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
    await this.renewals
    const errors: unknown[] = []
    for (const record of records) {
      try {
        if (await this.removeLock(record.resource, record.version)) continue
        // Renewed meanwhile: still this process's own lock, at the version the renewal wrote.
        const now = await this.readLock(record.resource)
        if (now && now.runId === record.runId && now.pid === record.pid && now.host === record.host) await this.removeLock(record.resource, now.version)
      } catch (error) {
        errors.push(error)
      }
    }
    if (errors.length > 0) throw errors[0]
  }

  async release(resources: string[], runId: string): Promise<void> {
    const ours = [...resources, journalLock(runId)].filter((r) => this.held.get(r)?.runId === runId)
    this.troubles.delete(runId)
    await this.letGo(ours)
  }

  locks(): Promise<LockRecord[]> {
    return this.listLocks()
  }

  async breakLock(lockId: string, confirm: (lock: LockRecord) => Promise<boolean>, options: {notify?: (message: string) => void} = {}): Promise<LockRecord> {
    checkLockId(lockId)
    const lock = (await this.listLocks()).find((l) => l.lockId === lockId)
    if (!lock) throw new InputError(`--break-lock: no lock ${lockId} in ${this.label}; \`sluice locks\` lists the locks and their ids`)
    if (this.held.has(lock.resource)) throw new RefusedError(`lock ${lockId} on ${lock.resource} is held by this process`)
    options.notify?.(
      `watching the lock on ${lock.resource} (run ${lock.runId} of ${lock.operator} on ${lock.host}, pid ${lock.pid}) for ${lock.leaseSeconds} s${lock.damaged ? ` (its lock record is damaged: ${lock.damaged})` : ''}: it is broken only if its holder does not renew it`,
    )
    let dead: LockRecord
    try {
      dead = await this.watch(lock, {done: false})
    } catch (error) {
      if (!(error instanceof LockedError)) throw error
      throw new RefusedError(
        `will not break lock ${lockId}: its holder is alive (run ${lock.runId} of ${lock.operator} on ${lock.host}, pid ${lock.pid}, renewed its lease while sluice watched); \`sluice locks\` shows it`,
      )
    }
    if (!(await confirm(dead))) throw new RefusedError(`lock ${lockId} on ${lock.resource}: not broken (not confirmed)`)
    if (!(await this.removeLock(lock.resource, dead.version)))
      throw new RefusedError(`lock ${lockId} on ${lock.resource} changed while sluice asked; it was not broken`)
    return dead
  }
}
