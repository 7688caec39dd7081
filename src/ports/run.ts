import type {EngineIO} from './io.js'

/** What every run takes, rehearsed or live. */
export interface RunInputs {
  io: EngineIO
  /** Aborted on an interrupt: the run stops at the next safe point. */
  signal: AbortSignal
  operator: string
  /** Indexes of the approve steps approved in advance (`--approve STEP`). */
  approved?: number[]
}
