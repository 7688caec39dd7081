import type {Policy} from './config.js'
import type {SimulationRecord} from './record.js'
import {ScenarioRun} from './run.js'
import {faultWindow, type FaultWindow, type RunSummary} from './summary.js'
import type {Scenario} from './scenario/schema.js'

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
}

/** Runs the scenario once per setup, each from the same seed, so setups differ only by policy. */
export function simulateSetups(scenario: Scenario, setups: Array<{name: string; policy: Policy}>): SimulationReport {
  const window = faultWindow(scenario.faults)
  return {
    scenario,
    window,
    setups: setups.map(({name, policy}) => {
      const {record, summary} = new ScenarioRun(scenario, policy).finish()
      return {name, policy, record, summary}
    }),
  }
}

const round = (x: number, places = 3): number => {
  const f = 10 ** places
  return Math.round(x * f) / f
}

const roundAll = (values: ArrayLike<number>): number[] => Array.from(values, (v) => round(v))

/** The `--json` shape of `sluice simulate`. Numbers are rounded so output is stable and readable. */
export function simulationJson(report: SimulationReport) {
  return {
    scenario: report.scenario.name,
    faultWindow: report.window,
    setups: report.setups.map(({name, policy, summary, record}) => ({
      name,
      policy,
      meanServedDuringFault: summary.meanServedDuringFault === null ? null : round(summary.meanServedDuringFault),
      lostPercent: round(summary.lostPercent),
      recoveredSecondsAfterFix: summary.recoveredSecondsAfterFix === null ? null : round(summary.recoveredSecondsAfterFix),
      minInRotation: summary.minInRotation,
      peakErrorRatePercent: round(summary.peakErrorRatePercent),
      series: {
        t: roundAll(record.t),
        demand: roundAll(record.demand),
        offered: roundAll(record.offered),
        served: roundAll(record.served),
        inRotation: Array.from(record.inRotation),
      },
    })),
  }
}

export type SimulationJson = ReturnType<typeof simulationJson>
