import {RefusedError} from '../errors.js'
import type {FreezePort} from './control-plane.js'

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

/** Who holds a lock on a resource. */
export interface LockHolder {
  resource: string
  runId: string
  operator: string
  host: string
  /** ISO 8601 */
  since: string
}

/** A run could not take a lock: someone else is driving the same resource. */
export class LockedError extends RefusedError {
  constructor(readonly holder: LockHolder) {
    super(
      `${holder.resource} is locked by run ${holder.runId} of ${holder.operator} on ${holder.host} since ${holder.since}; ` +
        `if that run is dead, break the lock with --break-lock ${holder.runId}`,
    )
  }
}

/**
 * Where sluice keeps what must outlive a process: run journals, resource locks and the change
 * freeze. The local directory is the default; a team shares one in AWS.
 */
export interface StateStore {
  readonly label: string
  readonly freeze: FreezePort
  /** Appends one entry; it is durable when the promise resolves. */
  append(runId: string, entry: JournalEntry): Promise<void>
  read(runId: string): Promise<JournalRead>
  runIds(): Promise<string[]>
  /** Takes every lock or none. A lock the same run already holds is kept (resume). */
  acquire(resources: string[], holder: Omit<LockHolder, 'resource'>): Promise<void>
  release(resources: string[], runId: string): Promise<void>
  /** Removes every lock a run holds; returns the resources it held. */
  breakLocks(runId: string): Promise<string[]>
}

/** A run id that sorts by start time and is unlikely to collide: 20261130-054012-a1b2. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  return `${stamp}-${Math.random().toString(16).slice(2, 6)}`
}

/** Parses journal text: every line must be JSON; a last line without its newline that does not parse is a torn write. */
export function parseJournal(runId: string, text: string): JournalRead {
  const lines = text.split('\n')
  const last = lines.pop() ?? ''
  const entries: JournalEntry[] = []
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    try {
      entries.push(JSON.parse(line) as JournalEntry)
    } catch {
      throw new Error(`journal of run ${runId} is corrupt at line ${i + 1}: not JSON; it was changed after it was written`)
    }
  })
  if (last === '') return {entries, torn: null}
  try {
    // A complete entry written without its newline (unusual, but not a torn write).
    entries.push(JSON.parse(last) as JournalEntry)
    return {entries, torn: null}
  } catch {
    return {entries, torn: {line: lines.length + 1, bytes: Buffer.byteLength(last), text: last.slice(0, 200)}}
  }
}
