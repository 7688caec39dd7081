import {z} from 'zod'
import type {Path} from '../input/problems.js'
import {scheduleSchema} from '../runbook/schedule.js'
import {duration} from '../runbook/units.js'
import {rps} from './room.js'

// `schedule: auto`: a ramp that paces itself on the receiving pool, as a runbook writes it and as
// it runs. The pacing itself is src/pacing/pacer.ts.

/** A ramp's schedule: the weights as written, or `auto`. */
export const pacedScheduleSchema = z
  .union([
    scheduleSchema,
    z
      .literal('auto')
      .describe(
        "Each next share is the largest the receiving pool can take now: its targets in rotation × targets.capacityPerTarget × each target's warm-up, less the headroom, against the demand over the gate's window. Without a stated capacity it probes: the step grows while the pool's latency and errors stay in their band, and halves on a rise. Bounded by pace.minStep and pace.maxStep.",
      ),
  ])
  .describe('The weights in % the ramped set steps through: a list, linear or exponential steps, or `auto` (paced on the receiving pool; see `pace`).')

const points = (what: string, fallback: number) => z.number().gt(0).max(100).default(fallback).describe(`${what} (default ${fallback}).`)

/** The bounds of `schedule: auto`. */
export const paceSchema = z
  .strictObject({
    to: z.number().min(1).max(100).default(100).describe('Where the ramp ends, in % of the traffic (default 100).'),
    minStep: points('The smallest step in percentage points; a pool that cannot take it holds the ramp where it is', 5),
    maxStep: points('The largest step in percentage points, however much room the pool has', 50),
    headroom: z
      .number()
      .min(0)
      .lt(100)
      .default(20)
      .describe('The share of the pool kept back, in %: a step may ask it for at most its capacity now less this (default 20).'),
    handshakeCost: z
      .number()
      .min(1)
      .max(100)
      .default(1)
      .describe(
        "A new connection's first request, in requests of work (TLS and session set-up), counted for the traffic a step moves, all of it at once (default 1: no extra cost).",
      ),
    clientInterval: duration
      .optional()
      .describe(
        "Seconds between one client's requests, where known. Behind weighted DNS, clients move as their answers expire, so only this share of the TTL of a step's handshakes fall in any one second (default: all at once, as behind a load balancer's split).",
      ),
    wait: duration
      .default(300)
      .describe('Seconds a step waits for the pool to have room (targets warming, returning) before the ramp holds where it is (default 300).'),
    latencyRise: z
      .number()
      .gt(0)
      .default(25)
      .describe("Probing only: a step whose bake ends with the pool's p99 latency more than this % above the window before it is a rise (default 25)."),
    errorRise: z
      .number()
      .gt(0)
      .default(0.5)
      .describe(
        "Probing only: a step whose bake ends with the pool's error rate more than this many points above the window before it is a rise (default 0.5).",
      ),
  })
  .describe('How `schedule: auto` paces the ramp.')

export type PaceData = z.output<typeof paceSchema>

/** A paced ramp's rule, resolved: the pool it reads and what it may do. */
export interface PaceRule {
  /** The pool that receives the traffic: its targets, warm-up and latency are read. */
  pool: string
  /** Where the ramp ends, in %. */
  to: number
  /** Requests a second one warm target serves (targets.capacityPerTarget); null: probe. */
  perTarget: number | null
  minStep: number
  maxStep: number
  headroom: number
  handshakeCost: number
  clientInterval?: number
  wait: number
  latencyRise: number
  errorRise: number
}

/**
 * The rule of a step whose schedule is `auto`, or undefined for a written schedule (where `pace`
 * is refused: it would do nothing).
 */
export function resolvePace(
  raw: {schedule: unknown; pace?: PaceData},
  path: Path,
  fail: (p: Path, m: string) => void,
  pool: string,
  capacityPerTarget: Record<string, number> | undefined,
): PaceRule | undefined {
  if (raw.schedule !== 'auto') {
    if (raw.pace !== undefined) fail([...path, 'pace'], 'pace bounds a ramp whose schedule is `auto`; this one is written out, so it would do nothing')
    return undefined
  }
  const pace = raw.pace ?? paceSchema.parse({})
  if (pace.minStep > pace.maxStep) fail([...path, 'pace', 'minStep'], `expected minStep at most maxStep (${pace.maxStep} points), got ${pace.minStep}`)
  return {pool, perTarget: capacityPerTarget?.[pool] ?? null, ...pace}
}

/**
 * What a ramp's title says of its schedule: "5% → 25% → 100%", "paced to 100% on mailbox's room
 * (5–50 points a step)", or "probing to 100% on mailbox (5–50 points a step)".
 */
export function scheduleTitle(schedule: number[], pace: PaceRule | undefined): string {
  if (pace)
    return `${pace.perTarget === null ? 'probing' : 'paced'} to ${pace.to}% on ${pace.pool}${pace.perTarget === null ? '' : "'s room"} (${pace.minStep}–${pace.maxStep} points a step)`
  return schedule.map((p) => `${p}%`).join(' → ')
}

/**
 * The plan's lines for the rule: what it reads, what it steps by, and when it holds. `probes`
 * says why a probe probes (by default: no capacity stated).
 */
export function pacePlan(pace: PaceRule, probes = `no capacity of ${pace.pool} is stated (targets.capacityPerTarget)`): string[] {
  const spread = pace.clientInterval === undefined ? 'all at once' : `spread over the TTL for clients asking every ${pace.clientInterval} s`
  const handshakes = pace.handshakeCost > 1 ? `, with the handshakes of what moved at ${pace.handshakeCost}× a request (${spread})` : ''
  const how =
    pace.perTarget === null
      ? `${probes}, so it probes: steps from ${pace.minStep} points, doubling while ${pace.pool}'s p99 latency stays within ${pace.latencyRise}% and its error rate within ${pace.errorRise} points of the window before each step, halving on a rise and stepping again after a bake once the pool has stopped rising (up to ${pace.wait} s, then holding)`
      : `each step is the largest ${pace.pool} can take now: its targets in rotation × ${rps(pace.perTarget)} × each one's warm-up, less ${pace.headroom}% headroom, against the demand over the gate's window (once ${pace.pool} has a share, what it receives, scaled to the whole)${handshakes}`
  return [
    `schedule auto: ${how}; between ${pace.minStep} and ${pace.maxStep} points a step`,
    `a step ${pace.pool} cannot take waits up to ${pace.wait} s for room, then holds where it is and says why`,
  ]
}
