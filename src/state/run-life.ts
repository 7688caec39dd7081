import {journalLock, type JournalRead, type LockRecord, type LockRequest, type StateStore} from '../ports/state-store.js'
import {judgeHolder, LeaseObserver} from './liveness.js'
import {lastAttempt, runStatus, type RunStart} from './journal.js'

/**
 * Whether a run is running, from its journal and its journal's lock: ended (its last start or
 * resume has a run-end), running (a live process holds the lock), dead (nobody holds it, or its
 * holder is gone), or not yet known (a holder on another host whose lease has not been seen to
 * move or lapse).
 */
export type RunLife =
  | {state: 'ended'; outcome: string; at: string}
  | {state: 'running'; holder: LockRecord; how: string}
  | {state: 'dead'; why: string; holder: LockRecord | null}
  | {state: 'unknown'; holder: LockRecord}

/** Whether the run's last attempt (forwards or back) has ended, and how. */
function ending(read: JournalRead): {outcome: string; at: string} | null {
  const {end} = lastAttempt(read)
  return end ? {outcome: runStatus(read), at: end.at} : null
}

/** The run's life as far as one look can tell; `observer` carries what earlier looks saw of its lease. */
export function lifeAt(runId: string, read: JournalRead, locks: LockRecord[], observer: LeaseObserver): RunLife {
  const end = ending(read)
  if (end) return {state: 'ended', ...end}
  const lock = locks.find((l) => l.resource === journalLock(runId)) ?? null
  if (!lock) return {state: 'dead', why: 'dead (no process holds it)', holder: null}
  const verdict = observer.observe(lock)
  if (!verdict) return {state: 'unknown', holder: lock}
  return verdict.alive ? {state: 'running', holder: lock, how: verdict.how} : {state: 'dead', why: verdict.why, holder: lock}
}

/** The run's life for certain: a holder on another host is watched for up to one lease. */
export async function judgeRun(store: StateStore, runId: string, read: JournalRead): Promise<RunLife> {
  const first = lifeAt(runId, read, await store.locks(), new LeaseObserver())
  if (first.state !== 'unknown') return first
  const found = await judgeHolder(first.holder, async () => (await store.locks()).find((l) => l.resource === journalLock(runId)) ?? null)
  if (found.alive) return {state: 'running', holder: found.current ?? first.holder, how: found.how}
  // It may have ended while sluice watched: then its journal says so.
  const end = ending(await store.read(runId))
  return end ? {state: 'ended', ...end} : {state: 'dead', why: found.why, holder: found.current}
}

/** Why a control, a watch or a listing finds the run not running, with what to do next. */
export function notRunning(runId: string, life: RunLife, read: JournalRead): string {
  if (life.state === 'running' || life.state === 'unknown') return `run ${runId} is ${lifeLabel(life, read)}`
  if (life.state === 'ended') return `run ${runId} is not running: it ended ${runStatus(read)} at ${life.at}`
  const where = life.holder ? ` on ${life.holder.host}` : ''
  if (lastAttempt(read).phase === 'back')
    return (
      `run ${runId} is not running: its rollback never ended, and its process${where} is ${life.why}; ` +
      `\`sluice resume ${runId}\` (or \`sluice rollback ${runId}\`) goes on with the rollback`
    )
  return (
    `run ${runId} is not running: it never ended, and its process${where} is ${life.why}; ` +
    `\`sluice resume ${runId}\` continues it, \`sluice rollback ${runId}\` undoes what it changed`
  )
}

/**
 * The status a listing shows: how the run ended (its journal's status), or `running`, or `dead`
 * with why (`pid N gone`, `lease lapsed …`), or `unfinished` while a holder elsewhere is unjudged.
 */
export function lifeStatus(life: RunLife, read: JournalRead): {status: string; detail?: string} {
  switch (life.state) {
    case 'ended':
      return {status: runStatus(read)}
    case 'running':
      return lastAttempt(read).phase === 'back' ? {status: 'running', detail: 'rolling back'} : {status: 'running'}
    case 'dead': {
      const why = life.why.replace(/^dead \((.*)\)$/, '$1')
      return {status: 'dead', detail: lastAttempt(read).phase === 'back' ? `rolling back; ${why}` : why}
    }
    case 'unknown':
      return {status: 'unfinished', detail: `held by pid ${life.holder.pid} on ${life.holder.host}; not yet seen alive`}
  }
}

export function lifeLabel(life: RunLife, read: JournalRead): string {
  const {status, detail} = lifeStatus(life, read)
  return detail ? `${status} (${detail})` : status
}

/**
 * The locks an ended run's process left behind: it died between its last journal entry and letting
 * go (a kill -9 after rollback-end). They are taken as any dead holder's are (at once for a pid gone
 * from this host, else after a lease with no renewal; a live holder's are not), then let go, so a
 * run that has ended never keeps its resources locked.
 */
export async function releaseLeftLocks(store: StateStore, runId: string, who: LockRequest, notify: (message: string) => void): Promise<void> {
  const left = (await store.locks()).filter((l) => l.runId === runId).map((l) => l.resource)
  if (left.length === 0) return
  notify(
    `run ${runId} has ended, but its process left ${left.length === 1 ? 'a lock' : `${left.length} locks`} behind (${left.join(', ')}): letting go of ${left.length === 1 ? 'it' : 'them'}`,
  )
  await store.acquire(left, who, {notify})
  await store.release(left, runId)
}

/** One run as a list of runs shows it: `sluice journal`, and `watch` or `pause` picking the live run. */
export interface RunListing {
  runId: string
  /** How it ended, or running, dead or unfinished (a holder on another host not yet judged). */
  status: string
  /** Why a run is dead (`pid 4242 gone`, `lease lapsed …`). */
  detail?: string
  runbook: string
  operator: string
  host: string
  startedAt: string
}

/**
 * Every run with its status: how it ended, or `running`, or `dead (pid N gone)` / `dead (lease
 * lapsed …)` for one that never ended. A run held on another host (or by a lock that records no
 * start time for its pid) is judged by watching its lease
 * (all of them at once, for at most one lease), and `notify` says so first.
 */
export async function listRuns(store: StateStore, notify: (message: string) => void = () => undefined): Promise<RunListing[]> {
  const ids = await store.runIds()
  const locks = ids.length > 0 ? await store.locks() : []
  const observer = new LeaseObserver()
  const rows = await Promise.all(
    ids.map(async (runId) => {
      try {
        const read = await store.read(runId)
        const start = read.entries[0] as unknown as RunStart & {at: string}
        const row = {
          runId,
          status: '',
          runbook: start?.runbookName ?? '?',
          operator: start?.operator ?? '?',
          host: start?.host ?? '?',
          startedAt: start?.at ?? '?',
        }
        if (read.torn) return {row: {...row, status: 'torn'}}
        const life = lifeAt(runId, read, locks, observer)
        return {row: {...row, ...lifeStatus(life, read)}, read: life.state === 'unknown' ? read : undefined}
      } catch (error) {
        return {row: {runId, status: `unreadable: ${(error as Error).message}`, runbook: '?', operator: '?', host: '?', startedAt: '?'}}
      }
    }),
  )
  const unknown = rows.filter((r) => r.read)
  if (unknown.length > 0) {
    notify(
      `${unknown.length === 1 ? '1 unfinished run is' : `${unknown.length} unfinished runs are`} held by a process sluice cannot judge by its pid (on another host, or a lock that records no start time): watching ${unknown.length === 1 ? 'its lease' : 'their leases'} to tell whether ${unknown.length === 1 ? 'it is' : 'they are'} alive`,
    )
    await Promise.all(
      unknown.map(async (r) => {
        Object.assign(r.row, {detail: undefined}, lifeStatus(await judgeRun(store, r.row.runId, r.read!), r.read!))
      }),
    )
  }
  return rows.map((r) => r.row)
}
