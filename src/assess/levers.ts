import type {PoolFamily} from '../ports/pool-readings.js'
import {ScenarioRun} from '../sim/scenario-run.js'
import type {Scenario, SetupPolicy} from '../sim/scenario/schema.js'
import {classify, runCell, type CellResult} from '../sweep/classify.js'
import {axisValues, type Axis} from '../sweep/grid.js'
import {formatNumber, sweepParam} from '../sweep/params.js'
import {runSweep, type SweepResult} from '../sweep/sweep.js'
import {converged, gridBrackets, midpoint, narrow} from '../sweep/tipping.js'
import type {CellRunner} from '../sweep/workers.js'
import {BudgetExhausted, type WorkMeter} from './budget.js'
import {fromModel, type ScaleModel} from './scale.js'

/** One way out, checked by simulation from the pool's state now. */
export interface Lever {
  kind: 'shed' | 'panic' | 'cap' | 'retries' | 'slow-start' | 'add-servers' | 'runbook'
  /** What to do, in words, with the smallest amount that gets the pool out. */
  what: string
  /** The value found (percent shed, threshold, cap, seconds, servers added), or null where the lever is on or off. */
  value: number | null
  /** Whether, at that value, the pool comes back: the lever checked, not hoped for. */
  holds: boolean
  /** Seconds from now (the fix) to full service with the lever, when it holds. */
  backInSeconds: number | null
  /** The command that pulls it, where sluice has one. */
  command?: string
  /** For a shed: the traffic type turned away (`all`: a share of all traffic, whatever its types). */
  type?: string
}

/** The question the levers are tried on, in the model's terms, and what the words need in the pool's. */
export interface LeverQuestion {
  scenario: Scenario
  setup: {name: string; policy: SetupPolicy}
  fixAt: number
  family: PoolFamily
  quick: boolean
  runner: CellRunner
  meter: WorkMeter
  model: ScaleModel
  /** Demand now, and what every server of the pool could serve together: the pool's, not the model's. */
  demand: number
  fullCapacity: number
}

export function axis(name: string, from: number, to: number, steps: number): Axis {
  const param = sweepParam(name)!
  return {param, from, to, values: axisValues(from, to, steps, param.integer), spec: `${name}=${from}..${to}:${steps}`}
}

/** A strip or map of the question, on the one runner every sweep of an assessment shares. */
export function sweepOn(scenario: Scenario, setups: Array<{name: string; policy: SetupPolicy}>, axes: Axis[], runner: CellRunner): Promise<SweepResult> {
  runner.retarget({scenario, setups, params: axes.map((a) => a.param.name)})
  return runSweep(scenario, setups, axes, runner)
}

const firstHolds = (result: SweepResult): number | null => result.setups[0].tipping.transitions[0]?.holds ?? null

/** One run of the question under a policy, charged to the budget. */
function checked(q: LeverQuestion, s: Scenario, policy: SetupPolicy): CellResult {
  return q.meter.run(s, () => runCell({scenario: s, setups: [{name: q.setup.name, policy}], params: []}, {setup: 0, x: NaN, y: NaN}))
}

const back = (r: CellResult): number | null => (r.outcome === 'stuck' ? null : (r.recoveredSecondsAfterFix ?? 0))

/** What each lever is called when the budget leaves it untried. */
const names = {
  all: 'turning away a share of all traffic',
  type: (type: string) => `turning away ${type}`,
  panic: 'routing to every server below a share healthy',
  cap: 'an ejection cap',
  retries: 'a retry budget',
  slowStart: 'slow start',
  addServers: 'adding servers',
}

/**
 * The levers this load balancer has, each searched for the least that gets the pool out (a
 * strip along the lever, bisected at its edge) and then run once more at that value to say how
 * soon the pool is back with it. A lever the budget has no room for is named in `skipped`, and
 * the others are still tried: each is its own batch of runs.
 */
export async function findLevers(q: LeverQuestion, skipped: string[]): Promise<Lever[]> {
  const levers: Lever[] = []
  const attempt = async (name: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work()
    } catch (error) {
      if (!(error instanceof BudgetExhausted)) throw error
      skipped.push(`the lever ${name}`)
    }
  }
  const {scenario, setup, fixAt, family} = q
  const steps = q.quick ? 11 : 21

  await attempt(names.all, async () => {
    levers.push(await shedAllTraffic(q, steps))
  })

  // Shed a named type from now: a share of it where the load balancer can weigh one (HAProxy), else the whole type.
  for (const type of Object.keys(scenario.demand.types).filter((t) => t !== 'all'))
    await attempt(names.type(type), async () => {
      const restricted = {...scenario, restrictions: [{type, share: 0, retryAfter: 120, from: fixAt, to: undefined}]}
      const whole = family === 'alb'
      let share: number | null
      if (whole) share = checked(q, {...restricted, restrictions: [{...restricted.restrictions[0], share: 100}]}, setup.policy).outcome === 'stuck' ? null : 100
      else {
        const strip = await sweepOn(restricted, [setup], [axis('restricted', 0, 100, steps)], q.runner)
        const edge = firstHolds(strip)
        share = edge === null ? (strip.setups[0].cells[0].outcome === 'stuck' ? null : 0) : Math.ceil(edge)
      }
      if (share === null) {
        levers.push({
          kind: 'shed',
          type,
          what: `turning away ${whole ? 'all' : 'even all'} of ${type} does not get it out`,
          value: null,
          holds: false,
          backInSeconds: null,
        })
        return
      }
      const result = checked(q, {...restricted, restrictions: [{...restricted.restrictions[0], share}]}, setup.policy)
      levers.push({
        kind: 'shed',
        type,
        what: `turn away ${share === 100 ? 'all' : `${share}%`} of ${type}, then let it back by degrees`,
        value: share,
        holds: result.outcome !== 'stuck',
        backInSeconds: back(result),
        command: `sluice restrict --type ${type} …${share < 100 ? ` --share ${share}` : ''}, then sluice lift --type ${type} --schedule 10,25,50,100`,
      })
    })

  // A guard of the setup, searched along 0–100% for the edge where the pool comes out and run once more there.
  const guard = async (
    key: 'panicThreshold' | 'maxEjectionPercent',
    round: (edge: number) => number,
    said: (value: number) => Pick<Lever, 'kind' | 'what' | 'command'>,
  ): Promise<void> => {
    const edge = firstHolds(await sweepOn(scenario, [setup], [axis(key, 0, 100, steps)], q.runner))
    if (edge === null) return
    const value = round(edge)
    const result = checked(q, scenario, {...setup.policy, [key]: value})
    levers.push({...said(value), value, holds: result.outcome !== 'stuck', backInSeconds: back(result)})
  }
  // Route to every server below a share healthy: Envoy's panic threshold, an ALB's minimum healthy targets routing.
  if (family === 'alb')
    await attempt(names.panic, () =>
      guard('panicThreshold', Math.ceil, (value) => ({
        kind: 'panic',
        what: `route to every target when fewer than ${value}% are healthy (the target group's minimum healthy targets routing)`,
        command: `sluice cycle --failover-percent ${value} … (or the target group attribute ${failoverKey})`,
      })),
    )
  if (family === 'envoy') {
    await attempt(names.panic, () =>
      guard('panicThreshold', Math.ceil, (value) => ({
        kind: 'panic',
        what: `a panic threshold of ${value}%: route to every server when fewer than that are healthy`,
      })),
    )
    // Never eject more than a share at once (Envoy's max_ejection_percent; neither an ALB nor HAProxy has one): stuck at a
    // high cap and holding below it, the edge's holding side is the largest cap that works.
    await attempt(names.cap, () =>
      guard('maxEjectionPercent', Math.floor, (value) => ({kind: 'cap', what: `cap ejection at ${value}% of the pool at once (max_ejection_percent)`})),
    )
  }
  // Clients that retry multiply the load; one attempt, or a 10% budget, takes that away.
  if (scenario.clients.attempts > 1)
    await attempt(names.retries, async () => {
      const budget = {...setup.policy, clients: {...setup.policy.clients, retryBudget: 0.1}}
      const result = checked(q, scenario, budget)
      levers.push({
        kind: 'retries',
        what: `a 10% retry budget in the clients (now ${scenario.clients.attempts} attempts a request)`,
        value: 10,
        holds: result.outcome !== 'stuck',
        backInSeconds: back(result),
      })
    })
  // Servers returned at full weight fall over again; slow start brings them back gently.
  const slow = family === 'haproxy' ? (scenario.healthCheck.haproxy?.slowstart ?? 0) : setup.policy.slowStart
  if (slow === 0)
    await attempt(names.slowStart, async () => {
      const seconds = 60
      const policy: SetupPolicy =
        family === 'haproxy' ? {...setup.policy, healthCheck: {...setup.policy.healthCheck, slowstart: seconds}} : {...setup.policy, slowStart: seconds}
      const result = checked(q, scenario, policy)
      levers.push({
        kind: 'slow-start',
        what: `${seconds} s of slow start for returning servers`,
        value: seconds,
        holds: result.outcome !== 'stuck',
        backInSeconds: back(result),
      })
    })
  await attempt(names.addServers, async () => {
    levers.push(await addServers(q, steps))
  })
  return levers
}

const failoverKey = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'

/**
 * A share of all traffic turned away from now, whatever its types: the question with its types as
 * one (the question has no fault or restriction of a type, so its types differ only in name),
 * searched along 0–100% like every other lever. When demand is past what every server could
 * serve, letting it back would overload the pool again: the share stays until servers are added.
 */
async function shedAllTraffic(q: LeverQuestion, steps: number): Promise<Lever> {
  const {scenario, setup, fixAt} = q
  const restricted: Scenario = {
    ...scenario,
    demand: {...scenario.demand, types: {all: 1}},
    restrictions: [{type: 'all', share: 0, retryAfter: 120, from: fixAt, to: undefined}],
  }
  const strip = await sweepOn(restricted, [setup], [axis('restricted', 0, 100, steps)], q.runner)
  const edge = firstHolds(strip)
  const share = edge === null ? (strip.setups[0].cells[0].outcome === 'stuck' ? null : 0) : Math.ceil(edge)
  if (share === null)
    return {kind: 'shed', type: 'all', what: 'turning away even all traffic does not get it out', value: null, holds: false, backInSeconds: null}
  const result = checked(q, {...restricted, restrictions: [{...restricted.restrictions[0], share}]}, setup.policy)
  const amount = share === 100 ? 'all traffic' : `${share}% of all traffic`
  // An ALB's listener rule turns away all it matches: a share of all traffic has to be turned away before it.
  const alb = q.family === 'alb'
  const where = alb ? ' ahead of the ALB (its listener rules turn away all they match, not a share)' : ''
  const restrict = `sluice restrict --type all --path "/*"${share < 100 ? ` --share ${share}` : ''}`
  const lever = {kind: 'shed', type: 'all', value: share, holds: result.outcome !== 'stuck', backInSeconds: back(result)} as const
  if (q.demand > q.fullCapacity)
    return {
      ...lever,
      what: `turn away ${amount}${where} and keep it away while demand is over the ${formatNumber(Math.round(q.fullCapacity))} rps the ${formatNumber(q.model.servers)} servers can serve, or until servers are added`,
      ...(alb ? {} : {command: `${restrict}; sluice lift --type all once servers are added`}),
    }
  return {
    ...lever,
    what: `turn away ${amount}${where}, then let it back by degrees`,
    ...(alb ? {} : {command: `${restrict}, then sluice lift --type all --schedule 10,25,50,100`}),
  }
}

/**
 * Servers added to the pool now, in the model: the pool as it is until the fix (the added servers
 * registered but held out of rotation), then the added ones taken into rotation as a new target is
 * (checked, in slow start where the setup has it). Not in the pool from the start: a pool that had
 * them all along would never have cascaded, which says nothing of one that has.
 */
function withServersAdded(q: LeverQuestion, added: number): CellResult {
  const {scenario, setup, fixAt} = q
  const servers = scenario.pools[0].servers ?? 0
  const grown: Scenario = {...scenario, pools: scenario.pools.map((p, i) => (i === 0 ? {...p, servers: servers + added} : p))}
  if (added === 0) return checked(q, grown, setup.policy)
  // Which servers the trigger breaks is a seeded draw over the whole pool: read it from the first
  // ticks of the same run, so that the servers held back until the fix are among those it spares.
  const fault = grown.faults[0]
  const breaks = fault?.kind === 'broken' && fault.servers > 0
  const probe = breaks ? new ScenarioRun(grown, setup.policy) : null
  if (probe && fault) {
    q.meter.charge((servers + added) * Math.ceil((fault.from + grown.tick) / grown.tick))
    probe.fleet.runUntil(fault.from + grown.tick)
  }
  const broken = probe?.fleet.pools[0].broken
  const held: number[] = []
  for (let i = servers + added - 1; i >= 0 && held.length < added; i--) if (!broken || broken[i] === 0) held.push(i)
  return q.meter.run(grown, () => {
    const run = new ScenarioRun(grown, setup.policy)
    const pool = run.fleet.pools[0]
    pool.deregister(held)
    // The connections the pool opened at the start are those of the servers in rotation, not the held ones' (one pool: all of demand).
    if (run.fleet.pools.length === 1) pool.primeConnections(run.fleet.demandAt(0))
    run.fleet.runUntil(fixAt)
    pool.register(held, run.fleet.tick)
    const {record, summary} = run.finish()
    return classify(record, summary)
  })
}

/**
 * The fewest servers to add that get the pool out, searched along added servers from none to
 * enough to double the pool or carry twice today's demand at the servers' capacity, and bisected at
 * the first edge, as the other levers are. Said in the pool's servers (a scale model's rounded up).
 */
async function addServers(q: LeverQuestion, steps: number): Promise<Lever> {
  const pool = q.scenario.pools[0]
  const servers = pool.servers ?? 0
  const capacity = pool.capacity ?? 0
  const most = Math.max(servers, capacity > 0 ? Math.ceil((2 * (q.scenario.demand.rps ?? 0)) / capacity) : servers)
  const top = Math.max(1, most - servers)
  const values = [...new Set(axisValues(0, top, Math.min(steps, top + 1), true))]
  // Each run is on this thread: the runner runs the sweeps' parameters, and servers held out of rotation until the fix is none of them.
  const results = values.map((n) => withServersAdded(q, n))
  const stuck = results.map((r) => r.outcome === 'stuck')
  const [bracket] = gridBrackets(values, stuck).filter((b) => b.loStuck)
  const inPool = (n: number): number => fromModel(q.model, n, true)
  const said = (n: number): string => formatNumber(inPool(n))
  if (!bracket)
    return {
      kind: 'add-servers',
      what: `adding up to ${said(top)} servers (${formatNumber(q.model.servers + inPool(top))} in all) does not get it out`,
      value: null,
      holds: false,
      backInSeconds: null,
    }
  let b = bracket
  let result = results[values.indexOf(bracket.hi)]
  const integerAxis = axis('servers', 0, top, 2)
  while (!converged(b, integerAxis)) {
    const mid = midpoint(b, integerAxis)
    if (!(mid > b.lo && mid < b.hi)) break
    const r = withServersAdded(q, mid)
    b = narrow(b, mid, r.outcome === 'stuck')
    if (r.outcome !== 'stuck') result = r
  }
  const added = inPool(b.hi)
  return {
    kind: 'add-servers',
    what: `add ${formatNumber(added)} server${added === 1 ? '' : 's'} to the pool (${formatNumber(q.model.servers + added)} in all), taken into rotation as they pass their checks`,
    value: added,
    holds: result.outcome !== 'stuck',
    backInSeconds: back(result),
  }
}
