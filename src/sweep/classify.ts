import type {Policy} from '../sim/config.js'
import type {SimulationRecord} from '../sim/record.js'
import {ScenarioRun} from '../sim/scenario-run.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {fullServiceSince, type RunSummary} from '../sim/summary.js'
import {sweepParam, type CellInput} from './params.js'

/**
 * What became of the pool in one cell of a sweep, read from the run's summary (src/sim/summary.ts),
 * where full service means completed requests within 1% of demand:
 * - unharmed: full service at every second of the run;
 * - recovered: below full service at some second, and at full service from some second to the end
 *   of the run; recoveredSecondsAfterFix is how long after the last fix that second came (0 when
 *   it came before the fix);
 * - stuck: not at full service at the end of the run, although every fault was fixed before it.
 */
export type CellOutcome = 'unharmed' | 'recovered' | 'stuck'

export const outcomes: readonly CellOutcome[] = ['unharmed', 'recovered', 'stuck']

export interface CellResult {
  outcome: CellOutcome
  /** Null when stuck. */
  recoveredSecondsAfterFix: number | null
  /** Mean completed rps from the first fault to the last fix; null when the scenario has no fault. */
  meanServedDuringFault: number | null
  /** The fewest servers in rotation at any second of the run: how far the fault took the pool down. */
  minInRotation: number
}

export function classify(record: SimulationRecord, summary: RunSummary): CellResult {
  const since = fullServiceSince(record)
  // Every run starts at second 0, so full service since then is full service at every second.
  const outcome: CellOutcome = since === null ? 'stuck' : since <= 0 ? 'unharmed' : 'recovered'
  return {
    outcome,
    recoveredSecondsAfterFix: outcome === 'stuck' ? null : summary.recoveredSecondsAfterFix,
    meanServedDuringFault: summary.meanServedDuringFault,
    minInRotation: summary.minInRotation,
  }
}

/** Everything a cell needs besides its own values: what a worker is sent once. */
export interface SweepJob {
  scenario: Scenario
  setups: Array<{name: string; policy: Policy}>
  /** Parameter names of the x axis and, for a map, the y axis. */
  params: string[]
}

/** A cell to run: a setup by index, and its x and y (NaN without a y axis). */
export interface CellQuery {
  setup: number
  x: number
  y: number
}

export function cellInput(job: SweepJob, query: CellQuery): CellInput {
  let cell: CellInput = {scenario: job.scenario, policy: job.setups[query.setup].policy}
  job.params.forEach((name, i) => {
    const value = i === 0 ? query.x : query.y
    cell = sweepParam(name)!.apply(cell, value)
  })
  return cell
}

export function runCell(job: SweepJob, query: CellQuery): CellResult {
  const {scenario, policy} = cellInput(job, query)
  const {record, summary} = new ScenarioRun(scenario, policy).finish()
  return classify(record, summary)
}

// Results cross threads as four numbers a cell: outcome index, recovery seconds, mean served and the
// fewest in rotation, NaN standing for null, so a chunk is one transferable Float64Array rather than objects.
export const resultWidth = 4

export function packResult(out: Float64Array, i: number, r: CellResult): void {
  out[i * resultWidth] = outcomes.indexOf(r.outcome)
  out[i * resultWidth + 1] = r.recoveredSecondsAfterFix ?? NaN
  out[i * resultWidth + 2] = r.meanServedDuringFault ?? NaN
  out[i * resultWidth + 3] = r.minInRotation
}

export function unpackResult(data: Float64Array, i: number): CellResult {
  const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v)
  return {
    outcome: outcomes[data[i * resultWidth]],
    recoveredSecondsAfterFix: orNull(data[i * resultWidth + 1]),
    meanServedDuringFault: orNull(data[i * resultWidth + 2]),
    minInRotation: data[i * resultWidth + 3],
  }
}
