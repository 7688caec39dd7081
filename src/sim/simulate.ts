import type {Policy} from './config.js'
import type {SimulationRecord} from './record.js'
import {ScenarioRun} from './scenario-run.js'
import {amplificationDuringFault, type RunSummary} from './summary.js'
import {faultWindow, type FaultWindow} from './fault-window.js'
import type {Scenario} from './scenario/schema.js'
import {overSeeds, type OverSeeds} from './seeds.js'

export interface SetupRun {
  name: string
  policy: Policy
  summary: RunSummary
  record: SimulationRecord
}

export interface SimulationReport {
  scenario: Scenario
  window: FaultWindow | null
  setups: SetupRun[]
  /** Every setup again on more seeds (--seeds): where it held and where it tipped. Null for one seed. */
  overSeeds: OverSeeds | null
}

/**
 * Runs the scenario once per setup, each from the same seed, so setups differ only by policy; with
 * `seeds` above 1, every setup also on that many seeds from the scenario's own.
 */
export function simulateSetups(scenario: Scenario, setups: Array<{name: string; policy: Policy}>, seeds = 1): SimulationReport {
  const window = faultWindow(scenario.faults)
  return {
    scenario,
    window,
    setups: setups.map(({name, policy}) => {
      const {record, summary} = new ScenarioRun(scenario, policy).finish()
      return {name, policy, record, summary}
    }),
    overSeeds: seeds > 1 ? overSeeds(scenario, setups, seeds) : null,
  }
}

const round = (x: number, places = 3): number => {
  const f = 10 ** places
  return Math.round(x * f) / f
}

const roundAll = (values: ArrayLike<number>): number[] => Array.from(values, (v) => round(v))

const charted = ['demand', 'offered', 'served', 'inRotation'] as const

/**
 * The series at the record's resolution: one point a tick up to fullResolutionPoints ticks, else
 * each point the mean of `resolutionSeconds` of ticks, with each point's lowest and highest tick
 * under `low` and `high` so a spike between points is not lost.
 */
function seriesJson(record: SimulationRecord) {
  const n = record.ticks
  const pick = (get: (key: (typeof charted)[number]) => ArrayLike<number>) =>
    Object.fromEntries(charted.map((k) => [k, roundAll(get(k))])) as Record<(typeof charted)[number], number[]>
  const view = (a: Float64Array): Float64Array => a.subarray(0, n)
  return {
    resolutionSeconds: round(record.resolution),
    t: roundAll(view(record.t)),
    ...pick((k) => view(record[k])),
    ...(record.envelope ? {low: pick((k) => record.range(k)!.low), high: pick((k) => record.range(k)!.high)} : {}),
  }
}

/** The `--json` shape of `sluice simulate`. Numbers are rounded so output is stable and readable. */
export function simulationJson(report: SimulationReport) {
  return {
    scenario: report.scenario.name,
    faultWindow: report.window,
    setups: report.setups.map(setupJson),
    overSeeds: report.overSeeds && {
      randomness: report.overSeeds.randomness,
      seeds: report.overSeeds.seeds,
      setups: report.overSeeds.setups.map(({name, outcomes}) => ({
        name,
        held: outcomes.filter((o) => !o.tipped).length,
        outcomes: outcomes.map((o) => ({...o, lostPercent: round(o.lostPercent), tippedAt: o.tippedAt === null ? null : round(o.tippedAt)})),
      })),
    },
  }
}

function setupJson({name, policy, summary, record}: SetupRun) {
  const amplification = amplificationDuringFault(record)
  return {
    name,
    policy,
    meanServedDuringFault: summary.meanServedDuringFault === null ? null : round(summary.meanServedDuringFault),
    lostPercent: round(summary.lostPercent),
    recoveredSecondsAfterFix: summary.recoveredSecondsAfterFix === null ? null : round(summary.recoveredSecondsAfterFix),
    minInRotation: summary.minInRotation,
    peakErrorRatePercent: round(summary.peakErrorRatePercent),
    /** Attempts reaching the pools ÷ user requests, during the fault: what retries multiply load by. */
    loadAmplificationDuringFault: amplification === null ? null : round(amplification),
    series: seriesJson(record),
  }
}

export type SimulationJson = ReturnType<typeof simulationJson>
