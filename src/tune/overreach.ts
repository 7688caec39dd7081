import {stepName} from '../format.js'
import type {WeightChange} from '../report/rehearsal.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {poolShares, rps, stepWork} from '../pacing/room.js'

/**
 * What a weight change asked of the pool it moved traffic onto, against what the pool's servers
 * in rotation served at that moment (src/pacing/room.ts: the rule a paced ramp steps by live).
 * Asking more is the step a cold pool cannot take (an overreach).
 */
export interface StepLoad {
  step: number
  pool: string
  /** Percentage points of the split the step moved onto the pool. */
  points: number
  /** What those points carry at the demand then, rps. */
  movedRps: number
  /** The pool's work in the worst second after the change, in requests' work a second. */
  workRps: number
  /** What its servers in rotation served at that moment, each at its warmth; and warm, every server. */
  capacityRps: number
  warmRps: number
  handshakeCost: number
}

/** What each of the run's weight changes asked of every pool it moved traffic onto, in order. */
export function stepLoads(changes: WeightChange[], sets: Record<string, string>, scenario: Pick<Scenario, 'pools' | 'dns' | 'clients'>): StepLoad[] {
  // Spread over a TTL, the handshakes of any one second are the share of clients whose answers expire in it.
  const spread = Math.min(1, scenario.clients.thinkTime / Math.max(scenario.dns.ttl, 1e-9))
  const found: StepLoad[] = []
  for (const change of changes) {
    const taken = change.taken
    if (!taken) continue
    const before = poolShares(taken.before, (k) => sets[k] ?? k)
    const after = poolShares(change.weights, (k) => sets[k] ?? k)
    for (const [name, share] of after) {
      const pool = scenario.pools.find((p) => p.name === name)
      const capacityRps = taken.capacityRps[name]
      if (!pool || pool.kind !== 'servers' || capacityRps === undefined) continue
      const from = before.get(name) ?? 0
      const moved = share - from
      if (moved <= 1e-9) continue
      const movedRps = moved * taken.demandRps
      found.push({
        step: taken.step,
        pool: name,
        points: Math.round(moved * 1000) / 10,
        movedRps,
        workRps: stepWork(from, share, taken.demandRps, {handshakeCost: pool.handshakeCost, spread}),
        capacityRps,
        warmRps: (pool.servers ?? 0) * (pool.capacity ?? 0),
        handshakeCost: pool.handshakeCost,
      })
    }
  }
  return found
}

/** Whether a change asked its pool for more work than the pool served then. */
export const overreaches = (load: StepLoad): boolean => load.workRps > load.capacityRps

/** What a change asked of its pool, in the words of tune's report: the work against the capacity then. */
export function loadText(l: StepLoad): string {
  const handshakes = l.handshakeCost > 1 ? `, its new connections at ${l.handshakeCost}× a request's work` : ''
  const cold = l.capacityRps < l.warmRps - 0.5 ? `, ${rps(l.warmRps)} when warm` : ''
  return `+${l.points} points, ${rps(l.movedRps)} onto ${l.pool}${handshakes}: ${rps(l.workRps)} of work against ${rps(l.capacityRps)} served then by its servers in rotation${cold}`
}

/** An overreach as the reason a rehearsal did not pass. */
export const overreachText = (l: StepLoad): string => `${stepName(l.step)}: ${loadText(l)}, more than the pool could take`
