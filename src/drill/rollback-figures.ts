import type {GateVerdict} from '../ports/io.js'
import type {Timeline} from './report-card.js'

/**
 * A rollback after a drill's runbook, read off one side's timeline from the moment it began: what
 * the way back cost. The pool receiving the traffic carries nearly all of it by the end, so the
 * run's figures from the rollback on are that pool's.
 */
export interface RollbackFigures {
  how: 'ramped' | 'now'
  /** Scenario seconds on the side's own timeline. */
  startedAt: number
  endedAt: number
  outcome: 'done' | 'held' | 'interrupted'
  message: string | null
  /** How it said it would go back, a line per undo. */
  plan: string[]
  /** Its gates' verdicts on the way back, `at` in scenario seconds. */
  verdicts: GateVerdict[]
  /** Demand not served from the rollback's start to the end of the run, in %. */
  lostPercent: number
  /** The worst second from the rollback's start: the share of its demand not served, in %. */
  peakLossPercent: number
}

/** The figures of a rollback that began at `startedAt` (scenario seconds) on this timeline. */
export function rollbackFigures(timeline: Timeline, r: Omit<RollbackFigures, 'lostPercent' | 'peakLossPercent'>): RollbackFigures {
  let demand = 0
  let served = 0
  let peak = 0
  for (let i = 0; i < timeline.t.length; i++) {
    if (timeline.t[i] < r.startedAt) continue
    const d = timeline.demand[i]
    const s = Math.min(d, timeline.served[i])
    demand += d
    served += s
    if (d > 0) peak = Math.max(peak, ((d - s) / d) * 100)
  }
  return {...r, lostPercent: demand > 0 ? ((demand - served) / demand) * 100 : 0, peakLossPercent: peak}
}
