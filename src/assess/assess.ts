import type {PoolFamily, PoolNow} from '../ports/pool-readings.js'
import type {Scenario, SetupPolicy} from '../sim/scenario/schema.js'
import {runCell, type CellResult, type SweepJob} from '../sweep/classify.js'
import {axisValues, type Axis} from '../sweep/grid.js'
import {formatNumber, sweepParam} from '../sweep/params.js'
import {runSweep, type SweepResult} from '../sweep/sweep.js'
import type {LineEdges} from '../sweep/tipping.js'
import type {CellRunner} from '../sweep/workers.js'

/** Where the pool is on its map: serving in full, coming back on its own once the trigger is fixed, or stuck. */
export type Region = 'unharmed' | 'recovering' | 'stuck'

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

/** One way out, checked by simulation from the pool's state now. */
export interface Lever {
  kind: 'shed' | 'panic' | 'cap' | 'retries' | 'slow-start' | 'runbook'
  /** What to do, in words, with the smallest amount that gets the pool out. */
  what: string
  /** The value found (percent shed, threshold, cap, seconds), or null where the lever is on or off. */
  value: number | null
  /** Whether, at that value, the pool comes back: the lever checked, not hoped for. */
  holds: boolean
  /** Seconds from now (the fix) to full service with the lever, when it holds. */
  backInSeconds: number | null
  /** The command that pulls it, where sluice has one. */
  command?: string
}

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

function axis(name: string, from: number, to: number, steps: number): Axis {
  const param = sweepParam(name)!
  return {param, from, to, values: axisValues(from, to, steps, param.integer), spec: `${name}=${from}..${to}:${steps}`}
}

/** A strip or map of the question, on the one runner every sweep of an assessment shares. */
function sweepOn(scenario: Scenario, setups: Array<{name: string; policy: SetupPolicy}>, axes: Axis[], runner: CellRunner): Promise<SweepResult> {
  runner.retarget({scenario, setups, params: axes.map((a) => a.param.name)})
  return runSweep(scenario, setups, axes, runner)
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
const firstHolds = (result: SweepResult): number | null => result.setups[0].tipping.transitions[0]?.holds ?? null

/**
 * Places a live pool on the map of its calibrated scenario and finds the smallest lever that gets
 * it out, each checked by simulation from the state now: the question is always "if the trigger
 * were fixed now". Nothing here reads or changes the pool; `state` is what was read.
 */
export async function assess(
  base: Scenario,
  setup: {name: string; policy: SetupPolicy},
  state: PoolNow,
  options: {family: Family; quick: boolean; runner: CellRunner; broken?: number; runbooks?: RunbookLevers},
): Promise<Assessment> {
  const outNow = Math.max(0, state.servers - state.healthy)
  const servers = state.servers
  // Along servers broken at this demand: which faults cascade how far, and where the pool is stuck.
  const alongOut = await sweepOn(questionScenario(base, state).scenario, [setup], [axis('broken', 0, servers, Math.min(servers + 1, 41))], options.runner)
  const stuckOut = stuckStretches(alongOut.setups[0].tipping, 0, servers)
  // How many did the trigger break? Not every server out: in a cascade most went out because the
  // load moved onto them, and taking them all as broken would bring the pool back all at once. Any
  // count from the fewest that take the pool down to what is in rotation now, up to every server out,
  // explains what is seen; the metrics cannot tell them apart, so the pool is placed at the worst of
  // them (the fewest that leave it stuck), and the sentences say when the count decides it.
  const values = alongOut.axes[0].values
  const cells = alongOut.setups[0].cells
  const fewest = values.find((b, i) => b <= outNow && cells[i].minInRotation <= state.healthy) ?? outNow
  const plausible =
    options.broken !== undefined
      ? [options.broken]
      : outNow === 0
        ? [0]
        : values.filter((b) => b >= fewest && b <= outNow).concat(values.includes(outNow) ? [] : [outNow])
  const stuckAt = (b: number): boolean => {
    const i = values.indexOf(b)
    return (
      (i >= 0 ? cells[i] : runCell({scenario: questionScenario(base, state, b).scenario, setups: [setup], params: []}, {setup: 0, x: NaN, y: NaN})).outcome ===
      'stuck'
    )
  }
  const stuckBroken = plausible.filter(stuckAt)
  const out = stuckBroken[0] ?? plausible[0]
  const {scenario, fixAt} = questionScenario(base, state, out)
  const job = (s: Scenario, policies = [setup]): SweepJob => ({scenario: s, setups: policies, params: []})
  const healthy = out === 0 && state.errorRate < 0.01
  const regionOf = (r: CellResult): Region => (r.outcome === 'stuck' ? 'stuck' : healthy ? 'unharmed' : 'recovering')
  const here = runCell(job(scenario), {setup: 0, x: NaN, y: NaN})
  const region = regionOf(here)
  const sensitivity = [0.9, 1.1].map((capacityFactor) => {
    const pools = scenario.pools.map((p, i) => (i === 0 && p.capacity !== undefined ? {...p, capacity: p.capacity * capacityFactor} : p))
    return {capacityFactor, region: regionOf(runCell(job({...scenario, pools}), {setup: 0, x: NaN, y: NaN}))}
  })
  const backInSeconds = here.outcome === 'stuck' ? null : (here.recoveredSecondsAfterFix ?? 0)

  // How far from the edge: along demand at this many out, and along servers out at this demand.
  const demandTop = Math.max(state.demand * 2, 1)
  // Odd counts from 0 to twice today's demand put today's on a grid row, where the map marks the pool.
  const alongDemand = await sweepOn(scenario, [setup], [axis('demand', 0, demandTop, options.quick ? 11 : 21)], options.runner)
  const stuckAboveDemand = firstStuck(alongDemand)
  const map = options.quick
    ? null
    : await sweepOn(scenario, [setup], [axis('broken', 0, servers, Math.min(servers + 1, 41)), axis('demand', 0, demandTop, 17)], options.runner)

  const levers = [
    ...(region === 'stuck' ? await findLevers(scenario, setup, fixAt, options) : []),
    // A runbook the operator names is rehearsed whenever the pool is harmed: it may get it back sooner than waiting.
    ...(region !== 'unharmed' && options.runbooks ? await options.runbooks({scenario, setup, fixAt}) : []),
  ].sort(surestFirst)
  const watchedSeconds = scenario.duration - fixAt
  const assessment: Assessment = {
    state,
    outNow,
    out,
    brokenGiven: options.broken !== undefined,
    plausibleBroken: plausible,
    stuckBroken,
    region,
    backInSeconds,
    stuckAboveDemand,
    stuckOut,
    levers,
    map,
    sentences: [],
    setup: setup.name,
    watchedSeconds,
    sensitivity,
  }
  return {...assessment, sentences: sentencesOf(assessment, base)}
}

/**
 * The levers this load balancer has, each searched for the least that gets the pool out (a
 * strip along the lever, bisected at its edge) and then run once more at that value to say how
 * soon the pool is back with it.
 */
async function findLevers(
  scenario: Scenario,
  setup: {name: string; policy: SetupPolicy},
  fixAt: number,
  options: {family: Family; quick: boolean; runner: CellRunner},
): Promise<Lever[]> {
  const levers: Lever[] = []
  const steps = options.quick ? 11 : 21
  const check = (s: Scenario, policy: SetupPolicy): CellResult =>
    runCell({scenario: s, setups: [{name: setup.name, policy}], params: []}, {setup: 0, x: NaN, y: NaN})
  const back = (r: CellResult): number | null => (r.outcome === 'stuck' ? null : (r.recoveredSecondsAfterFix ?? 0))

  // Shed traffic from now: a share of a type where the load balancer can weigh one (HAProxy), else whole types.
  for (const type of Object.keys(scenario.demand.types)) {
    const restricted = {...scenario, restrictions: [{type, share: 0, retryAfter: 120, from: fixAt, to: undefined}]}
    const whole = options.family === 'alb'
    if (whole && type === 'all') continue
    let share: number | null
    if (whole) share = check({...restricted, restrictions: [{...restricted.restrictions[0], share: 100}]}, setup.policy).outcome === 'stuck' ? null : 100
    else {
      const strip = await sweepOn(restricted, [setup], [axis('restricted', 0, 100, steps)], options.runner)
      const edge = firstHolds(strip)
      share = edge === null ? (strip.setups[0].cells[0].outcome === 'stuck' ? null : 0) : Math.ceil(edge)
    }
    if (share === null) {
      levers.push({
        kind: 'shed',
        what: `turning away ${whole ? 'all' : 'even all'} of ${type} does not get it out`,
        value: null,
        holds: false,
        backInSeconds: null,
      })
      continue
    }
    const result = check({...restricted, restrictions: [{...restricted.restrictions[0], share}]}, setup.policy)
    levers.push({
      kind: 'shed',
      what: `turn away ${share === 100 ? 'all' : `${share}%`} of ${type === 'all' ? 'all traffic' : type}, then let it back by degrees`,
      value: share,
      holds: result.outcome !== 'stuck',
      backInSeconds: back(result),
      command: `sluice restrict --type ${type}${type === 'all' ? ' --path "/*"' : ' …'}${share < 100 ? ` --share ${share}` : ''}, then sluice lift --type ${type} --schedule 10,25,50,100`,
    })
  }

  // A guard of the setup, searched along 0–100% for the edge where the pool comes out and run once more there.
  const guard = async (
    key: 'panicThreshold' | 'maxEjectionPercent',
    round: (edge: number) => number,
    said: (value: number) => Pick<Lever, 'kind' | 'what' | 'command'>,
  ): Promise<void> => {
    const edge = firstHolds(await sweepOn(scenario, [setup], [axis(key, 0, 100, steps)], options.runner))
    if (edge === null) return
    const value = round(edge)
    const result = check(scenario, {...setup.policy, [key]: value})
    levers.push({...said(value), value, holds: result.outcome !== 'stuck', backInSeconds: back(result)})
  }
  // Route to every server below a share healthy: Envoy's panic threshold, an ALB's minimum healthy targets routing.
  if (options.family === 'alb')
    await guard('panicThreshold', Math.ceil, (value) => ({
      kind: 'panic',
      what: `route to every target when fewer than ${value}% are healthy (the target group's minimum healthy targets routing)`,
      command: `sluice cycle --failover-percent ${value} … (or the target group attribute ${failoverKey})`,
    }))
  if (options.family === 'envoy') {
    await guard('panicThreshold', Math.ceil, (value) => ({
      kind: 'panic',
      what: `a panic threshold of ${value}%: route to every server when fewer than that are healthy`,
    }))
    // Never eject more than a share at once (Envoy's max_ejection_percent; neither an ALB nor HAProxy has one): stuck at a
    // high cap and holding below it, the edge's holding side is the largest cap that works.
    await guard('maxEjectionPercent', Math.floor, (value) => ({kind: 'cap', what: `cap ejection at ${value}% of the pool at once (max_ejection_percent)`}))
  }
  // Clients that retry multiply the load; one attempt, or a 10% budget, takes that away.
  if (scenario.clients.attempts > 1) {
    const budget = {...setup.policy, clients: {...setup.policy.clients, retryBudget: 0.1}}
    const result = check(scenario, budget)
    levers.push({
      kind: 'retries',
      what: `a 10% retry budget in the clients (now ${scenario.clients.attempts} attempts a request)`,
      value: 10,
      holds: result.outcome !== 'stuck',
      backInSeconds: back(result),
    })
  }
  // Servers returned at full weight fall over again; slow start brings them back gently.
  const slow = options.family === 'haproxy' ? (scenario.healthCheck.haproxy?.slowstart ?? 0) : setup.policy.slowStart
  if (slow === 0) {
    const seconds = 60
    const policy: SetupPolicy =
      options.family === 'haproxy' ? {...setup.policy, healthCheck: {...setup.policy.healthCheck, slowstart: seconds}} : {...setup.policy, slowStart: seconds}
    const result = check(scenario, policy)
    levers.push({
      kind: 'slow-start',
      what: `${seconds} s of slow start for returning servers`,
      value: seconds,
      holds: result.outcome !== 'stuck',
      backInSeconds: back(result),
    })
  }
  return levers
}

/** The surest first: those that hold, soonest back. */
const surestFirst = (a: Lever, b: Lever): number => Number(b.holds) - Number(a.holds) || (a.backInSeconds ?? Infinity) - (b.backInSeconds ?? Infinity)

const failoverKey = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'

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
  else if (a.region === 'recovering')
    lines.push(`RECOVERING: with ${where}, fixed now it comes back on its own, at full service ${formatNumber(a.backInSeconds ?? 0)} s after the fix.`)
  else lines.push(`UNHARMED: every server in rotation at ${rps} rps, ${percent(s.errorRate)} errors.`)
  if (decides) lines.push(decides)
  if (a.stuckAboveDemand !== null) {
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
  if (a.region === 'stuck') {
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
  return lines
}
