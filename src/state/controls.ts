import {RefusedError} from '../errors.js'
import type {ControlEffect, ControlIntent, ControlKind, ControlSender, RunControls} from '../ports/controls.js'
import {checkRunId, journalLock, type JournalRead, type LockRecord, type StateStore} from '../ports/state-store.js'
import {runStart, runStatus} from './journal.js'

/** How often a live run looks for controls: well inside the shortest gate interval (1 s). */
export const CONTROL_POLL_MS = 500

/** The run a control went to, and who is running it. */
export interface ControlSent {
  runId: string
  runbook: string
  control: ControlIntent
  /** The process that holds the run's journal lock, which acts on it. */
  runningBy: {operator: string; host: string; pid: number}
}

/**
 * Whether a run is running now, and by whom: a process holds its journal's lock and its journal
 * has not ended since it last started. A lock whose heartbeat is more than three leases old by
 * this machine's clock is a dead holder's (the allowance covers clocks that disagree).
 */
export function runningHolder(runId: string, read: JournalRead, locks: LockRecord[], now = Date.now()): {holder: LockRecord} | {why: string} {
  const marks = read.entries.filter((e) => e.type === 'run-start' || e.type === 'resume' || e.type === 'run-end')
  const last = marks.at(-1)
  const lock = locks.find((l) => l.resource === journalLock(runId))
  if (last?.type === 'run-end') return {why: `run ${runId} is not running: it ended ${String(last.outcome)} at ${last.at}${lock ? '' : ''}`}
  if (!lock) return {why: `run ${runId} is not running: no process holds it (${runStatus(read)}; \`sluice resume ${runId}\` continues it)`}
  const beat = Date.parse(lock.heartbeat)
  if (Number.isFinite(beat) && now - beat > 3 * lock.leaseSeconds * 1000)
    return {why: `run ${runId} is not running: its process (pid ${lock.pid} on ${lock.host}) last renewed its lease at ${lock.heartbeat}, more than ${3 * lock.leaseSeconds} s ago`}
  return {holder: lock}
}

/**
 * Sends a control to a running run: refused (exit 4) when no live process holds it, so an
 * intent is never left for a process that is not there to act on it.
 */
export async function sendControl(store: StateStore, runId: string, kind: ControlKind, sender: ControlSender): Promise<ControlSent> {
  checkRunId(runId)
  const read = await store.read(runId)
  const running = runningHolder(runId, read, await store.locks())
  if ('why' in running) throw new RefusedError(running.why)
  const control = await store.sendControl(runId, {...sender, kind, at: new Date().toISOString()})
  const {operator, host, pid} = running.holder
  return {runId, runbook: runStart(read).runbookName, control, runningBy: {operator, host, pid}}
}

type Listener = (control: ControlIntent, effect: ControlEffect) => void

/**
 * The running process's side: it polls the store for controls newer than those it found when it
 * started (a resumed run never acts on an earlier run's controls), and acts on each once.
 */
export class ControlPoller implements RunControls {
  pausedBy: ControlSender | null = null
  promotions = 0
  private seen = 0
  private timer?: NodeJS.Timeout
  private polling?: Promise<void>
  private readonly pending: Array<[ControlIntent, ControlEffect]> = []
  private listener?: Listener
  private readonly wake = new Set<() => void>()
  private readonly promoteWaiters = new Set<(who: ControlSender) => void>()
  private failing = false

  /** `paused`: the pause a resumed run inherits from its journal (the run stopped while paused). */
  constructor(
    private readonly store: StateStore,
    readonly runId: string,
    private readonly onAbort: (control: ControlIntent) => void,
    private readonly warn: (message: string) => void,
    paused: ControlSender | null = null,
  ) {
    this.pausedBy = paused
  }

  async start(intervalMs = CONTROL_POLL_MS): Promise<void> {
    this.seen = (await this.store.controls(this.runId)).at(-1)?.seq ?? 0
    // Kept referenced on purpose: a run held by a pause waits on nothing but this poll (no gate,
    // no sleep), and with no referenced timer Node would end the process mid-await (exit 13),
    // locks and all. stop() clears it when the run ends, however it ends.
    this.timer = setInterval(() => {
      this.polling ??= this.poll().finally(() => {
        this.polling = undefined
      })
    }, intervalMs)
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.polling
    for (const w of this.wake) w()
  }

  /** Every control received, with what it did; those received before this call are delivered now. */
  subscribe(listener: Listener): void {
    this.listener = listener
    for (const [c, e] of this.pending.splice(0)) listener(c, e)
  }

  private async poll(): Promise<void> {
    let controls: ControlIntent[]
    try {
      controls = await this.store.controls(this.runId)
    } catch (error) {
      if (!this.failing) this.warn(`could not read controls for this run from ${this.store.label}: ${(error as Error).message}; trying again`)
      this.failing = true
      return
    }
    this.failing = false
    for (const c of controls.filter((x) => x.seq > this.seen)) {
      this.seen = c.seq
      this.receive(c)
    }
  }

  private receive(c: ControlIntent): void {
    const who: ControlSender = {operator: c.operator, host: c.host, pid: c.pid}
    let effect: ControlEffect
    if (c.kind === 'pause') {
      effect = this.pausedBy ? 'already paused' : 'paused'
      this.pausedBy ??= who
    } else if (c.kind === 'promote') {
      if (this.pausedBy) {
        effect = 'continued'
        this.pausedBy = null
        for (const w of [...this.wake]) w()
      } else {
        effect = 'promoted'
        this.promotions++
        for (const w of [...this.promoteWaiters]) w(who)
      }
    } else {
      effect = 'aborting'
      this.pausedBy = null
    }
    if (this.listener) this.listener(c, effect)
    else this.pending.push([c, effect])
    if (c.kind === 'abort') {
      this.onAbort(c)
      for (const w of [...this.wake]) w()
    }
  }

  whilePaused(signal: AbortSignal): Promise<void> {
    if (!this.pausedBy || signal.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        if (this.pausedBy && !signal.aborted) return
        this.wake.delete(done)
        signal.removeEventListener('abort', done)
        resolve()
      }
      this.wake.add(done)
      signal.addEventListener('abort', done, {once: true})
    })
  }

  nextPromote(signal: AbortSignal): Promise<ControlSender | null> {
    if (signal.aborted) return Promise.resolve(null)
    return new Promise((resolve) => {
      const done = (who: ControlSender | null) => {
        this.promoteWaiters.delete(done)
        signal.removeEventListener('abort', aborted)
        resolve(who)
      }
      const aborted = () => done(null)
      this.promoteWaiters.add(done)
      signal.addEventListener('abort', aborted, {once: true})
    })
  }
}
