import {FailedError} from '../errors.js'
import type {PoolFamily, PoolNow} from '../ports/pool-readings.js'
import {scenarioLimits, type Scenario, type SetupPolicy} from '../sim/scenario/schema.js'
import {defaultSeeds, overSeeds} from '../sim/seeds.js'
import {runCell, type CellResult, type SweepJob} from '../sweep/classify.js'
import {formatNumber} from '../sweep/params.js'
import type {SweepResult} from '../sweep/sweep.js'
import type {LineEdges} from '../sweep/tipping.js'
import type {CellRunner} from '../sweep/workers.js'
import {AssessBudgetError, BudgetExhausted, defaultBudget, meteredRunner, runCost, serverTicks, WorkMeter} from './budget.js'
import {axis, findLevers, sweepOn, type Lever} from './levers.js'
import {fromModel, isScaled, mapInPool, modelScenario, modelState, rpsFromModel, runBudget, scaleModel, toModel} from './scale.js'

/**
 * Where the pool is on its map: serving in full, coming back on its own once the trigger is fixed,
 * stuck, or at risk: with arrivals and service times drawn, it tips on some seeds and not on
 * others (a pool near its capacity with retrying clients; a single run would be a coin toss).
 */
export type Region = 'unharmed' | 'recovering' | 'at-risk' | 'stuck'

/** The question asked again on more seeds: on which it tipped, and when (seconds after the fix, or from now when nothing is out). */
export interface AssessSeeds {
  randomness: 'drawn' | 'none'
  from: 'the fix' | 'now'
  seeds: Array<{seed: number; tipped: boolean; tippedAfter: number | null}>
}

/** What fronts the pool: which levers it has (an ALB has routing failover but no ejection cap, and sheds whole types only). */
export type Family = PoolFamily

/**
 * The levers a pool has: HAProxy's checks say so in the scenario; otherwise an ALB when the pool
 * was read from one (AWS, or a Prometheus mapping that says alb; or a runbook targets AWS), or,
 * for a pool described by hand, when the scenario was calibrated from one (`frontedBy`); else
 * Envoy's guards, which the simulator's checks model. `fronted`: what the readings say fronts it.
 */
export function familyOf(scenario: Scenario, fronted: Family | undefined): Family {
  if (scenario.healthCheck.haproxy) return 'haproxy'
  return (fronted ?? scenario.frontedBy) === 'alb' ? 'alb' : 'envoy'
}

export type {Lever} from './levers.js'

export interface Assessment {
  state: PoolNow
  /** Servers out of rotation now. */
  outNow: number
  /**
   * Where the pool sits along servers broken: those the trigger broke (--broken), else the fewest
   * broken that take the pool down to what is in rotation now, else every server out.
   */
  out: number
  /** Whether `out` came from --broken. */
  brokenGiven: boolean
  /** The counts of broken servers that explain what is out now (or the one --broken gave), and which of them leave the pool stuck. */
  plausibleBroken: number[]
  stuckBroken: number[]
  region: Region
  /** With the trigger fixed now and nothing else done: seconds to full service, or null when it stays stuck. */
  backInSeconds: number | null
  /** The question on several seeds (default: ten where the scenario draws); null on one, or when the budget left it out. */
  overSeeds: AssessSeeds | null
  /** Along demand at this many servers out: the demand above which it is stuck (null: not within 0–2× now). */
  stuckAboveDemand: number | null
  /** Along servers out at this demand: the stretches of servers out with which it is stuck, [first, last]; empty: it comes back with any. */
  stuckOut: Array<[number, number]>
  levers: Lever[]
  /** The map (servers out × demand) with the pool on it; none with --quick. */
  map: SweepResult | null
  sentences: string[]
  /** The setup of the scenario the pool was placed with. */
  setup: string
  /** Seconds the model watched after the fix before calling it stuck. */
  watchedSeconds: number
  /** The verdict again with every server's capacity 10% lower and 10% higher: whether it rests on the calibration's figure. */
  sensitivity: Array<{capacityFactor: number; region: Region}>
  /** Requests a second the pool can serve by the scenario's figure per server: a server, those in rotation now, every server. */
  capacity: {perServer: number; inRotation: number; pool: number}
  /** The scale model the pool was asked on, or null when every server was simulated (src/assess/scale.ts). */
  model: {servers: number; modelled: number} | null
  /** The work, in servers × ticks simulated: what the assessment may spend, what it spent, and one run of the question. */
  work: {budget: number; spent: number; oneRun: number}
  /** What was left out to stay within the budget, in words: `the map`, `the lever adding servers`. */
  skipped: string[]
}

/**
 * Runbooks as levers: each rehearsed against the question from the fix on (the wiring rehearses,
 * which the domain does not reach), with whether the pool is back at the end and how soon.
 */
export type RunbookLevers = (question: {scenario: Scenario; setup: {name: string; policy: SetupPolicy}; fixAt: number}) => Promise<Lever[]>

/** How a calibrated scenario asks the question, and how long it watches after the fix. */
const warm = 30

/**
 * The calibrated scenario turned into the question "fixed now, does it come back?": the pool at
 * this size and this demand (constant), `broken` servers (default: every server out now) broken from a warm start
 * until the fix, then watched for as long as its checks need to bring every server back and some.
 */
export function questionScenario(base: Scenario, state: PoolNow, broken?: number): {scenario: Scenario; fixAt: number} {
  const check = base.healthCheck
  const perServer = check.haproxy ? check.interval * (check.haproxy.fall + check.haproxy.rise) : check.maxEjection + check.interval
  const hold = Math.max(60, 3 * check.interval * (check.haproxy?.fall ?? 1))
  const fixAt = warm + hold
  const horizon = Math.max(600, 2 * perServer)
  const pool = base.pools[0]
  const out = broken ?? Math.max(0, state.servers - state.healthy)
  const scenario: Scenario = {
    ...base,
    name: `${base.name}, now`,
    duration: fixAt + horizon,
    pools: base.pools.map((p, i) => (i === 0 ? {...p, servers: state.servers} : p)),
    demand: {...base.demand, rps: state.demand, curve: undefined},
    faults: [{kind: 'broken', pool: pool.name, servers: out, from: warm, to: fixAt, mode: 'hang'}],
    restrictions: [],
  }
  return {scenario, fixAt}
}

/** The stretches of a line that are stuck, from its edges: whole numbers, as servers out are counted. */
function stuckStretches(line: LineEdges, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = []
  let start: number | null = line.startsStuck ? from : null
  for (const t of line.transitions) {
    if (t.into) start = t.stuck
    else if (start !== null) {
      out.push([start, t.stuck])
      start = null
    }
  }
  if (start !== null) out.push([start, to])
  return out
}

/** The stuck side of a line's first edge, or null where the line has none. */
const firstStuck = (result: SweepResult): number | null => result.setups[0].tipping.transitions[0]?.stuck ?? null

/** A reading no pool can have: no verdict and no lever is drawn from it (exit 1, naming what was read). */
export class ImpossibleReading extends FailedError {}

/**
 * The readings must be of a pool before they are placed: a demand below zero, or not a number,
 * would be "stuck" with a lever of turning everything away, and counts that are not whole servers
 * cannot be simulated. The readings' own sources check them first, naming the query; this is the
 * last stop, for whatever reaches assess.
 */
function checkReading(state: PoolNow, source: string | undefined): void {
  const problems: string[] = []
  if (!Number.isFinite(state.demand) || state.demand < 0 || state.demand > scenarioLimits.maxRps)
    problems.push(`a demand of ${state.demand} rps (expected a rate from 0 to ${formatNumber(scenarioLimits.maxRps)}, the most the model sums)`)
  if (!Number.isInteger(state.servers) || state.servers < 1) problems.push(`${state.servers} servers (expected a whole number, 1 or more)`)
  else if (!Number.isInteger(state.healthy) || state.healthy < 0 || state.healthy > state.servers)
    problems.push(`${state.healthy} of ${state.servers} servers in rotation (expected a whole number from 0 to ${state.servers})`)
  if (!Number.isFinite(state.errorRate) || state.errorRate < 0 || state.errorRate > 1)
    problems.push(`an error rate of ${state.errorRate * 100}% (expected 0–100%)`)
  if (problems.length > 0)
    throw new ImpossibleReading(`${source ?? 'the pool'}: read ${problems.join(', ')}: an impossible reading, so no verdict and no lever`)
}

/** The pool's capacity by the scenario's figure per server: the servers in rotation now, and every server. */
export function capacityOf(base: Scenario, state: PoolNow): {perServer: number; inRotation: number; pool: number} {
  const perServer = base.pools[0].capacity ?? 0
  return {perServer, inRotation: perServer * state.healthy, pool: perServer * state.servers}
}

/**
 * Places a live pool on the map of its calibrated scenario and finds the smallest lever that gets
 * it out, each checked by simulation from the state now: the question is always "if the trigger
 * were fixed now". Nothing here reads or changes the pool; `state` is what was read.
 *
 * The work is bounded (budget.ts): a pool too big to run server by server is asked on a scale model
 * (scale.ts); where the pool is and whether it comes back must fit the budget or it is an error
 * (exit 1) saying so; the tipping point along demand, each lever, the runbooks and the map are done
 * in that order while they fit, and what did not is named in the sentences and `skipped`.
 */
export async function assess(
  base: Scenario,
  setup: {name: string; policy: SetupPolicy},
  state: PoolNow,
  options: {
    family: Family
    quick: boolean
    runner: CellRunner
    broken?: number
    runbooks?: RunbookLevers
    budget?: number
    source?: string
    /** Seeds the question is asked on (default: defaultSeeds of the scenario). */
    seeds?: number
  },
): Promise<Assessment> {
  checkReading(state, options.source)
  const meter = new WorkMeter(options.budget ?? (options.quick ? defaultBudget.quick : defaultBudget.map))
  const runner = meteredRunner(options.runner, meter)
  const whole = questionScenario(base, state).scenario
  const model = scaleModel(state.servers, runCost(whole) / state.servers)
  // Everything from here to the sentences is the model's: its servers, its counts, its demand.
  const mBase = modelScenario(model, base)
  const now = modelState(model, state)
  const brokenGiven = options.broken === undefined ? undefined : toModel(model, options.broken)
  const outNow = Math.max(0, now.servers - now.healthy)
  const servers = now.servers
  const skipped: string[] = []

  // The part that cannot be left out: along servers broken, the pool itself and the ±10% runs. Said before any of it runs when its grid alone is past the budget.
  const oneRun = runCost(questionScenario(mBase, now).scenario)
  const gridRuns = Math.min(servers + 1, 41)
  const cannot = (spent: boolean): AssessBudgetError =>
    new AssessBudgetError(
      `cannot assess within the budget of ${serverTicks(meter.limit)}${options.budget === undefined ? ` (${options.quick ? 'with --quick' : 'with the map'}; --budget N allows more)` : ''}: one run of the question is ${serverTicks(oneRun)} (${formatNumber(servers)} ${isScaled(model) ? 'model ' : ''}servers × ${formatNumber(oneRun / servers)} ticks of ${formatNumber(whole.tick)} s), and placing the pool takes ${spent ? `more than the ${formatNumber(Math.round(meter.spent / oneRun))} runs that fitted` : `at least ${gridRuns + 3} runs`}`,
    )
  if ((gridRuns + 3) * oneRun > meter.limit) throw cannot(false)

  const verdict = await placed().catch((error: unknown) => {
    throw error instanceof BudgetExhausted ? cannot(true) : error
  })
  async function placed() {
    // Along servers broken at this demand: which faults cascade how far, and where the pool is stuck.
    const alongOut = await sweepOn(questionScenario(mBase, now).scenario, [setup], [axis('broken', 0, servers, gridRuns)], runner)
    const stuckOut = stuckStretches(alongOut.setups[0].tipping, 0, servers)
    // How many did the trigger break? Not every server out: in a cascade most went out because the
    // load moved onto them, and taking them all as broken would bring the pool back all at once. Any
    // count from the fewest that take the pool down to what is in rotation now, up to every server out,
    // explains what is seen; the metrics cannot tell them apart, so the pool is placed at the worst of
    // them (the fewest that leave it stuck), and the sentences say when the count decides it.
    const values = alongOut.axes[0].values
    const cells = alongOut.setups[0].cells
    const fewest = values.find((b, i) => b <= outNow && cells[i].minInRotation <= now.healthy) ?? outNow
    const plausible =
      brokenGiven !== undefined
        ? [brokenGiven]
        : outNow === 0
          ? [0]
          : values.filter((b) => b >= fewest && b <= outNow).concat(values.includes(outNow) ? [] : [outNow])
    const stuckAt = (b: number): boolean => {
      const i = values.indexOf(b)
      if (i >= 0) return cells[i].outcome === 'stuck'
      const q = questionScenario(mBase, now, b).scenario
      return meter.run(q, () => runCell({scenario: q, setups: [setup], params: []}, {setup: 0, x: NaN, y: NaN})).outcome === 'stuck'
    }
    const stuckBroken = plausible.filter(stuckAt)
    const out = stuckBroken[0] ?? plausible[0]
    const {scenario, fixAt} = questionScenario(mBase, now, out)
    const job = (s: Scenario, policies = [setup]): SweepJob => ({scenario: s, setups: policies, params: []})
    const run = (s: Scenario): CellResult => meter.run(s, () => runCell(job(s), {setup: 0, x: NaN, y: NaN}))
    const healthy = out === 0 && state.errorRate < 0.01
    const regionOf = (r: CellResult): Region => (r.outcome === 'stuck' ? 'stuck' : healthy ? 'unharmed' : 'recovering')
    const here = run(scenario)
    const sensitivity = [0.9, 1.1].map((capacityFactor) => {
      const pools = scenario.pools.map((p, i) => (i === 0 && p.capacity !== undefined ? {...p, capacity: p.capacity * capacityFactor} : p))
      return {capacityFactor, region: regionOf(run({...scenario, pools}))}
    })
    return {stuckOut, plausible, stuckBroken, out, scenario, fixAt, here, region: regionOf(here), sensitivity}
  }
  const {scenario, fixAt, here} = verdict
  const backInSeconds = here.outcome === 'stuck' ? null : (here.recoveredSecondsAfterFix ?? 0)

  // Past the verdict, each part is done while the budget has room for it, in the order an operator needs them.
  const ifRoom = async <T>(what: string, work: () => Promise<T>): Promise<T | null> => {
    try {
      return await work()
    } catch (error) {
      if (!(error instanceof BudgetExhausted)) throw error
      skipped.push(what)
      return null
    }
  }
  // The question on more seeds: a pool near its edge holds on some and tips on others, and which it
  // is on one seed is chance. Tipped on every seed is stuck; on some, at risk.
  const seedCount = options.seeds ?? defaultSeeds(scenario)
  const seeds =
    seedCount > 1
      ? await ifRoom('the verdict over seeds', async () => {
          meter.charge(runCost(scenario) * seedCount)
          const from = verdict.out === 0 ? 0 : fixAt
          const over = overSeeds(scenario, [setup], seedCount)
          return {
            randomness: over.randomness,
            from: verdict.out === 0 ? 'now' : 'the fix',
            seeds: over.setups[0].outcomes.map((o) => ({
              seed: o.seed,
              tipped: o.tipped,
              tippedAfter: o.tippedAt === null ? null : Math.max(0, o.tippedAt - from),
            })),
          } satisfies AssessSeeds
        })
      : null
  const tipped = seeds?.seeds.filter((s) => s.tipped).length ?? 0
  // A pool serving in full with nothing out and within its capacity is not stuck whatever the seeds
  // say: it is at risk of tipping, on every seed or on some. (Past its capacity it is an overload.)
  const servingNow = verdict.out === 0 && state.errorRate < 0.01 && state.demand <= capacityOf(base, state).inRotation
  const region: Region =
    !seeds || (tipped === 0 && verdict.region !== 'stuck') ? verdict.region : tipped === seeds.seeds.length && !servingNow ? 'stuck' : 'at-risk'
  // How far from the edge along demand at this many out. Odd counts from 0 to twice today's demand put today's on a grid row, where the map marks the pool.
  const demandTop = Math.max(now.demand * 2, 1)
  const alongDemand = await ifRoom(skippedDemand, () => sweepOn(scenario, [setup], [axis('demand', 0, demandTop, options.quick ? 11 : 21)], runner))
  const capacity = capacityOf(base, state)
  // Back in the pool's numbers: a count the model has for the servers out now (or --broken) is the pool's own.
  const count = (b: number): number => (b === outNow ? state.servers - state.healthy : b === brokenGiven ? options.broken! : fromModel(model, b))
  const out = count(verdict.out)
  const levers = [
    // Levers are for a pool that is stuck: each is checked on one run, and at risk one run holds by chance.
    ...(region === 'stuck'
      ? await findLevers(
          {scenario, setup, fixAt, family: options.family, quick: options.quick, runner, meter, model, demand: state.demand, fullCapacity: capacity.pool},
          skipped,
        )
      : []),
    // A runbook the operator names is rehearsed whenever the pool is harmed: it may get it back sooner than waiting.
    // Rehearsed on the pool at its own size (a runbook counts servers), each charged as one run of it.
    ...((region !== 'unharmed' && options.runbooks
      ? await ifRoom('the runbooks', async () => {
          const full = isScaled(model) ? questionScenario(base, state, out).scenario : scenario
          // A rehearsal is counted as one run of the question: there must be room for one before they start, and the rest are counted after.
          meter.charge(runCost(full))
          const rehearsed = await options.runbooks!({scenario: full, setup, fixAt})
          meter.spend(runCost(full) * Math.max(0, rehearsed.length - 1))
          return rehearsed
        })
      : null) ?? []),
  ].sort(surestFirst)
  const map = options.quick
    ? null
    : await ifRoom('the map', () => sweepOn(scenario, [setup], [axis('broken', 0, servers, gridRuns), axis('demand', 0, demandTop, 17)], runner))

  const unique = (xs: number[]): number[] => [...new Set(xs)]
  const stuckAbove = alongDemand ? firstStuck(alongDemand) : null
  const assessment: Assessment = {
    state,
    outNow: Math.max(0, state.servers - state.healthy),
    out,
    brokenGiven: options.broken !== undefined,
    plausibleBroken: unique(verdict.plausible.map(count)),
    stuckBroken: unique(verdict.stuckBroken.map(count)),
    region,
    backInSeconds,
    overSeeds: seeds,
    stuckAboveDemand: stuckAbove === null ? null : rpsFromModel(model, stuckAbove),
    stuckOut: verdict.stuckOut.map(([first, last]) => [fromModel(model, first), fromModel(model, last)]),
    capacity,
    levers,
    map: map && mapInPool(model, map, questionScenario(base, state, out).scenario),
    sentences: [],
    setup: setup.name,
    watchedSeconds: scenario.duration - fixAt,
    sensitivity: verdict.sensitivity,
    model: isScaled(model) ? {servers: model.servers, modelled: model.modelled} : null,
    work: {budget: meter.limit, spent: meter.spent, oneRun},
    skipped,
  }
  return {...assessment, sentences: sentencesOf(assessment, base)}
}

/** The surest first: those that hold, soonest back. */
const surestFirst = (a: Lever, b: Lever): number => Number(b.holds) - Number(a.holds) || (a.backInSeconds ?? Infinity) - (b.backInSeconds ?? Infinity)

const percent = (v: number): string => `${formatNumber(Math.round(v * 1000) / 10)}%`

/** What an operator pastes into the channel: where the pool is, whether it comes back, how far from the edge, and the way out. */
function sentencesOf(a: Assessment, base: Scenario): string[] {
  const s = a.state
  const rps = formatNumber(Math.round(s.demand))
  const why =
    a.out === a.outNow
      ? ''
      : a.brokenGiven
        ? ` (the trigger broke ${formatNumber(a.out)})`
        : ` (a trigger that broke ${formatNumber(a.out)} takes the pool there; the rest went out in the cascade)`
  const span = (bs: number[]): string => (bs.length === 1 ? formatNumber(bs[0]) : `${formatNumber(bs[0])}–${formatNumber(bs.at(-1)!)}`)
  const holding = a.plausibleBroken.filter((b) => !a.stuckBroken.includes(b))
  const decides =
    a.stuckBroken.length > 0 && holding.length > 0
      ? `How many the trigger broke decides it: stuck if it broke ${span(a.stuckBroken)}, back on its own if ${span(holding)}; placed at ${formatNumber(a.out)}, the worst (--broken N if you know).`
      : null
  const where = `${formatNumber(a.outNow)} of ${formatNumber(s.servers)} servers out of rotation at ${rps} rps${why}`
  const lines: string[] = []
  if (a.region === 'stuck')
    lines.push(
      `STUCK: with ${where}, fixing the trigger now would not bring it back on its own: the model of ${base.name} is still short of full service ${formatNumber(a.watchedSeconds)} s after the fix.`,
    )
  else if (a.region === 'at-risk') {
    const o = a.overSeeds!
    const tipped = o.seeds.filter((x) => x.tipped)
    const after = (t: number): string => `${formatNumber(Math.round(t))} s ${o.from === 'now' ? 'from now' : 'after the fix'}`
    const when = tipped
      .slice(0, 5)
      .map((x) => `seed ${x.seed} ${after(x.tippedAfter ?? 0)}`)
      .join(', ')
    lines.push(
      `AT RISK: with ${where}, ${o.from === 'now' ? 'left as it is' : 'fixed now'} it tips on ${tipped.length} of ${o.seeds.length} seeds (arrivals and service times drawn): ${when}${tipped.length > 5 ? `, and ${tipped.length - 5} more` : ''}${tipped.length < o.seeds.length ? `; on the other ${o.seeds.length - tipped.length} it is at full service ${after(a.watchedSeconds)}` : ''}.`,
    )
  } else if (a.region === 'recovering')
    lines.push(`RECOVERING: with ${where}, fixed now it comes back on its own, at full service ${formatNumber(a.backInSeconds ?? 0)} s after the fix.`)
  else lines.push(`UNHARMED: every server in rotation at ${rps} rps, ${percent(s.errorRate)} errors.`)
  if (a.overSeeds && a.region !== 'at-risk') {
    const n = a.overSeeds.seeds.length
    const drawn = a.overSeeds.randomness === 'drawn' ? 'arrivals and service times drawn' : 'nothing drawn'
    lines.push(
      a.region === 'stuck'
        ? `Stuck on all ${n} seeds, ${drawn}.`
        : `At full service on all ${n} seeds, ${drawn}, ${formatNumber(a.watchedSeconds)} s ${a.overSeeds.from === 'now' ? 'from now' : 'after the fix'}.`,
    )
  }
  if (decides) lines.push(decides)
  const load = loadSentence(a)
  if (load) lines.push(load)
  if (a.skipped.includes(skippedDemand)) lines.push(`Tipping point along demand: not looked for, to stay within the budget.`)
  else if (a.stuckAboveDemand !== null) {
    const edge = a.stuckAboveDemand
    lines.push(
      edge <= s.demand
        ? `Tipping point: with ${formatNumber(a.out)} broken it comes back on its own only below ${formatNumber(Math.round(edge))} rps, ${percent((s.demand - edge) / s.demand)} less demand than now.`
        : `Tipping point: with ${formatNumber(a.out)} broken it holds up to ${formatNumber(Math.round(edge))} rps, ${percent((edge - s.demand) / s.demand)} more demand than now.`,
    )
  } else lines.push(`Tipping point: none between 0 and twice today's demand with ${formatNumber(a.out)} broken.`)
  const stretch = ([first, last]: [number, number]): string => (first === last ? formatNumber(first) : `${formatNumber(first)}–${formatNumber(last)}`)
  if (a.stuckOut.length === 0) lines.push(`At ${rps} rps it comes back whatever number of the ${formatNumber(s.servers)} servers break.`)
  else {
    const next = a.stuckOut.find(([first]) => first > a.out)
    const inside = a.stuckOut.some(([first, last]) => a.out >= first && a.out <= last)
    lines.push(
      `At ${rps} rps it is stuck with ${a.stuckOut.map(stretch).join(' or ')} of ${formatNumber(s.servers)} servers broken (now ${formatNumber(a.out)})${
        inside || !next ? '' : `: ${formatNumber(next[0] - a.out)} more broken and it tips`
      }.`,
    )
  }
  const flips = a.sensitivity.filter((v) => v.region !== a.region)
  lines.push(
    flips.length === 0
      ? `The verdict holds with every server 10% weaker or 10% stronger than calibrated.`
      : `The verdict rests on the calibration: with every server ${flips.map((v) => (v.capacityFactor < 1 ? '10% weaker' : '10% stronger')).join(' or ')} it is ${flips.map((v) => v.region.toUpperCase()).join(' / ')}.`,
  )
  if (a.region === 'at-risk')
    lines.push(
      'At risk is chance near the edge, not a trigger to fix: less demand, more servers or fewer retries move it away; no lever is checked, since one run of it would hold or tip by chance as well.',
    )
  else if (a.region === 'stuck') {
    const holding = a.levers.filter((l) => l.holds)
    lines.push(
      holding.length === 0
        ? 'No single lever sluice tried gets it out; see the ones tried below.'
        : `The smallest lever that gets it out: ${holding[0].what}, back at full service ${formatNumber(holding[0].backInSeconds ?? 0)} s after.`,
    )
  } else
    for (const l of a.levers.filter((l) => l.kind === 'runbook'))
      lines.push(
        `Or ${l.what}: ${l.holds ? `back at full service ${formatNumber(l.backInSeconds ?? 0)} s after the fix` : 'the pool is not back at full service when it has ended'}.`,
      )
  if (a.model) {
    const each = a.model.servers / a.model.modelled
    lines.push(
      `Asked of a scale model: ${formatNumber(a.model.modelled)} servers standing for the ${formatNumber(a.model.servers)}, ${formatNumber(Math.round(each * 10) / 10)} each, with demand scaled alike (one run of every server would be ${serverTicks((a.work.oneRun * a.model.servers) / a.model.modelled)}, past the ${serverTicks(runBudget)} a run may take); counts of servers are good to about ${formatNumber(Math.ceil(each))}.`,
    )
  }
  if (a.skipped.length > 0) lines.push(`Left out to stay within the budget of ${serverTicks(a.work.budget)} (--budget N allows more): ${a.skipped.join('; ')}.`)
  return lines
}

const skippedDemand = 'the tipping point along demand'

/** 42% or 7.1%: as many figures as a reader needs to tell two loads apart. */
const roughly = (v: number): string => (v >= 0.1 ? `${formatNumber(Math.round(v * 100))}%` : percent(v))

/**
 * Demand against what the servers in rotation can serve, by the scenario's figure per server; and
 * when it is past what every server could serve, that no fix of the trigger is enough: the pool is
 * too small for its demand, not stuck in a cascade, and needs less demand or more servers.
 */
function loadSentence(a: Assessment): string | null {
  const {perServer, inRotation, pool} = a.capacity
  if (!(perServer > 0)) return null
  const s = a.state
  const rps = formatNumber(Math.round(s.demand))
  const can = (v: number): string => formatNumber(Math.round(v))
  const all = `all ${formatNumber(s.servers)} can serve ${can(pool)} rps`
  const tooSmall = s.demand > pool
  if (s.healthy === 0)
    return `Demand ${rps} rps and no server in rotation to serve it; ${all}${tooSmall ? ', less than the demand: it needs less demand or more servers' : ''}.`
  const them = `the ${formatNumber(s.healthy)} server${s.healthy === 1 ? '' : 's'} in rotation`
  const head =
    s.demand > inRotation
      ? `Demand ${rps} rps is ${roughly(s.demand / inRotation - 1)} over the ${can(inRotation)} rps ${them} can serve`
      : `Demand ${rps} rps is ${roughly(s.demand / inRotation)} of the ${can(inRotation)} rps ${them} can serve`
  if (!tooSmall) return `${head}${s.healthy < s.servers ? `; ${all}` : ''}.`
  return s.healthy === s.servers
    ? `${head}, and every server is in rotation: an overload, not a cascade; no fix of a trigger gets it out, less demand or more servers do.`
    : `${head}, and more than ${all}: no fix of the trigger gets it out alone; it needs less demand or more servers.`
}
