import type {Policy} from './config.js'
import {Fleet} from './fleet.js'
import type {SimulationRecord} from './record.js'
import {fleetConfig} from './scenario/load-scenario.js'
import type {Scenario, SetupPolicy} from './scenario/schema.js'
import {summarize, type RunSummary} from './summary.js'
import {faultWindow, type FaultWindow} from './fault-window.js'

export interface ScenarioOutcome {
  record: SimulationRecord
  summary: RunSummary
  window: FaultWindow | null
}

/**
 * One scenario under one setup: what `simulate` runs once per setup, and what a rehearsal drives
 * a runbook against, so both read the same fleet, record and summary.
 */
export class ScenarioRun {
  readonly fleet: Fleet
  readonly window: FaultWindow | null

  constructor(
    readonly scenario: Scenario,
    policy: Policy | SetupPolicy,
  ) {
    this.fleet = new Fleet(fleetConfig(scenario, policy))
    this.window = faultWindow(scenario.faults)
  }

  /** Runs on to the end of the scenario, or to `until` when that is later, and sums it up. */
  finish(until = this.scenario.duration): ScenarioOutcome {
    this.fleet.extendTo(Math.max(this.scenario.duration, until))
    this.fleet.run()
    return this.outcome()
  }

  /** Ends here: an interrupted rehearsal reports what happened up to where it stopped (the record holds only ticks run). */
  stop(): ScenarioOutcome {
    return this.outcome()
  }

  private outcome(): ScenarioOutcome {
    return {record: this.fleet.record, summary: summarize(this.fleet.record, this.window), window: this.window}
  }
}
