import type {RunResult} from '../engine/engine.js'
import {stepName, verdictText} from '../format.js'
import type {WeightMap} from '../ports/control-plane.js'
import type {EngineIO, GateVerdict} from '../ports/io.js'
import {rehearse} from '../wiring/rehearsal.js'
import type {Runbook} from '../loader/runbook.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {backendOf} from '../runbook/targets.js'
import {overreaches, overreachText, stepLoads, type StepLoad} from './overreach.js'
import {lastReturnIndex} from './ramps.js'

// One rehearsal of a candidate, in process, with nobody watching: the same `rehearse` that
// `sluice run --dry-run` calls, against a scenario tune varies (its seed, its demand).

/** What a rehearsal runs against: the runbook's own scenario and setup, with the seed and demand tune varies. */
export interface Variant {
  seed: number
  /** Demand as a share of the scenario's: 1.1 is demand 10% above it. */
  demandFactor: number
  /** Servers made slow in every pool that has no slow minority of its own; null: none. */
  slowMinority: SlowMinority | null
}

/** A share of a pool's servers at a factor of their capacity, as a scenario declares one. */
export type SlowMinority = NonNullable<Scenario['pools'][number]['slowMinority']>

/** Where every rehearsal of a tune starts: the scenario, setup and start the shipped runbook rehearsed with. */
export interface Ground {
  scenario: Scenario
  setup: string
  startAt: number
}

export interface Trial {
  variant: Variant
  outcome: RunResult['outcome']
  /** Whether the run completed with every verdict a pass. */
  passed: boolean
  /** Why it did not pass, in the engine's words (or the first verdict that did not pass). */
  reason: string | null
  /** The step it first missed at (a verdict that did not pass, or the step the run stopped at); null when it passed. */
  failedStep: number | null
  /** Seconds from the runbook's start to the change that brought the last traffic back (fullTrafficDefinition); null when the run never got there. */
  secondsToFullTraffic: number | null
  /** Seconds from the runbook's start to its end. */
  seconds: number
  verdicts: GateVerdict[]
  /** Each ramp step's weights before its first change: where a ramp starts from. */
  startWeights: Map<number, WeightMap>
  /** What each weight change asked of the pool it moved traffic onto, against what that pool served then. */
  loads: StepLoad[]
}

/**
 * Servers' capacities drawn from ±10% on every seed but the scenario's own, for a pool that
 * declares no spread, and requests arriving as a Poisson process where the scenario has them at
 * the mean: so each seed of tune's robustness set is a different fleet with its own arrivals (the
 * weakest server overloads first, a busy second comes when it comes, as in a real one), not the
 * same run again.
 */
export const tuneCapacitySpread = 0.1

/**
 * One server in ten at 80% of its capacity: an older instance type left in the group, a host with
 * a noisy neighbour. A round-robin balancer gives it a full share, so it overloads first; a ramp
 * that passes only when every server is as good as the average does not pass in a real fleet.
 * Rehearsed at the scenario's demand only: with demand up as well, a slow server that is over
 * its capacity at full traffic fails whatever the ramp, which is the pool's size to fix, not a ramp.
 */
export const tuneSlowMinority: SlowMinority = {share: 0.1, factor: 0.8}

/** A pool of servers large enough that a tenth is at least one server, with no slow minority of its own. */
function takesSlowMinority(pool: Scenario['pools'][number]): boolean {
  return pool.kind === 'servers' && pool.slowMinority === undefined && (pool.servers ?? 0) >= 10
}

/** Whether tune can rehearse a slow minority on this scenario: some pool of it takes one. */
export function allowsSlowMinority(scenario: Scenario): boolean {
  return scenario.pools.some(takesSlowMinority)
}

/**
 * The scenario with the variant's seed and its demand scaled, a constant rate and a curve alike;
 * on a seed other than the scenario's own, servers that all have one capacity get a spread and
 * requests arrive as a Poisson process; with the variant's slow minority, every pool that takes
 * one gets it.
 */
export function variantScenario(scenario: Scenario, variant: Variant): Scenario {
  const f = variant.demandFactor
  const own = variant.seed === scenario.seed
  const demand = {
    ...scenario.demand,
    ...(own ? {} : {arrivals: 'poisson' as const}),
    ...(scenario.demand.rps === undefined ? {} : {rps: scenario.demand.rps * f}),
    ...(scenario.demand.curve === undefined ? {} : {curve: scenario.demand.curve.map(([t, rps]): [number, number] => [t, rps * f])}),
  }
  const slow = variant.slowMinority
  const pools = scenario.pools.map((p) => {
    if (p.kind !== 'servers') return p
    const spread = !own && p.capacitySpread === 0 ? {capacitySpread: tuneCapacitySpread} : {}
    const minority = slow !== null && takesSlowMinority(p) ? {slowMinority: slow} : {}
    return {...p, ...spread, ...minority}
  })
  return {...scenario, seed: variant.seed, demand, pools}
}

/**
 * Whether a verdict puts a candidate out. A threshold gate's verdict that is not a pass is a window
 * failed or without data. A counts judge's inconclusive look is its bake going on (its first
 * three always are): only its fail is, or the step held at the end of the bake's looks, which the
 * run's outcome says. Counted as misses, they kept tune from passing any counts-gated ramp.
 */
const misses = (v: GateVerdict): boolean => v.outcome === 'fail' || (v.outcome === 'inconclusive' && v.counts === undefined)

/**
 * Rehearses a runbook once. With `stopEarly`, the first verdict that is not a pass ends the run
 * (as Ctrl-C would): the candidate is out, and the rest of the rehearsal would only cost time.
 */
export async function runTrial(runbook: Runbook, ground: Ground, variant: Variant, options: {stopEarly: boolean}): Promise<Trial> {
  const controller = new AbortController()
  const verdicts: GateVerdict[] = []
  const last = lastReturnIndex(runbook)
  let fullAt: number | null = null
  let firstMiss: GateVerdict | null = null
  const startWeights = new Map<number, WeightMap>()
  const io: EngineIO = {
    confirm: async () => true,
    notify(event) {
      if (event.type === 'verdict') {
        verdicts.push(event.verdict)
        if (misses(event.verdict) && firstMiss === null) {
          firstMiss = event.verdict
          if (options.stopEarly) controller.abort()
        }
      }
      if (event.type !== 'mutation') return
      const m = event.mutation
      // The last change of the step that brings the last traffic back: a ramp's final weight, or a lift's whole type let back.
      if (m.phase === 'outcome' && m.ok && m.step === last) fullAt = event.at
      if (m.kind === 'weights' && m.phase === 'intent' && !startWeights.has(m.step)) startWeights.set(m.step, m.before as WeightMap)
    },
  }
  const {run, rehearsal} = await rehearse(
    runbook,
    {io, signal: controller.signal, operator: 'sluice tune', approved: approveSteps(runbook)},
    {
      pace: null,
      scenario: variantScenario(ground.scenario, variant),
      setup: ground.setup,
      startAt: ground.startAt,
      // The robustness set is tune's own seeds, one rehearsal each.
      seeds: 1,
    },
  )
  const miss = firstMiss as GateVerdict | null
  const completed = run.outcome === 'completed'
  // A step that asked its pool for more than it served then fails the trial even where the gates
  // passed: a rehearsal at full scale can ride out such a step that a real pool does not (tune's
  // Outlook proposal, drilled, failed at its 30% step onto the just-restarted pool).
  const loads = stepLoads(rehearsal.weights, backendOf(runbook.targets).weightedSets ?? {}, rehearsal.scenario)
  const overreach = loads.find(overreaches) ?? null
  const failedAt = miss?.step ?? run.stoppedAt?.step ?? null
  const overreached = overreach !== null && (failedAt === null || overreach.step <= failedAt)
  const passed = completed && miss === null && overreach === null
  return {
    variant,
    outcome: run.outcome,
    passed,
    // Without the sample size, which differs with every seed and demand: trials that failed on the
    // same value fold into one line of the report.
    reason: passed ? null : overreached ? overreachText(overreach) : miss ? `${stepName(miss.step)}: ${verdictText({...miss, requests: null})}` : run.message,
    failedStep: passed ? null : overreached ? overreach.step : failedAt,
    // Ticks of a tenth of a second add up with float noise (1364.6000000000001 s): to the microsecond.
    secondsToFullTraffic: completed && fullAt !== null ? Math.round((fullAt - rehearsal.startAt) * 1e6) / 1e6 : null,
    seconds: rehearsal.endAt - rehearsal.startAt,
    verdicts,
    startWeights,
    loads,
  }
}

/**
 * Rehearses the runbook as `sluice run --dry-run` would, against its own scenario, setup and
 * start (or the --scenario and --setup given), to learn them: the scenario loaded from wherever
 * it is named, the setup picked, the start settled.
 */
export async function groundOf(runbook: Runbook, choice: {scenario?: string; setup?: string} = {}): Promise<{ground: Ground}> {
  const io: EngineIO = {notify() {}, confirm: async () => true}
  const {rehearsal} = await rehearse(
    runbook,
    {io, signal: new AbortController().signal, operator: 'sluice tune', approved: approveSteps(runbook)},
    {pace: null, seeds: 1, ...choice},
  )
  return {ground: {scenario: rehearsal.scenario, setup: rehearsal.setup, startAt: rehearsal.startAt}}
}

/** A rehearsal changes nothing, so its approve steps are answered, as `run --dry-run --yes` does. */
function approveSteps(runbook: Runbook): number[] {
  return runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index)
}
