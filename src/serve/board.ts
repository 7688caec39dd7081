import type {FreezeRecord} from '../ports/control-plane.js'
import type {StateStore} from '../ports/state-store.js'
import {lastAttempt} from '../state/journal.js'
import {LeaseObserver} from '../state/liveness.js'
import {lifeAt, lifeStatus} from '../state/run-life.js'
import {lockRow, runHeader, RunSummary, RunViewFold, type LockRow, type RunHeader, type RunView} from './run-view.js'

// What the page reads from the state store, looked at again and again by one `serve` process: its
// lease observer carries across looks, so a run held on another host is judged as its lease moves
// or lapses, and no look waits a lease to find out (as `sluice journal` may).

export interface RunRow extends RunHeader {
  /** Why a run is dead, or who holds one not yet judged. */
  detail: string | null
  /** The step it is on, or was on when it ended. */
  step: string | null
}

export interface Board {
  store: string
  freeze: FreezeRecord | null
  runs: RunRow[]
  locks: LockRow[]
}

export type RunPage = RunView & {life: {status: string; detail: string | null}}

/** How long a run's page fold is kept with nobody asking for it. */
const VIEW_IDLE_MS = 60_000
/** An ended run is looked at this often for the list (a rollback of it appends again), not at every look. */
const ENDED_LOOK_MS = 5_000

export class BoardReader {
  private readonly observer = new LeaseObserver()
  /** What the list knows of each run, read on from where the last look stopped. */
  private readonly summaries = new Map<string, {fold: RunSummary; lookedAt: number}>()
  /** The runs whose page someone follows. */
  private readonly views = new Map<string, {fold: RunViewFold; askedAt: number}>()

  constructor(private readonly store: StateStore) {}

  /** Reads what a fold has not yet taken. */
  private async catchUp<F extends RunSummary>(runId: string, fold: F): Promise<F> {
    fold.add(await this.store.readAfter(runId, fold.lastSeq))
    return fold
  }

  /** Every run in the store, newest first, with the freeze and every lock. */
  async board(): Promise<Board> {
    const [ids, locks, freeze] = await Promise.all([this.store.runIds(), this.store.locks(), this.store.freeze.get()])
    const now = Date.now()
    for (const id of this.summaries.keys()) if (!ids.includes(id)) this.summaries.delete(id)
    const runs = await Promise.all(
      ids.map(async (runId): Promise<RunRow> => {
        try {
          let known = this.summaries.get(runId)
          const ended = known !== undefined && lastAttempt(known.fold.read()).end !== null
          if (!known || !ended || now - known.lookedAt >= ENDED_LOOK_MS) {
            const fold = await this.catchUp(runId, known?.fold ?? new RunSummary())
            known = {fold, lookedAt: now}
            this.summaries.set(runId, known)
          }
          const read = known.fold.read()
          const life = read.torn ? {status: 'torn'} : lifeStatus(lifeAt(runId, read, locks, this.observer), read)
          return {...runHeader(runId, read), status: life.status, detail: 'detail' in life ? (life.detail ?? null) : null, step: known.fold.step}
        } catch (error) {
          this.summaries.delete(runId)
          return {
            runId,
            runbook: '?',
            operator: '?',
            host: '?',
            startedAt: '?',
            status: 'unreadable',
            detail: (error as Error).message,
            lastSeq: 0,
            step: null,
            pausedBy: null,
          }
        }
      }),
    )
    runs.sort((a, b) => (a.runId < b.runId ? 1 : -1))
    return {
      store: this.store.label,
      freeze,
      runs,
      locks: locks.map(lockRow),
    }
  }

  /** One run's page: its journal's view and whether it is running now. */
  async run(runId: string): Promise<RunPage> {
    const now = Date.now()
    for (const [id, v] of this.views) if (now - v.askedAt > VIEW_IDLE_MS) this.views.delete(id)
    const [fold, locks] = await Promise.all([this.catchUp(runId, this.views.get(runId)?.fold ?? new RunViewFold()), this.store.locks()])
    this.views.set(runId, {fold, askedAt: now})
    const read = fold.read()
    const life = lifeStatus(lifeAt(runId, read, locks, this.observer), read)
    return {...fold.view(runId, locks), life: {status: life.status, detail: life.detail ?? null}}
  }
}
