import type {JournalEntry, StateStore} from '../ports/state-store.js'
import {runningHolder} from './controls.js'
import {runStart, runStatus, type RunStatus} from './journal.js'

/** How often `sluice watch` reads the run's journal. */
export const WATCH_POLL_MS = 500

export interface WatchEnd {
  runId: string
  runbook: string
  /** How the run ended, or `unfinished` when it is not running and never ended. */
  status: RunStatus
  /** Whether it was running when the watch began. */
  wasRunning: boolean
  /** Why the watch stopped before a run-end entry: the run is not running. */
  notRunning?: string
}

/**
 * Follows a run's journal from any machine that reaches its state store: every entry so far
 * (those of attempts before a resume marked past), then each new one as the running process appends it, until its run-end entry. A run that has
 * ended shows its entries and ends at once; one that is not running and never ended (its process
 * died) shows its entries and says so.
 */
export async function watchRun(store: StateStore, runId: string, onEntry: (entry: JournalEntry, past: boolean) => void, signal: AbortSignal, pollMs = WATCH_POLL_MS): Promise<WatchEnd> {
  let read = await store.read(runId)
  const runbook = runStart(read).runbookName
  const attempts = (entries: JournalEntry[]) => entries.filter((e) => e.type === 'run-start' || e.type === 'resume')
  // `past` marks the entries of attempts before the latest one (a run resumed after it stopped).
  const latest = attempts(read.entries).at(-1)?.seq ?? 0
  let shown = 0
  const show = (entries: JournalEntry[]): void => {
    for (const e of entries.slice(shown)) onEntry(e, e.seq < latest)
    shown = entries.length
  }
  const ended = (entries: JournalEntry[]) => entries.filter((e) => e.type === 'run-start' || e.type === 'resume' || e.type === 'run-end').at(-1)?.type === 'run-end'
  const first = runningHolder(runId, read, await store.locks())
  const wasRunning = 'holder' in first
  for (;;) {
    show(read.entries)
    if (ended(read.entries)) return {runId, runbook, status: runStatus(read), wasRunning}
    if (signal.aborted) return {runId, runbook, status: runStatus(read), wasRunning}
    const running = runningHolder(runId, read, await store.locks())
    if ('why' in running) {
      // It may have ended between the two reads: read the journal once more before saying so.
      read = await store.read(runId)
      show(read.entries)
      if (ended(read.entries)) return {runId, runbook, status: runStatus(read), wasRunning}
      return {runId, runbook, status: runStatus(read), wasRunning, notRunning: running.why}
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
