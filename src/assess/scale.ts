import type {PoolNow} from '../ports/pool-readings.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {setupSentence, type SweepResult} from '../sweep/sweep.js'
import type {LineEdges} from '../sweep/tipping.js'

/**
 * A pool too big to simulate server by server within the budget is assessed on a scale model:
 * fewer servers, each standing for several of the pool's, with demand scaled with them. The
 * simulator's work is per server (typed arrays, one slot a server), so a run of 20,000 servers is
 * 1,000 times the work of one of 20, and an assessment is a hundred runs or more; what a server
 * does depends only on its own share of the load (demand per server in rotation), its checks and
 * its guards' shares, all of which a scale model keeps. What it loses is resolution in counts: a
 * model server stands for `servers / modelled` of the pool's, so counts of servers are said to that
 * grain. The placement along servers broken was already a 41-point grid (a grain of 500 at 20,000).
 */
export interface ScaleModel {
  /** Servers in the pool. */
  servers: number
  /** Servers the model runs: the pool's own number when one run of them fits `runBudget`. */
  modelled: number
}

/**
 * Servers × ticks one run of the question may take before the pool is modelled at scale: some
 * 15–20 ms of simulation, so the hundred-odd runs of --quick are a second or two. The seed's
 * 1 s tick and ten-minute watch (710 ticks) run 1,408 servers one for one; HAProxy's 0.1 s tick, 144.
 */
export const runBudget = 1e6

/** The fewest servers a scale model runs (when the pool has as many): a model server is then at most 1% of the pool. */
export const fewestModelled = 100

export function scaleModel(servers: number, ticksPerRun: number): ScaleModel {
  const fits = Math.floor(runBudget / Math.max(1, ticksPerRun))
  return {servers, modelled: servers <= fits ? servers : Math.min(servers, Math.max(fewestModelled, fits))}
}

export const isScaled = (m: ScaleModel): boolean => m.modelled < m.servers

/** How many of the pool's servers one model server stands for. */
export const grain = (m: ScaleModel): number => m.servers / m.modelled

/**
 * A count of the pool's servers in the model: none stays none, and some stays at least one, so
 * a pool with a few servers out is never modelled as a whole one.
 */
export function toModel(m: ScaleModel, count: number): number {
  if (!isScaled(m) || count <= 0) return count
  return Math.min(m.modelled, Math.max(1, Math.round((count * m.modelled) / m.servers)))
}

/**
 * The step counts of the pool's servers are said in with a scale model: the power of ten below a
 * model server's grain (10 when each stands for 14), so a count shows no more figures than it has.
 */
export const countStep = (m: ScaleModel): number => (isScaled(m) ? 10 ** Math.floor(Math.log10(grain(m))) : 1)

/** A count of model servers said as the pool's, to the model's step; `up` for an amount that must be enough (servers to add). */
export function fromModel(m: ScaleModel, count: number, up = false): number {
  if (!isScaled(m)) return count
  const step = countStep(m)
  const exact = (count * m.servers) / m.modelled / step
  const n = (up ? Math.ceil(exact - 1e-9) : Math.round(exact)) * step
  return up ? n : Math.min(m.servers, n)
}

/** Requests a second of the model said as the pool's. */
export const rpsFromModel = (m: ScaleModel, rps: number): number => (isScaled(m) ? (rps * m.servers) / m.modelled : rps)

/** The pool now as the model sees it: its servers, those out of rotation and its demand scaled alike. */
export function modelState(m: ScaleModel, state: PoolNow): PoolNow {
  if (!isScaled(m)) return state
  const out = toModel(m, state.servers - state.healthy)
  return {...state, servers: m.modelled, healthy: m.modelled - out, demand: (state.demand * m.modelled) / m.servers}
}

/**
 * The scenario the model asks its question of: every pool of servers scaled as the first (the
 * first pool's count is set from the state by the question), so demand split between pools by
 * DNS weights lands on each at the same load per server.
 */
export function modelScenario(m: ScaleModel, base: Scenario): Scenario {
  if (!isScaled(m)) return base
  const f = m.modelled / m.servers
  return {
    ...base,
    pools: base.pools.map((p, i) => (i === 0 || p.kind !== 'servers' || p.servers === undefined ? p : {...p, servers: Math.max(1, Math.round(p.servers * f))})),
  }
}

/**
 * The map of servers broken × demand drawn in the pool's numbers: its axes, edges and sentences
 * said of `scenario` (the question at the pool's own size), the cells as the model ran them.
 */
export function mapInPool(m: ScaleModel, map: SweepResult, scenario: Scenario): SweepResult {
  if (!isScaled(m)) return map
  const [x, y] = map.axes
  const count = (v: number): number => fromModel(m, v)
  const rps = (v: number): number => rpsFromModel(m, v)
  const xs = {...x, from: count(x.from), to: count(x.to), values: x.values.map(count)}
  const ys = y && {...y, from: rps(y.from), to: rps(y.to), values: y.values.map(rps)}
  const line = (l: LineEdges): LineEdges => ({
    ...l,
    y: l.y === null ? null : rps(l.y),
    transitions: l.transitions.map((t) => ({...t, holds: count(t.holds), stuck: count(t.stuck)})),
  })
  return {
    scenario,
    axes: ys ? [xs, ys] : [xs],
    setups: map.setups.map((s) => {
      const tipping = line(s.tipping)
      return {...s, edges: s.edges.map(line), tipping, sentence: setupSentence(s.name, s.policy, tipping, xs, ys, scenario)}
    }),
  }
}
