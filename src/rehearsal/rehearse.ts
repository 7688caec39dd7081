import {dirname, isAbsolute, join} from 'node:path'
import {existsSync} from 'node:fs'
import {runRunbook, type RunResult} from '../engine/engine.js'
import type {EngineIO} from '../ports/io.js'
import {InputError} from '../errors.js'
import type {Runbook} from '../runbook/load.js'
import {fleetConfig, loadScenario, pickSetups} from '../sim/scenario/load.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {simulatedControlPlane} from '../sim/adapters/control-plane.js'
import {Fleet} from '../sim/fleet.js'
import type {SimulationRecord} from '../sim/record.js'
import {faultWindow, summarize, type FaultWindow, type RunSummary} from '../sim/summary.js'

/** Seconds of simulated history before a runbook starts, at the least. */
export const historySeconds = 60

/** Seconds the fleet keeps running after the runbook ends, so a relapse has time to show. */
export const settleSeconds = 180

export interface RehearsalOptions {
  /** Overrides the runbook's rehearsal scenario. */
  scenario?: string
  setup?: string
  /** Virtual seconds per wall second; null runs as fast as it can. */
  pace?: number | null
  operator: string
  io: EngineIO
  signal: AbortSignal
}

export interface Rehearsal {
  run: RunResult
  scenario: Scenario
  setup: string
  startAt: number
  /** Scenario seconds at which the runbook finished. */
  endAt: number
  window: FaultWindow | null
  record: SimulationRecord
  summary: RunSummary
  /** Full service at the end of the rehearsal, held to the end. */
  recovered: boolean
  restrictedAtEnd: string[]
  /** Share of demand turned away by restrictions in the last tick. */
  restrictedPercentAtEnd: number
}

/** Rehearses a runbook against a simulated fleet: the same engine and actions as live, on the simulator's ports. */
export async function rehearse(runbook: Runbook, options: RehearsalOptions): Promise<Rehearsal> {
  const scenarioRef = options.scenario ?? runbook.rehearsal?.scenario
  if (!scenarioRef) throw new InputError(`${runbook.locate(['name'])}: the runbook has no rehearsal.scenario; give one there or pass --scenario`)
  const {scenario} = loadScenario(resolveScenarioRef(scenarioRef, runbook.file, options.scenario !== undefined))
  const [setup] = pickSetups(scenario, [options.setup ?? runbook.rehearsal?.setup ?? Object.keys(scenario.setups)[0]])
  checkAgainstScenario(runbook, scenario)

  const fleet = new Fleet(fleetConfig(scenario, setup.policy))
  // A live system has history when a runbook starts; give the simulated one at least a minute of
  // it, so the first gate or headroom check has data to judge.
  const startAt = Math.max(historySeconds, options.scenario === undefined ? runbook.rehearsal?.startAt ?? 0 : 0)
  fleet.runUntil(startAt)
  const control = simulatedControlPlane(
    fleet,
    {
      sets: runbook.targets.dns?.sets,
      record: runbook.targets.dns?.record,
      targetGroups: Object.keys(runbook.targets.targetGroups ?? {}),
      listener: runbook.targets.listener !== undefined,
      metrics: runbook.targets.metrics !== undefined,
    },
    {pace: options.pace ?? null, operator: options.operator},
  )
  const run = await runRunbook(runbook, {control, io: options.io, signal: options.signal})
  const endAt = fleet.time
  if (run.outcome !== 'interrupted') {
    fleet.extendTo(Math.max(scenario.duration, endAt + settleSeconds))
    fleet.run()
  } else {
    // An interrupted rehearsal reports what happened up to where it stopped.
    fleet.record.ticks = fleet.tick
  }
  const window = faultWindow(scenario.faults)
  const summary = summarize(fleet.record, window)
  const last = fleet.record.ticks - 1
  return {
    run, scenario, setup: setup.name, startAt, endAt, window, record: fleet.record, summary,
    recovered: run.outcome !== 'interrupted' && summary.recoveredSecondsAfterFix !== null,
    restrictedAtEnd: fleet.typeNames.filter((type) => fleet.isRestricted(type)),
    restrictedPercentAtEnd: last >= 0 && fleet.record.demand[last] > 0 ? (fleet.record.restrictedDemand[last] / fleet.record.demand[last]) * 100 : 0,
  }
}

/** Checks a runbook against its own rehearsal scenario and setup, as `validate` does without running it. */
export function checkRehearsalScenario(runbook: Runbook): void {
  const rehearsal = runbook.rehearsal!
  const {scenario} = loadScenario(resolveScenarioRef(rehearsal.scenario, runbook.file, false))
  if (rehearsal.setup) pickSetups(scenario, [rehearsal.setup])
  checkAgainstScenario(runbook, scenario)
}

/** A scenario named in a runbook is a built-in name or a file relative to the runbook; one from --scenario is relative to where sluice runs. */
function resolveScenarioRef(ref: string, runbookFile: string, fromFlag: boolean): string {
  const looksLikeFile = ref.includes('/') || ref.endsWith('.yaml') || ref.endsWith('.yml')
  if (fromFlag || !looksLikeFile || isAbsolute(ref)) return ref
  const beside = join(dirname(runbookFile), ref)
  return existsSync(beside) ? beside : ref
}

/** Every pool and traffic type the runbook names must exist in the scenario it rehearses against. */
function checkAgainstScenario(runbook: Runbook, scenario: Scenario): void {
  const pools = new Set(scenario.pools.map((p) => p.name))
  const types = new Set(Object.keys(scenario.demand.types))
  const fail = (path: Array<string | number>, message: string): never => {
    throw new InputError(`${runbook.locate(path)}: ${message}`)
  }
  for (const [set, pool] of Object.entries(runbook.targets.dns?.sets ?? {}))
    if (!pools.has(pool)) fail(['targets', 'dns', 'sets', set], `the rehearsal scenario ${scenario.name} has no pool "${pool}"; its pools are ${[...pools].join(', ')}`)
  for (const pool of Object.keys(runbook.targets.targetGroups ?? {})) {
    if (!pools.has(pool)) fail(['targets', 'targetGroups', pool], `the rehearsal scenario ${scenario.name} has no pool "${pool}"; its pools are ${[...pools].join(', ')}`)
    if (scenario.pools.find((p) => p.name === pool)?.kind === 'sorry') fail(['targets', 'targetGroups', pool], `pool "${pool}" is a sorry pool in ${scenario.name}; it has no targets to cycle`)
  }
  for (const step of runbook.steps) {
    if ((step.action === 'restrict' || step.action === 'lift') && !types.has(step.type))
      fail(['steps', step.index, 'type'], `the rehearsal scenario ${scenario.name} has no traffic type "${step.type}"; its types are ${[...types].join(', ')}`)
  }
}
