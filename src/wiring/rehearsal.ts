import {runRunbook, type RunResult} from '../engine/engine.js'
import {InputError} from '../errors.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import type {EngineIO, RecordedMutation} from '../ports/io.js'
import type {Runbook} from '../loader/runbook.js'
import {batchBeyondPool} from '../runbook/units.js'
import type {RunbookInput} from '../loader/runbook-schema.js'
import {backendOf} from '../runbook/targets.js'
import type {RunInputs} from '../ports/run.js'
import {simulatedControlPlane} from '../sim/adapters/control-plane.js'
import type {Fleet} from '../sim/fleet.js'
import {ScenarioRun} from '../sim/scenario-run.js'
import {scenarioAssessor} from './assessor.js'
import {resolveScenarioRef} from './scenario-ref.js'
import {loadScenario, pickSetups, withRandomness} from '../sim/scenario/load-scenario.js'
import {randomnessOf, type Scenario} from '../sim/scenario/schema.js'
import {defaultSeeds} from '../sim/seeds.js'
import {fullServiceWindowSeconds, type SimulationRecord} from '../sim/record.js'
import type {ChangeRecorder} from '../way-back/history.js'
import {rollBackAfterRun} from '../way-back/undo-run.js'
import type {OverSeedsRehearsed, Rehearsal, RehearsalSeed, WeightChange} from '../report/rehearsal.js'

/** Seconds of simulated history before a runbook starts, at the least. */
export const historySeconds = 60

/** Seconds the fleet keeps running after the runbook ends, so a relapse has time to show. */
export const settleSeconds = 180

/** What a rehearsal runs against, beyond what every run takes. */
export interface RehearsalSettings {
  /**
   * A scenario that overrides the runbook's rehearsal scenario: a name or file from --scenario, or
   * one already loaded (a single-action command loads it once to take its pools as targets).
   */
  scenario?: string | Scenario
  setup?: string
  /** Scenario second to start at, overriding the runbook's rehearsal.startAt. */
  startAt?: number
  /** Virtual seconds per wall second; null runs as fast as it can. */
  pace: number | null
  /**
   * Once the runbook has ended (not when interrupted), before the fleet settles, roll its run back
   * as `sluice rollback` would: in steps onto the receiving pool behind the gates, or at once.
   */
  rollback?: 'ramped' | 'now'
  /**
   * Requests a gate counts for each of the scenario's (default 1): a drill's prediction passes its
   * rate scale × time scale, the share of them its real fleet serves.
   */
  countScale?: number
  /** Overrides the scenario's randomness (--randomness). */
  randomness?: 'drawn' | 'none'
  /**
   * Rehearse on this many seeds, the scenario's own first (the one shown) and the ones after it,
   * the others with nobody watching and every approval answered yes: a verdict over seeds. Default:
   * defaultSeeds (ten where the scenario draws, one where it does not).
   */
  seeds?: number
}

/** A rehearsal's report: the engine's result and the rehearsal's record. */
export interface RehearsalReport {
  mode: 'rehearsal'
  run: RunResult
  runId: null
  rehearsal: Rehearsal
}

/** The run's I/O, noting each weight change that took effect on the way through, with the fleet as it found it; the rest as it was. */
function recordingWeights(io: EngineIO, into: WeightChange[], fleet: Fleet): EngineIO {
  const tap: Pick<EngineIO, 'notify'> = {
    notify(event) {
      if (event.type === 'mutation' && event.mutation.kind === 'weights' && event.mutation.phase === 'outcome' && event.mutation.ok) {
        const m = event.mutation
        into.push({
          at: event.at,
          weights: m.after as WeightMap,
          taken: {step: m.step, before: m.before as WeightMap, capacityRps: fleet.servingCapacities(), demandRps: fleet.splitDemand()},
        })
      }
      io.notify(event)
    },
  }
  return Object.assign(Object.create(io) as EngineIO, tap)
}

/** A rollback's journal, as a rehearsal keeps it: each weights change that took effect, for the chart. */
function weightsOf(control: ControlPlane, into: WeightChange[]): ChangeRecorder {
  return {
    async write(type, data) {
      const m = data.mutation as {kind?: string; phase?: string; ok?: boolean; after?: unknown} | undefined
      if (type === 'mutation' && m?.kind === 'weights' && m.phase === 'outcome' && m.ok) into.push({at: control.clock.now(), weights: m.after as WeightMap})
    },
  }
}

/** Notes each change that took effect, in order, as a journal would hold it; every event goes on to `io`. */
export function tapChanges(io: EngineIO, into: RecordedMutation[]): EngineIO {
  const tap: Pick<EngineIO, 'notify'> = {
    notify(event) {
      if (event.type === 'mutation' && event.mutation.phase === 'outcome' && event.mutation.ok) {
        const {ok: _ok, error: _error, ...change} = event.mutation
        into.push({...change, phase: 'intent', seq: into.length + 1, at: String(event.at), outcome: {ok: true}})
      }
      io.notify(event)
    },
  }
  return Object.assign(Object.create(io) as EngineIO, tap)
}

/**
 * Rehearses a runbook against a simulated fleet: the same engine and actions as live, on the
 * simulator's ports. Takes what a live run takes and returns what it returns (src/runner.ts).
 */
export async function rehearse(runbook: Runbook, inputs: RunInputs, settings: RehearsalSettings): Promise<RehearsalReport> {
  const {scenario, setup} = rehearsalScenario(runbook, settings)
  checkAgainstScenario(runbook, scenario, settings)

  const fleetRun = new ScenarioRun(scenario, setup.policy)
  const {fleet} = fleetRun
  // A live system has history when a runbook starts; give the simulated one at least a minute of
  // it, so the first gate or headroom check has data to judge.
  const startAt = Math.max(historySeconds, settings.startAt ?? (settings.scenario === undefined ? (runbook.rehearsal?.startAt ?? 0) : 0))
  fleet.runUntil(startAt)
  fleet.record.markFrom(startAt)
  const {targets} = runbook
  const control = {
    ...simulatedControlPlane(fleet, backendOf(targets), {
      pace: settings.pace,
      operator: inputs.operator,
      metrics: targets.metrics !== undefined,
      countScale: settings.countScale,
    }),
    assessor: scenarioAssessor(runbook),
  }
  const weights: WeightChange[] = []
  const recorded: RecordedMutation[] = []
  const io = tapChanges(recordingWeights(inputs.io, weights, fleet), recorded)
  const run = await runRunbook(runbook, {control, io, signal: inputs.signal, approved: inputs.approved})
  const how = settings.rollback
  const rollback =
    how && run.outcome !== 'interrupted'
      ? {how, ...(await rollBackAfterRun(runbook, control, recorded, inputs.io, inputs.signal, {now: how === 'now', record: weightsOf(control, weights)}))}
      : null
  const endAt = fleet.time
  const {record, summary, window} = run.outcome === 'interrupted' ? fleetRun.stop() : fleetRun.finish(endAt + settleSeconds)
  const rehearsal: Rehearsal = {
    run,
    scenario,
    setup: setup.name,
    startAt,
    endAt,
    window,
    record,
    summary,
    recovered: run.outcome !== 'interrupted' && summary.recoveredSecondsAfterFix !== null,
    restrictedAtEnd: fleet.typeNames.filter((type) => fleet.isRestricted(type)),
    weights,
    restrictedPercentAtEnd: restrictedShareAtEnd(record),
    rollback,
    overSeeds: null,
  }
  const seeds = settings.seeds ?? defaultSeeds(scenario)
  if (seeds > 1 && run.outcome !== 'interrupted') rehearsal.overSeeds = await overMoreSeeds(runbook, inputs, settings, scenario, setup.name, rehearsal, seeds)
  return {mode: 'rehearsal', run, runId: null, rehearsal}
}

/**
 * The share of demand turned away over the record's last fullServiceWindowSeconds: with arrivals drawn,
 * one tick's share is a sample of a few requests, not the restriction's share.
 */
function restrictedShareAtEnd(record: SimulationRecord): number {
  const per = Math.max(1, Math.round(fullServiceWindowSeconds / record.resolution))
  let asked = 0
  let away = 0
  for (let i = Math.max(0, record.ticks - per); i < record.ticks; i++) {
    asked += record.demand[i]
    away += record.restrictedDemand[i]
  }
  return asked > 0 ? (away / asked) * 100 : 0
}

/** The rehearsal again on the seeds after the scenario's, with nobody watching; stops early only if the first is stopped. */
async function overMoreSeeds(
  runbook: Runbook,
  inputs: RunInputs,
  settings: RehearsalSettings,
  scenario: Scenario,
  setup: string,
  first: Rehearsal,
  seeds: number,
): Promise<OverSeedsRehearsed> {
  const quiet: EngineIO = {confirm: async () => true, notify: () => {}}
  const approved = runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index)
  const outcomes = [seedOutcome(scenario.seed, first)]
  for (let seed = scenario.seed + 1; seed < scenario.seed + seeds && !inputs.signal.aborted; seed++) {
    const {rehearsal} = await rehearse(
      runbook,
      {...inputs, io: quiet, approved},
      {...settings, scenario: {...scenario, seed}, setup, seeds: 1, startAt: first.startAt, pace: null},
    )
    outcomes.push(seedOutcome(seed, rehearsal))
  }
  return {randomness: randomnessOf(scenario), seeds: outcomes}
}

function seedOutcome(seed: number, r: Rehearsal): RehearsalSeed {
  const at = r.run.stoppedAt
  return {
    seed,
    outcome: r.run.outcome,
    stoppedAt: at ? {step: at.step, title: at.title, message: at.message} : null,
    recovered: r.recovered,
    lostPercent: r.summary.lostPercent,
    rollback: r.rollback?.outcome ?? null,
  }
}

/** Checks a runbook against its own rehearsal scenario and setup, as a rehearsal does before it starts: exit 2 with every problem. */
export function checkRehearsalScenario(runbook: Runbook): void {
  const {scenario} = rehearsalScenario(runbook, {pace: null})
  checkAgainstScenario(runbook, scenario, {pace: null})
}

/**
 * Whether a runbook's own rehearsal scenario (and setup) can rehearse it, as `validate` asks
 * without running it: what keeps it from doing so, each line naming the scenario, or none. A
 * separate question from the runbook's validity: a live runbook stays runnable whatever its
 * scenario lacks, so these are warnings, never a refusal.
 */
export function rehearsalWarnings(runbook: Runbook): string[] {
  const ref = runbook.rehearsal?.scenario
  if (ref === undefined) return []
  let scenario: Scenario
  try {
    scenario = rehearsalScenario(runbook, {pace: null}).scenario
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    return error.problems.map((p) => `the rehearsal scenario ${ref} cannot rehearse it: ${p}`)
  }
  return scenarioProblems(runbook, scenario, {pace: null}).map((p) => namesScenario(p, scenario.name))
}

/** A problem that does not already name the scenario, said to be about it. */
const namesScenario = (problem: string, scenario: string): string =>
  problem.includes(scenario) ? problem : `${problem} (in the rehearsal scenario ${scenario})`

/** Loads a scenario named on the command line, for a single-action command to take its pools as targets. */
export function loadRehearsalScenario(ref: string): Scenario {
  return loadScenario(ref).scenario
}

/** Targets for a single-action rehearsal: every scenario pool is a weighted set and a target group of the same name. */
export function scenarioTargets(scenario: Scenario, on: 'aws' | 'haproxy' = 'aws'): RunbookInput['targets'] {
  const pools = scenario.pools
  // A share of a traffic type is turned away only where a live load balancer can do it: HAProxy.
  if (on === 'haproxy')
    return {
      haproxy: {
        socket: '/run/haproxy/simulated.sock',
        backends: Object.fromEntries(pools.filter((p) => p.kind === 'servers').map((p) => [p.name, p.name])),
        restrictMap: 'simulated-restricted.map',
      },
      metrics: {source: 'haproxy'},
    }
  return {
    dns: {
      zone: 'simulated',
      record: `${scenario.name}.simulated.`,
      ttl: scenario.dns.ttl,
      sets: Object.fromEntries(pools.map((p) => [p.name, p.name])),
    },
    targetGroups: Object.fromEntries(pools.filter((p) => p.kind === 'servers').map((p) => [p.name, `simulated:${p.name}`])),
    listener: 'simulated',
    metrics: {source: 'cloudwatch', loadBalancer: 'simulated'},
  }
}

/**
 * The scenario and setup a rehearsal runs against: the settings' (from flags), else the runbook's
 * own. A problem with the runbook's is reported at its file:line:column; one from a flag, at the flag.
 */
export function rehearsalScenario(
  runbook: Runbook,
  settings: RehearsalSettings,
): {scenario: Scenario; setup: {name: string; policy: Scenario['setups'][string]}} {
  const own = runbook.rehearsal
  let scenario: Scenario
  if (typeof settings.scenario === 'object') scenario = settings.scenario
  else if (settings.scenario !== undefined) scenario = loadScenario(settings.scenario).scenario
  else if (own)
    scenario = loadScenario(resolveScenarioRef(own.scenario, runbook.file), {}, `${runbook.locate(['rehearsal', 'scenario'])}: rehearsal.scenario`).scenario
  else throw new InputError(`${runbook.locate(['name'])}: the runbook has no rehearsal.scenario; give one there or pass --scenario`)
  scenario = withRandomness(scenario, settings.randomness)
  const [setup] =
    settings.setup !== undefined
      ? pickSetups(scenario, [settings.setup])
      : own?.setup !== undefined && settings.scenario === undefined
        ? pickSetups(scenario, [own.setup], `${runbook.locate(['rehearsal', 'setup'])}: rehearsal.setup`)
        : pickSetups(scenario, 'all').slice(0, 1)
  return {scenario, setup}
}

/**
 * Every pool and traffic type the runbook names must exist in the scenario it rehearses against,
 * every batch fit in its pool, and the rehearsal start inside the scenario: a rehearsal refuses
 * (exit 2) with every problem found.
 */
function checkAgainstScenario(runbook: Runbook, scenario: Scenario, settings: RehearsalSettings): void {
  const problems = scenarioProblems(runbook, scenario, settings)
  if (problems.length > 0) throw new InputError(problems)
}

/** What keeps a scenario from rehearsing a runbook, each at its file:line:column (or the flag), in the runbook's order. */
function scenarioProblems(runbook: Runbook, scenario: Scenario, settings: RehearsalSettings): string[] {
  const problems: string[] = []
  const pools = new Set(scenario.pools.map((p) => p.name))
  const types = new Set(Object.keys(scenario.demand.types))
  const fail = (path: ReadonlyArray<PropertyKey>, message: string): void => void problems.push(`${runbook.locate(path)}: ${message}`)
  const backend = backendOf(runbook.targets)
  for (const [set, pool] of Object.entries(backend.weightedSets ?? {}))
    if (!pools.has(pool)) fail(backend.setPath(set), `the rehearsal scenario ${scenario.name} has no pool "${pool}"; its pools are ${[...pools].join(', ')}`)
  for (const pool of backend.targetPools) {
    if (!pools.has(pool)) fail(backend.poolPath(pool), `the rehearsal scenario ${scenario.name} has no pool "${pool}"; its pools are ${[...pools].join(', ')}`)
    if (!backend.poolsMayBeSorry && scenario.pools.find((p) => p.name === pool)?.kind === 'sorry')
      fail(backend.poolPath(pool), `pool "${pool}" is a sorry pool in ${scenario.name}; it has no targets to cycle`)
  }
  for (const step of runbook.steps) {
    if ((step.action === 'restrict' || step.action === 'lift') && !types.has(step.type))
      fail(['steps', step.index, 'type'], `the rehearsal scenario ${scenario.name} has no traffic type "${step.type}"; its types are ${[...types].join(', ')}`)
    if (step.action === 'cycle' && scenario.pools.find((p) => p.name === step.pool)?.kind === 'sorry')
      fail(['steps', step.index, 'pool'], `pool "${step.pool}" is a sorry pool in ${scenario.name}; it has no targets to cycle`)
    const beyond =
      step.action === 'cycle' && step.batch !== 'auto'
        ? batchBeyondPool(step.batch, scenario.pools.find((p) => p.name === step.pool)?.servers ?? Number.POSITIVE_INFINITY)
        : undefined
    if (beyond) fail(['steps', step.index, 'batch'], `steps[${step.index}].batch: ${beyond} in the rehearsal scenario ${scenario.name}`)
  }
  const fromFlag = settings.startAt !== undefined
  const startAt = settings.startAt ?? (settings.scenario === undefined ? runbook.rehearsal?.startAt : undefined)
  if (startAt !== undefined && startAt >= scenario.duration) {
    const message = `expected a start before the end of the rehearsal scenario ${scenario.name} (${scenario.duration} s), got ${startAt} s`
    if (fromFlag) problems.push(`--start-at: ${message}`)
    else fail(['rehearsal', 'startAt'], `rehearsal.startAt: ${message}`)
  }
  return problems
}
