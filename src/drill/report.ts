import type {RunResult} from '../engine/engine.js'
import {verdictText} from '../format.js'
import type {Runbook} from '../loader/runbook.js'
import type {Scenario, SetupPolicy} from '../sim/scenario/schema.js'
import type {CpuWait} from './cpu-wait.js'
import type {ReportCard, Timeline} from './report-card.js'
import type {DrillScales} from './scale.js'
import type {Failures} from './timeline.js'

/** What a drill runs: a scenario's fault alone, or a runbook against its rehearsal scenario. */
export type DrillTarget =
  | {kind: 'scenario'; scenario: Scenario; setup: {name: string; policy: SetupPolicy}}
  | {
      kind: 'runbook'
      runbook: Runbook
      scenario: Scenario
      setup: {name: string; policy: SetupPolicy}
      /** Once the runbook has ended, roll its run back as `sluice rollback` would: in steps, or at once (--now). */
      rollback?: 'ramped' | 'now'
      /** Scenario seconds each side runs on once its runbook has ended (default: a rehearsal's settle, and at least settleAfterRunbook after the real run). */
      settle?: number
    }

export type {Failures}
export type {RollbackFigures} from './rollback-figures.js'
import type {RollbackFigures} from './rollback-figures.js'

export interface DrillSide {
  timeline: Timeline
  card: ReportCard
  /** The real side only: failures over the run, and from the fix on. */
  failures?: {run: Failures; afterFix: Failures | null}
  /** A runbook's outcome on this side, and when each of its steps ran. */
  runbook?: {outcome: RunResult['outcome']; message: string; steps: StepTimes[]}
  /** The rollback after the runbook, when the drill was asked for one (--rollback). */
  rollback?: RollbackFigures
}

/** When a runbook's step began and ended, in scenario seconds on the side's own timeline; null where it never did. */
export interface StepTimes {
  index: number
  title: string
  startedAt: number | null
  endedAt: number | null
  /** The step's last gate verdict in words (a counts judge's sentence), or null where it took none. */
  lastVerdict: string | null
}

/** A run's step times on a timeline: `toScenario` turns the run's clock into scenario seconds. */
export function stepTimes(run: Pick<RunResult, 'steps'>, toScenario: (at: number) => number): StepTimes[] {
  const on = (at: number | null) => (at === null ? null : toScenario(at))
  return run.steps.map((s) => {
    const last = s.verdicts.at(-1)
    return {index: s.index, title: s.title, startedAt: on(s.startedAt), endedAt: on(s.endedAt), lastVerdict: last ? verdictText(last) : null}
  })
}

export interface PredictionSpread {
  seeds: number
  /** The share of the scenario's requests the arrivals were drawn at. */
  sampleScale: number
  cards: ReportCard[]
}

export interface DrillReport {
  target: {kind: DrillTarget['kind']; name: string}
  scenario: Scenario
  /** The scenario the prediction's pool, checks and clients came from, when not the drilled one (drill --model). */
  model?: string
  setup: string
  scales: DrillScales
  /** Scenario seconds of work each real server queued before it stopped reading requests. */
  queueSeconds: number
  /** The fault as the report card reads it: its window (scenario seconds) and servers broken. */
  fault: {from: number; to: number; servers: number} | null
  servers: number
  /** Scenario seconds the drill ran (the prediction's length). */
  seconds: number
  /**
   * The scenario seconds both sides are read over: from 0 to the earlier of their ends, so a real run
   * that went on longer (a slower runbook, the settle after it) is not read against a prediction
   * that stopped sooner. `realTo` and `predictedTo` are where each side's record ended.
   */
  compared: {to: number; realTo: number; predictedTo: number}
  /**
   * Both sides read over the runbook's span as rehearsed: from its start to the rehearsal's end and
   * the settle after it (what `run --dry-run` reports), within `compared`; null for a scenario alone.
   */
  runbookSpan: {from: number; to: number; real: ReportCard; predicted: ReportCard; spread: ReportCard[]} | null
  /** Seconds of each window full service is read over (drillWindowSeconds). */
  fullServiceWindow: number
  wallSeconds: number
  real: DrillSide
  predicted: DrillSide
  /**
   * The same prediction at a tenth of the scenario's tick (a check that the model's figures do
   * not hang on its time step), read a point a second as the real run is; null when the tick is
   * already the finest a scenario takes.
   */
  finerTick: {tick: number; card: ReportCard; timeline: Timeline} | null
  /**
   * The prediction over seeds, each drawing arrivals as the drill's load does (drawnAsDrilled):
   * what the model says may happen, for the verdict to read the real run against; null without.
   */
  spread: PredictionSpread | null
  /** What the generator itself reports about its run, so a run the machine shaped can be told (verdict.ts). */
  load: {
    eventLoopDelayP99Ms: number
    /** The fleet's own event loop (every server shares it), p99 ms late; null when it could not be read. */
    fleetLoopDelayP99Ms: number | null
    /** How long the run's processes (this one, the fleet, the load, HAProxy) waited for a CPU; null where not measured. */
    cpuWait: CpuWait | null
    /** Requests the generator could not send for want of this machine's sockets or files. */
    local: number
    /** Attempts it sent (requests and retries), real ones. */
    offered: number
    cpuSeconds: number
    /** The clients' timeout on the drill's clock, in ms: how late the generator may run is a share of it. */
    clientTimeoutWallMs: number
    /** The servers' service time in ms, the shortest of the pools': real, as the fleet serves. */
    serviceTimeMs: number
  }
  interrupted: boolean
}
