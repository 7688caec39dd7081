/**
 * What a pool can take: one rule for every part of sluice that moves traffic onto a pool, so that
 * what `tune` refuses offline, what a paced ramp (`schedule: auto`) steps to live, and what a
 * paced cycle drains agree by construction.
 *
 * A pool serves what its targets in rotation serve, each at its warm-up (a target in slow start,
 * or cold after a restart, serves a fraction of its stated capacity). A step that moves traffic
 * onto it asks for its new share of the demand, and the traffic it moved arrives on new
 * connections, whose first request costs `handshakeCost` requests of work (TLS and session set-up:
 * the step the Outlook incident's servers fell over at). Spread over a DNS TTL, only the share of
 * clients whose answers expire in a second reconnect in it (`spread` below 1); behind a load
 * balancer every moved client reconnects at once (1).
 */

/** The receiving pool's side of the inequality: what it serves now, what it would serve warm. */
export interface PoolRoom {
  pool: string
  /** Targets in rotation now, and of them still warming (counted at their warm-up). */
  inRotation: number
  warming: number
  /** Requests a second one warm target serves. */
  perTarget: number
  /** What the targets in rotation serve now, each at its warm-up; and all of them warm. */
  capacityRps: number
  warmRps: number
}

/** How the traffic a step moves costs the pool that receives it. */
export interface MoveCost {
  /** A new connection's first request, in requests of work (1: no extra cost). */
  handshakeCost: number
  /** The share of moved clients that reconnect in the same second, 0–1 (1: all at once). */
  spread: number
}

export const atOnce: MoveCost = {handshakeCost: 1, spread: 1}

/**
 * The pool's work in the worst second after a step from `from` to `to` (shares 0–1) of `demandRps`:
 * its new share, plus the handshakes of what moved onto it.
 */
export function stepWork(from: number, to: number, demandRps: number, cost: MoveCost): number {
  const moved = Math.max(0, to - from)
  return to * demandRps + (cost.handshakeCost - 1) * moved * demandRps * cost.spread
}

/** What the pool may be asked for, with `headroom` (0–1) of it kept back. */
export const usable = (room: Pick<PoolRoom, 'capacityRps'>, headroom: number): number => room.capacityRps * (1 - headroom)

/**
 * The largest share (0–1) a step from `from` may take the pool to, with its work within what the
 * pool serves now less the headroom (stepWork solved for `to`). Below `from` when the pool cannot
 * even carry what it has; 1 or more when demand is none.
 */
export function largestShare(from: number, demandRps: number, room: Pick<PoolRoom, 'capacityRps'>, headroom: number, cost: MoveCost): number {
  if (demandRps <= 0) return Infinity
  const extra = (cost.handshakeCost - 1) * cost.spread
  return (usable(room, headroom) / demandRps + extra * from) / (1 + extra)
}

/** Each pool's share of a split, 0–1, from its keys' weights and the pool each key sends traffic to. */
export function poolShares(weights: Record<string, number>, poolOf: (key: string) => string): Map<string, number> {
  const total = Object.values(weights).reduce((a, b) => a + b, 0)
  const shares = new Map<string, number>()
  for (const [key, w] of Object.entries(weights)) {
    const pool = poolOf(key)
    shares.set(pool, (shares.get(pool) ?? 0) + (total > 0 ? w / total : 0))
  }
  return shares
}

/** A pool's room from its targets as a port lists them: in rotation, each at its warm-up (1 when warm). */
export function roomOf(pool: string, warmths: number[], perTarget: number): PoolRoom {
  const capacity = warmths.reduce((sum, w) => sum + w, 0) * perTarget
  return {
    pool,
    inRotation: warmths.length,
    warming: warmths.filter((w) => w < 1).length,
    perTarget,
    capacityRps: capacity,
    warmRps: warmths.length * perTarget,
  }
}

export const rps = (n: number): string => `${Math.round(n).toLocaleString('en-US')} rps`

/** The room in words: "mailbox: 6 targets in rotation (2 warming) × 160 rps = 820 rps now, 960 rps warm". */
export function roomText(room: PoolRoom): string {
  const warming = room.warming > 0 ? ` (${room.warming} warming)` : ''
  const warm = room.capacityRps < room.warmRps - 0.5 ? `, ${rps(room.warmRps)} warm` : ''
  return `${room.pool}: ${room.inRotation} target${room.inRotation === 1 ? '' : 's'} in rotation${warming} × ${rps(room.perTarget)} = ${rps(room.capacityRps)} now${warm}`
}

/** Seconds between the lines a step waiting for room writes: a look every gate interval is too many lines. */
export const waitSaidEvery = 60
