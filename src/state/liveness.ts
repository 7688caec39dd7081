import type {LockRecord} from '../ports/state-store.js'
import {thisHost} from './journal.js'
import {processRuns, processStopped, thisPlace} from '../platform/process-place.js'

/**
 * Whether the process holding a lock is alive, judged the way the locks judge it and never by
 * comparing another machine's timestamps: by its pid when it runs where this process can see
 * it (same kernel boot and pid namespace), else by its lease's version moving, watched on this
 * process's own monotonic clock for at most one lease.
 */
export type Liveness = {alive: true; how: string} | {alive: false; why: string}

const now = () => performance.now()
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * At once, by its pid, when the holder runs in this place; undefined when it does not (or cannot
 * be told). A pid that is gone is a dead holder whatever the record says. A pid that runs is the
 * holder's only if it started when the holder did: a record without the start time (written by
 * hand, or damaged) could name any process that has the pid now, a shell or a daemon, which would
 * keep a dead run "running" and take its controls for nobody; such a holder is judged by its lease.
 * So is a stopped one (SIGSTOP, Ctrl-Z): it renews nothing, and may never be continued.
 */
export function byPid(lock: LockRecord): Liveness | undefined {
  if (!lock.place || lock.place !== thisPlace || lock.host !== thisHost) return undefined
  const dead = {alive: false as const, why: `dead (pid ${lock.pid} gone)`}
  if (!processRuns(lock.pid)) return dead
  if (lock.started === undefined || processStopped(lock.pid)) return undefined
  return processRuns(lock.pid, lock.started) ? {alive: true, how: `pid ${lock.pid} runs on this host`} : dead
}

/**
 * Follows one lock's versions across reads, on this process's clock: alive once the version
 * moves, dead once a whole lease passes without it moving, undefined until one or the other.
 */
export class LeaseObserver {
  private readonly seen = new Map<string, {lockId: string; version: string; since: number; moved: boolean}>()

  /** `leaseOnly`: judge by the lease even where the pid could tell. */
  constructor(private readonly leaseOnly = false) {}

  observe(lock: LockRecord): Liveness | undefined {
    const pid = this.leaseOnly ? undefined : byPid(lock)
    if (pid) return pid
    const t = now()
    const last = this.seen.get(lock.resource)
    if (!last || last.lockId !== lock.lockId) {
      this.seen.set(lock.resource, {lockId: lock.lockId, version: lock.version, since: t, moved: false})
      return undefined
    }
    if (last.version !== lock.version) {
      this.seen.set(lock.resource, {lockId: lock.lockId, version: lock.version, since: t, moved: true})
      return {alive: true, how: 'its lease was renewed while sluice watched'}
    }
    if (t - last.since >= lock.leaseSeconds * 1000)
      return {alive: false, why: `dead (lease lapsed: not renewed in ${lock.leaseSeconds} s while sluice watched)`}
    return last.moved ? {alive: true, how: 'its lease was renewed while sluice watched'} : undefined
  }
}

/**
 * Judges a lock's holder, waiting at most one lease: by its pid at once where it can, else by
 * watching the lock (`read` reads it again) until its version moves or a lease passes. A lock
 * let go meanwhile is a holder that ended. `cancelled` stops the watch early, as undecided.
 */
export async function judgeHolder(
  lock: LockRecord,
  read: () => Promise<LockRecord | null>,
  options: {cancelled?: () => boolean; leaseOnly?: boolean} = {},
): Promise<Liveness & {current: LockRecord | null}> {
  const observer = new LeaseObserver(options.leaseOnly)
  let current: LockRecord | null = lock
  const poll = Math.max(100, Math.min(1000, (lock.leaseSeconds * 1000) / 20))
  for (;;) {
    if (current === null) return {alive: false, why: 'dead (it let go of its lock)', current}
    if (current.lockId !== lock.lockId) return {alive: true, how: `another process (pid ${current.pid} on ${current.host}) holds it now`, current}
    const verdict = observer.observe(current)
    if (verdict) return {...verdict, current}
    if (options.cancelled?.()) return {alive: false, why: 'not judged (cancelled)', current}
    await sleep(poll)
    current = await read()
  }
}
