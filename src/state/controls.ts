import {RefusedError} from '../errors.js'
import type {ControlEffect, ControlIntent, ControlKind, ControlSender, PromoteListener, PromoteWait, RunControls} from '../ports/controls.js'
import {checkRunId, journalLock, type JournalRead, type StateStore} from '../ports/state-store.js'
import {runStart} from './journal.js'
import {byPid} from './liveness.js'
import {judgeRun, notRunning} from './run-life.js'

/** How often a live run looks for controls: well inside the shortest gate interval (1 s). */
export const CONTROL_POLL_MS = 500

/** The run a control went to, who is running it, and what the run did with it. */
export interface ControlSent {
  runId: string
  runbook: string
  control: ControlIntent
  /** The process that holds the run's journal lock, which acts on it. */
  runningBy: {operator: string; host: string; pid: number}
  /** What the run did with it, from its journal (null when the run had not yet taken it up). */
  taken: {effect: ControlEffect; did: string; at: string; step: number | null; title: string | null} | null
}

/** How long a sender waits for the run to take a control up: the run looks every half second. */
const ACK_SECONDS = 10

/**
 * Sends a control to a running run: refused (exit 4) when no live process holds it, judged by
 * its pid on this host or its lease (src/state/liveness.ts), so an intent is never left for a
 * process that is not there to act on it. Then waits for the run to record it in its journal,
 * and says what it did; a run that dies before it does is refused too.
 */
export async function sendControl(
  store: StateStore,
  runId: string,
  kind: ControlKind,
  sender: ControlSender,
  notify: (m: string) => void = () => undefined,
  options: {rollback?: boolean; full?: boolean} = {},
): Promise<ControlSent> {
  checkRunId(runId)
  const read = await store.read(runId)
  const lock = (await store.locks()).find((l) => l.resource === journalLock(runId))
  if (lock && !byPid(lock))
    notify(`run ${runId} is held by pid ${lock.pid} on ${lock.host}: watching its lease for up to ${lock.leaseSeconds} s to tell whether that process is alive`)
  const life = await judgeRun(store, runId, read)
  if (life.state !== 'running') throw new RefusedError(notRunning(runId, life, read))
  const control = await store.sendControl(runId, {
    ...sender,
    kind,
    at: new Date().toISOString(),
    ...(options.rollback ? {rollback: true} : {}),
    ...(options.full ? {full: true} : {}),
  })
  const {operator, host, pid} = life.holder
  const sent = {runId, runbook: runStart(read).runbookName, control, runningBy: {operator, host, pid}}
  const give = performance.now() + Math.min(ACK_SECONDS, life.holder.leaseSeconds) * 1000
  for (;;) {
    const now = await store.read(runId)
    const taken = takenUp(now, control.seq)
    if (taken) return {...sent, taken}
    if (performance.now() > give) {
      const again = await judgeRun(store, runId, now)
      if (again.state === 'running') return {...sent, taken: null}
      throw new RefusedError(`${notRunning(runId, again, now)}; it never took up the ${kind} (control ${control.seq}), so nothing acted on it`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
}

/** The journal's record of a control being taken up, with the step it reached. */
function takenUp(read: JournalRead, seq: number): ControlSent['taken'] {
  let step: {index: number; title: string} | null = null
  for (const e of read.entries) {
    if (e.type === 'step-start') step = {index: Number(e.step), title: String(e.title)}
    if (e.type === 'control' && (e.control as ControlIntent).seq === seq)
      return {
        effect: e.effect as ControlEffect,
        did: typeof e.did === 'string' ? e.did : String(e.effect),
        at: e.at,
        step: step?.index ?? null,
        title: step?.title ?? null,
      }
  }
  return null
}

type Listener = (control: ControlIntent, effect: ControlEffect, did: string) => void

/** A wait listening for a promote, oldest first: the first takes the next one. */
interface Waiting {
  waits: PromoteWait
  did: () => string
  take: (who: ControlSender) => void
}

/** What a taken `promote --full` goes on to do, said to its sender and in the journal. */
const fullFromHere =
  'every bake and wait from here ends as soon as its gate has passed the times in a row it needs (a gate is still judged); an approve step still asks'

/**
 * The running process's side: it polls the store for controls newer than those it found when it
 * started (a resumed run never acts on an earlier run's controls), and acts on each once. A
 * promote is taken by the wait listening for it (an approval, a bake), or answered with what the
 * run is doing when nothing is: a promote is never counted as done when nothing acted on it.
 */
export class ControlPoller implements RunControls {
  pausedBy: ControlSender | null = null
  fullyPromotedBy: ControlSender | null = null
  private seen = 0
  private timer?: NodeJS.Timeout
  private polling?: Promise<void>
  private readonly pending: Array<[ControlIntent, ControlEffect, string]> = []
  private listener?: Listener
  private readonly wake = new Set<() => void>()
  private readonly waiting: Waiting[] = []
  private now = 'starting'
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
    for (const [c, e, d] of this.pending.splice(0)) listener(c, e, d)
  }

  doing(what: string): void {
    this.now = what
  }

  listenForPromote(did: () => string, signal: AbortSignal, waits: PromoteWait = 'bake'): PromoteListener {
    let taken = false
    let resolve!: (who: ControlSender | null) => void
    const promoted = new Promise<ControlSender | null>((r) => (resolve = r))
    // After a `promote --full` a bake is promoted as it starts: its gate is still judged.
    if (waits === 'bake' && this.fullyPromotedBy && !signal.aborted) {
      resolve(this.fullyPromotedBy)
      return {promoted, taken: () => true, release: () => undefined}
    }
    const waiting: Waiting = {
      waits,
      did,
      take: (who) => {
        taken = true
        release()
        resolve(who)
      },
    }
    const release = () => {
      const i = this.waiting.indexOf(waiting)
      if (i >= 0) this.waiting.splice(i, 1)
      signal.removeEventListener('abort', release)
      if (!taken) resolve(null)
    }
    if (signal.aborted) resolve(null)
    else {
      this.waiting.push(waiting)
      signal.addEventListener('abort', release, {once: true})
    }
    return {promoted, taken: () => taken, release}
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
    let did: string
    if (c.kind === 'pause') {
      effect = this.pausedBy ? 'already paused' : 'paused'
      did = this.pausedBy ? `already paused by ${this.pausedBy.operator}: ${this.now}` : `paused: ${this.now}`
      this.pausedBy ??= who
    } else if (c.kind === 'promote' && c.full) {
      ;[effect, did] = this.promoteFully(who)
    } else if (c.kind === 'promote') {
      const waiting = this.waiting[0]
      if (this.pausedBy) {
        effect = 'continued'
        did = `continued from the pause: ${this.now}`
        this.pausedBy = null
        for (const w of [...this.wake]) w()
      } else if (waiting) {
        effect = 'promoted'
        did = waiting.did()
        waiting.take(who)
      } else {
        effect = 'nothing waiting'
        did = `nothing was waiting for a promote: ${this.now}`
      }
    } else {
      effect = 'aborting'
      did = `aborting${c.rollback ? ', then rolling back' : ''}: ${this.now}; stopping at the next safe point`
      this.pausedBy = null
    }
    if (this.listener) this.listener(c, effect, did)
    else this.pending.push([c, effect, did])
    if (c.kind === 'abort') {
      this.onAbort(c)
      for (const w of [...this.wake]) w()
    }
  }

  /**
   * `promote --full`: what a promote does now (continue a pause, or answer the wait listening:
   * a bake, or an approval asking now), and from here on every bake and wait is promoted as it
   * starts. Approvals yet to come still ask: the runbook put a person there, and this operator
   * answered what was before them, not questions not yet asked.
   */
  private promoteFully(who: ControlSender): [ControlEffect, string] {
    let now: string
    if (this.pausedBy) {
      now = `continued from the pause: ${this.now}`
      this.pausedBy = null
      for (const w of [...this.wake]) w()
    } else if (this.waiting[0]) {
      const waiting = this.waiting[0]
      now = waiting.did()
      waiting.take(who)
    } else now = `nothing was waiting now: ${this.now}`
    const already = this.fullyPromotedBy
    this.fullyPromotedBy ??= who
    // A bake listening behind the first (a way back's hold beside its gate) is ended too.
    for (const w of this.waiting.filter((x) => x.waits === 'bake')) w.take(who)
    const ahead = already ? `already promoted fully by ${already.operator} on ${already.host}` : fullFromHere
    return ['promoted fully', `promoted fully: ${now}; ${ahead}`]
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
}
