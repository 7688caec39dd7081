import {InputError, RefusedError} from '../errors.js'
import type {FreezePort} from './control-plane.js'
import type {ControlIntent} from './controls.js'

/** One line of a run's journal. */
export interface JournalEntry {
  seq: number
  /** ISO 8601 */
  at: string
  type: string
  [key: string]: unknown
}

/** The last line of a journal cut off mid-write (a crash or a full disk while appending). */
export interface TornWrite {
  line: number
  bytes: number
  text: string
}

export interface JournalRead {
  entries: JournalEntry[]
  torn: TornWrite | null
}

/** Who asks for a lock. */
export interface LockRequest {
  runId: string
  operator: string
  host: string
  /** ISO 8601; default now. */
  since?: string
}

/** Who holds a lock on a resource, and the lease they hold it by. */
export interface LockHolder {
  resource: string
  runId: string
  operator: string
  host: string
  pid: number
  /** ISO 8601, by the holder's clock. */
  since: string
  /** The holder's last renewal, ISO 8601 by the holder's clock: for people, never for judging expiry. */
  heartbeat: string
  /** How long the lease lasts without a renewal. */
  leaseSeconds: number
  /** The holder's kernel boot and pid namespace: where its pid means the same process (absent where the OS does not say). */
  place?: string
  /** When the holder's process started (clock ticks since boot), so a reused pid is not taken for it. */
  started?: string
  /** What is wrong with the record as read (a lease past what sluice writes), when something is: it is judged by a lease of its own. */
  damaged?: string
}

/** The longest lease sluice writes ($SLUICE_LEASE_SECONDS at most): a record claiming more is damaged. */
export const MAX_LEASE_SECONDS = 3600

/**
 * A lock as stored: a lease with a record version number (a new random version on every
 * renewal), and the lock's own id, minted when it was taken and shown only by `sluice locks`.
 */
export interface LockRecord extends LockHolder {
  lockId: string
  version: string
  /**
   * The fencing token: larger for each holder than for the one before it (a takeover adds one to
   * the token it replaces; a new lock starts from the time in microseconds), kept by renewals.
   * Whatever its holder writes under it carries it, and a store refuses a write whose token is
   * not the lock's now.
   */
  fence: number
}

/**
 * This process wrote, or was about to write, under a lock it no longer holds (its lease lapsed
 * while it was stopped or cut off, and another took the lock): refused, naming who holds it now,
 * and it changes nothing more.
 */
export class LostLockError extends RefusedError {
  constructor(
    readonly resource: string,
    readonly now: LockHolder | null,
    why: string,
  ) {
    super(
      `this process no longer holds the lock on ${resource}: ${why}; ${
        now ? `it is held by run ${now.runId} of ${now.operator} on ${now.host} (pid ${now.pid}) since ${now.since}` : 'nobody holds it now'
      }. This process changes nothing more`,
    )
  }
}

/** A run could not take a lock: another process renewed its lease while this one watched it. */
export class LockedError extends RefusedError {
  constructor(readonly holder: LockHolder) {
    super(
      `${holder.resource} is locked by run ${holder.runId} of ${holder.operator} on ${holder.host} (pid ${holder.pid}) since ${holder.since}, ` +
        `last heartbeat ${holder.heartbeat}: that process is alive (it renewed its ${holder.leaseSeconds} s lease while sluice watched). ` +
        `Wait for it to end; a process that dies lets go ${holder.leaseSeconds} s after its last heartbeat (\`sluice locks\` shows the lock)`,
    )
  }
}

/**
 * Where sluice keeps what must outlive a process: run journals, resource locks and the change
 * freeze. The local directory is the default; a team shares one in AWS.
 *
 * Locks are leases: this process renews the ones it holds every few seconds, and another process
 * (a resume of the same run included) takes one only once a whole lease has passed, by its own
 * clock, with no renewal. Appending to a journal after its first entry takes that journal's lock.
 */
export interface StateStore {
  readonly label: string
  readonly freeze: FreezePort
  /** Where the store says what an operator should know about it while it works (a team store that throttles). */
  notice?: (message: string) => void
  /** Appends one entry, whole or not at all; it is durable when the promise resolves. */
  append(runId: string, entry: JournalEntry): Promise<void>
  /** A run's journal, every entry checked; a run id that is not one, or is unknown, is bad input. */
  read(runId: string): Promise<JournalRead>
  /**
   * The entries after entry number `afterSeq`, each checked as `read` checks them, and a torn last
   * line if there is one: for a reader that follows a journal as it grows (`sluice serve`), so a
   * look costs what was written since the last one, not the whole journal.
   */
  readAfter(runId: string, afterSeq: number): Promise<JournalRead>
  runIds(): Promise<string[]>
  /**
   * Takes every lock or none. A lock held by another process is taken only after a whole lease
   * passes with no renewal (waiting for it); one it renews meanwhile is refused with LockedError.
   */
  acquire(resources: string[], who: LockRequest, options?: {notify?: (message: string) => void}): Promise<void>
  /** Lets go of the locks this process holds on these resources, and of the run's journal. */
  release(resources: string[], runId: string): Promise<void>
  /** Every lock in the store, with its lock id. */
  locks(): Promise<LockRecord[]>
  /**
   * Breaks one lock by its lock id: only once its lease has passed with no renewal (refused while
   * the holder is alive), and only if `confirm` says yes. Returns the lock it broke.
   */
  breakLock(lockId: string, confirm: (lock: LockRecord) => Promise<boolean>, options?: {notify?: (message: string) => void}): Promise<LockRecord>
  /** Why this process must not change anything more for a run (a lease it lost or could not renew), or null. */
  trouble(runId: string): Error | null
  /**
   * The same, made sure of before a change: where this process has not renewed its locks for half
   * a lease by its own clock (it was stopped, suspended or starved), it renews them now, and a
   * renewal refused is the lock lost (LostLockError).
   */
  stillHolds(runId: string): Promise<Error | null>
  /**
   * Records a control for a run (`sluice pause`, `promote`, `abort`), numbered after the last
   * one with a write that fails if the number is taken, so two senders never share one.
   */
  sendControl(runId: string, control: Omit<ControlIntent, 'seq'>): Promise<ControlIntent>
  /** A run's controls, oldest first. */
  controls(runId: string): Promise<ControlIntent[]>
}

export const RUN_ID_PATTERN = /^\d{8}-\d{6}-[0-9a-f]{4}$/

/** A run id that sorts by start time and is unlikely to collide: 20261130-054012-a1b2. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${Math.random().toString(16).slice(2, 6).padEnd(4, '0')}`
}

/** A run id a person typed: only the pattern sluice mints, so it can never name a path. */
export function checkRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId))
    throw new InputError(`run id ${JSON.stringify(runId)}: expected YYYYMMDD-HHMMSS-xxxx, like 20261130-054012-a1b2 (\`sluice journal\` lists the runs)`)
  return runId
}

/** The lock on a run's journal: whoever appends to a journal after its first entry holds it. */
export const journalLock = (runId: string): string => `journal:${runId}`
