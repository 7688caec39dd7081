import type {FreezeRecord} from '../ports/control-plane.js'
import type {StateStore} from '../ports/state-store.js'
import {LeaseObserver} from '../state/liveness.js'
import {lifeAt, lifeStatus} from '../state/run-life.js'
import {lockRow, runHeader, runView, type LockRow, type RunHeader, type RunView} from './run-view.js'

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

export class BoardReader {
  private readonly observer = new LeaseObserver()

  constructor(private readonly store: StateStore) {}

  /** Every run in the store, newest first, with the freeze and every lock. */
  async board(): Promise<Board> {
    const [ids, locks, freeze] = await Promise.all([this.store.runIds(), this.store.locks(), this.store.freeze.get()])
    const runs = await Promise.all(
      ids.map(async (runId): Promise<RunRow> => {
        try {
          const read = await this.store.read(runId)
          const life = read.torn ? {status: 'torn'} : lifeStatus(lifeAt(runId, read, locks, this.observer), read)
          let step: string | null = null
          for (const e of read.entries) if (e.type === 'step-start') step = `step ${Number(e.step) + 1}: ${String(e.title)}`
          return {...runHeader(runId, read), status: life.status, detail: 'detail' in life ? (life.detail ?? null) : null, step}
        } catch (error) {
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
    const [read, locks] = await Promise.all([this.store.read(runId), this.store.locks()])
    const life = lifeStatus(lifeAt(runId, read, locks, this.observer), read)
    return {...runView(runId, read, locks), life: {status: life.status, detail: life.detail ?? null}}
  }
}
