import type {JournalEntry, StateStore} from '../ports/state-store.js'
import {lastAttempt, runStart, runStatus, type RunStatus} from './journal.js'
import {LeaseObserver} from './liveness.js'
import {lifeAt, notRunning} from './run-life.js'

/** How often `sluice watch` reads the run's journal. */
export const WATCH_POLL_MS = 500

export interface WatchEnd {
  runId: string
  runbook: string
  /** How the run ended, or `unfinished` when it is not running and never ended. */
  status: RunStatus
  /** Whether it was running when the watch began. */
  wasRunning: boolean
  /** The outcome its last run-end entry records (what its own process exited with), once it has one. */
  outcome?: string
  /** Why the watch stopped before a run-end entry: the run is not running. */
  notRunning?: string
}

/**
 * Follows a run's journal from any machine that reaches its state store: every entry so far
 * (those of attempts before a resume marked past), then each new one as the running process appends it, until its run-end entry. A run that has
 * ended shows its entries and ends at once; one that is not running and never ended (its process
 * died) shows its entries and says so.
 */
export async function watchRun(
  store: StateStore,
  runId: string,
  onEntry: (entry: JournalEntry, past: boolean) => void,
  signal: AbortSignal,
  pollMs = WATCH_POLL_MS,
): Promise<WatchEnd> {
  let read = await store.read(runId)
  const runbook = runStart(read).runbookName
  const attempts = (entries: JournalEntry[]) => entries.filter((e) => e.type === 'run-start' || e.type === 'resume' || e.type === 'rollback-start')
  // `past` marks the entries of attempts before the latest one (a run resumed after it stopped).
  const latest = attempts(read.entries).at(-1)?.seq ?? 0
  let shown = 0
  const show = (entries: JournalEntry[]): void => {
    for (const e of entries.slice(shown)) onEntry(e, e.seq < latest)
    shown = entries.length
  }
  // Ended when the last attempt, forwards or back, has its end: a rollback is followed to its own.
  const ended = (entries: JournalEntry[]) => lastAttempt({entries, torn: null}).end !== null
  const outcome = () => String(lastAttempt(read).end?.outcome)
  // The holder's lease is followed across looks: one on another host is running until it is seen
  // to lapse, on this process's clock.
  const observer = new LeaseObserver()
  const first = lifeAt(runId, read, await store.locks(), observer)
  const wasRunning = first.state === 'running' || first.state === 'unknown'
  for (;;) {
    show(read.entries)
    if (ended(read.entries)) return {runId, runbook, status: runStatus(read), wasRunning, outcome: outcome()}
    if (signal.aborted) return {runId, runbook, status: runStatus(read), wasRunning}
    const life = lifeAt(runId, read, await store.locks(), observer)
    if (life.state === 'dead' || life.state === 'ended') {
      // It may have ended between the two reads: read the journal once more before saying so.
      read = await store.read(runId)
      show(read.entries)
      if (ended(read.entries)) return {runId, runbook, status: runStatus(read), wasRunning, outcome: outcome()}
      return {runId, runbook, status: runStatus(read), wasRunning, notRunning: notRunning(runId, life, read)}
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const t = setTimeout(done, pollMs)
      signal.addEventListener('abort', done, {once: true})
    })
    read = await store.read(runId)
  }
}

/** How long a run that has ended is given to let go of its locks before a rollback asks for them itself. */
const releaseSeconds = 10

/**
 * Waits for a run to stop (its run-end entry, or its process found dead) and to let go of its
 * locks: what `abort --rollback` does between the abort and the rollback. A run that holds its
 * locks past that is left to the rollback's own lock request, which waits out a lapsed lease.
 */
export async function waitUntilStopped(store: StateStore, runId: string, signal: AbortSignal, pollMs = WATCH_POLL_MS): Promise<WatchEnd> {
  const end = await watchRun(store, runId, () => undefined, signal, pollMs)
  const until = Date.now() + releaseSeconds * 1000
  while (!signal.aborted && Date.now() < until && (await store.locks()).some((l) => l.runId === runId))
    await new Promise((resolve) => setTimeout(resolve, pollMs))
  return end
}
