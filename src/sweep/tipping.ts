import type {Scenario} from '../sim/scenario/schema.js'
import type {Axis} from './grid.js'
import type {SweepParam} from './params.js'

/**
 * Where a line of cells along the x axis changes between stuck and not stuck, found first between
 * neighbouring grid points and then by bisection between them, so the edge is known more finely
 * than the grid's step.
 */

/** One change along a line: `holds` is the nearest value found not stuck, `stuck` the nearest stuck. */
export interface Transition {
  holds: number
  stuck: number
  /** True when the pool holds below and is stuck above (it tips); false when it comes out of a stuck stretch. */
  into: boolean
}

/** One line along x at a fixed y (null without a y axis). */
export interface LineEdges {
  y: number | null
  startsStuck: boolean
  endsStuck: boolean
  transitions: Transition[]
}

/** A bisection in progress: the pool's state at `lo` differs from its state at `hi`. */
export interface Bracket {
  lo: number
  hi: number
  loStuck: boolean
}

/** Bisection stops at a gap of one for whole numbers, and at 1/32 of the grid's step otherwise. */
export function bisectionTolerance(axis: Axis): number {
  if (axis.param.integer) return 1
  return (axis.to - axis.from) / Math.max(1, axis.values.length - 1) / 32
}

export function converged(b: Bracket, axis: Axis): boolean {
  return b.hi - b.lo <= bisectionTolerance(axis) * (1 + 1e-9)
}

/** Halfway, computed without overflow (lo + hi overflows near the largest doubles). */
export function midpoint(b: Bracket, axis: Axis): number {
  const half = b.lo + (b.hi - b.lo) / 2
  return axis.param.integer ? Math.floor(half) : Number(half.toPrecision(12))
}

/**
 * Bisection rounds at the most: a double has 53 bits, so more rounds cannot narrow a bracket
 * further; a bracket whose midpoint rounds to one of its ends stops there too.
 */
export const maxBisectionRounds = 64

/** Whether the midpoint no longer lies strictly inside the bracket: bisecting it again finds nothing new. */
export function stalled(b: Bracket, axis: Axis): boolean {
  const mid = midpoint(b, axis)
  return !(mid > b.lo && mid < b.hi)
}

/** Narrows the bracket with the state found at its midpoint. */
export function narrow(b: Bracket, mid: number, midStuck: boolean): Bracket {
  return midStuck === b.loStuck ? {...b, lo: mid} : {...b, hi: mid}
}

/** Brackets between neighbouring grid points whose states differ. */
export function gridBrackets(xs: number[], stuck: boolean[]): Bracket[] {
  const out: Bracket[] = []
  for (let i = 0; i + 1 < xs.length; i++) if (stuck[i] !== stuck[i + 1]) out.push({lo: xs[i], hi: xs[i + 1], loStuck: stuck[i]})
  return out
}

export function transitionOf(b: Bracket): Transition {
  return b.loStuck ? {holds: b.hi, stuck: b.lo, into: false} : {holds: b.lo, stuck: b.hi, into: true}
}

/** The figures behind a line's sentence, as --json gives them. */
export function tippingFigures(line: LineEdges, x: Axis): {holdsUpTo: number | null; stuckFrom: number | null} {
  const first = line.transitions[0]
  if (line.startsStuck) return {holdsUpTo: null, stuckFrom: x.from}
  if (!first) return {holdsUpTo: x.to, stuckFrom: null}
  return {holdsUpTo: first.holds, stuckFrom: first.stuck}
}

/**
 * The line in words: `no-guard tips into a stuck pool when more than 5 of 20 servers break at
 * 1,500 rps`, followed by what happens further along the axis, if anything changes again.
 */
export function tippingSentence(setup: string, line: LineEdges, x: Axis, y: SweepParam | null, scenario: Scenario): string {
  const p = x.param
  const at = y && line.y !== null ? ` at ${y.say(line.y, scenario)}` : ''
  const [first, ...rest] = line.transitions
  if (!first) {
    return line.startsStuck
      ? `${setup} is stuck across the whole sweep${at}, from ${p.say(x.from, scenario)} to ${p.say(x.to, scenario)}.`
      : `${setup} never tips into a stuck pool within the sweep${at}: it holds up to ${p.say(x.to, scenario)}.`
  }
  const head = first.into
    ? `${setup} tips into a stuck pool when ${p.above(first.holds, scenario)}${at}`
    : `${setup} is stuck${at} up to ${p.say(first.stuck, scenario)} and holds from ${p.say(first.holds, scenario)}`
  const next = rest[0]
  if (!next) return `${head}.`
  const then = next.into ? `it tips again when ${p.above(next.holds, scenario)}` : `from ${p.say(next.holds, scenario)} it holds again`
  const more = rest.length > 1 ? `, and changes ${rest.length - 1} more time${rest.length > 2 ? 's' : ''} further along (see the map)` : ''
  return `${head}; ${then}${more}.`
}
