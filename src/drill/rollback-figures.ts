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
  /** The worst window (the drill's full-service window) from the rollback's start: the share of its demand not served, in %. */
  peakLossPercent: number
  /** Seconds of that window. */
  windowSeconds: number
}

/**
 * The figures of a rollback that began at `startedAt` (scenario seconds) on this timeline. Sums,
 * never a second at a time: a real second holds a few dozen requests at a drill's scales, and
 * answers land in the second after the one they were asked in, so a second read alone is noise.
 */
export function rollbackFigures(
  timeline: Timeline,
  r: Omit<RollbackFigures, 'lostPercent' | 'peakLossPercent' | 'windowSeconds'>,
  windowSeconds: number,
): RollbackFigures {
  const from = Array.from(timeline.t).findIndex((t) => t >= r.startedAt)
  const loss = (a: number, b: number): number => {
    let demand = 0
    let served = 0
    for (let i = a; i < b; i++) {
      demand += timeline.demand[i]
      served += timeline.served[i]
    }
    return demand > 0 ? Math.max(0, (demand - served) / demand) * 100 : 0
  }
  const end = timeline.t.length
  if (from < 0) return {...r, lostPercent: 0, peakLossPercent: 0, windowSeconds}
  const width = Math.max(1, Math.round(windowSeconds))
  let peak = 0
  for (let i = from; i + width <= end; i++) peak = Math.max(peak, loss(i, i + width))
  return {...r, lostPercent: loss(from, end), peakLossPercent: end - from < width ? loss(from, end) : peak, windowSeconds: width}
}
