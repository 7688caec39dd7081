import type {Target} from '../ports/control-plane.js'
import {roomOf, roomText, rps, usable} from './room.js'

// `batch: auto` for a cycle: the same room rule as a paced ramp, from the other side. A ramp asks
// how much more a pool can take; a cycle asks how many targets it can take out and still carry
// what it carries now.

/** What taking targets out leaves: the room of those left in rotation, and the words for it. */
export function roomLeft(pool: string, inRotation: Target[], takenOut: Set<string>, perTarget: number) {
  return roomOf(
    pool,
    inRotation.filter((t) => !takenOut.has(t.id)).map((t) => t.warmth ?? 1),
    perTarget,
  )
}

export interface AutoBatch {
  batch: Target[]
  why: string
}

/**
 * The largest batch from `candidates` (in the order the cycle takes them: those out of rotation
 * first) that leaves the targets in rotation able to carry `demandRps` with `headroom` (0–1) of
 * them kept back. Targets already out of rotation cost nothing to take. At most `most` targets,
 * and at most `budgetLeft` of them from rotation. An empty batch says, in numbers, why.
 */
export function largestBatch(
  pool: string,
  candidates: Target[],
  inRotation: Target[],
  demandRps: number,
  perTarget: number,
  headroom: number,
  most: number,
  budgetLeft: number,
): AutoBatch {
  const rotating = new Set(inRotation.map((t) => t.id))
  const taken = new Set<string>()
  const batch: Target[] = []
  let fromRotation = 0
  for (const t of candidates) {
    if (batch.length >= most) break
    if (rotating.has(t.id)) {
      if (fromRotation >= budgetLeft) continue
      taken.add(t.id)
      if (usable(roomLeft(pool, inRotation, taken, perTarget), headroom) < demandRps) {
        taken.delete(t.id)
        continue
      }
      fromRotation++
    }
    batch.push(t)
  }
  const words = (room: ReturnType<typeof roomOf>) =>
    `${roomText(room)}, against ${rps(demandRps)} of demand: ${rps(usable(room, headroom))} with ${Math.round(headroom * 100)}% headroom`
  if (batch.length > 0) return {batch, why: `${batch.length} out leaves ${words(roomLeft(pool, inRotation, taken, perTarget))}`}
  const next = candidates.find((t) => rotating.has(t.id))
  if (budgetLeft <= 0 || next === undefined) return {batch, why: 'the disruption budget has no room for a target from rotation now'}
  return {batch, why: `one more out would leave ${words(roomLeft(pool, inRotation, new Set([next.id]), perTarget))}`}
}
