import type {LiftStep} from '../actions/lift/schema.js'
import type {RampStep} from '../actions/ramp/schema.js'
import type {Runbook} from '../loader/runbook.js'

// What tune may change, and how: each climb's schedule and bake, as a few numbers per climb (how
// many steps, the curve they follow, the bake, and where an intermediate climb ends), from which
// the percentages follow. A climb is a ramp of weight onto its set, or a lift by degrees of the
// share of a traffic type let back. Everything else in the runbook stays as written.

/** A step that climbs to full traffic in steps: a ramp, or a lift with a schedule. */
export type ClimbStep = RampStep | (LiftStep & {schedule: number[]; bake: number})

/**
 * The steps tune reshapes: every ramp with a written schedule, and every lift the author wrote with a schedule (a lift at
 * once stays at once: letting a type back by degrees needs a gate per step that only the author
 * can say).
 */
export function climbSteps(runbook: Runbook): ClimbStep[] {
  // A paced ramp (`schedule: auto`) finds its steps as it runs: there is no schedule to reshape.
  return runbook.steps.filter(
    (s): s is ClimbStep => (s.action === 'ramp' && s.pace === undefined) || (s.action === 'lift' && s.schedule !== undefined && s.bake !== undefined),
  )
}

/** What the climbs are called in a sentence: "ramps", "lifts", or "ramps and lifts". */
export type ClimbsNoun = 'ramps' | 'lifts' | 'ramps and lifts'

export function climbsNoun(climbs: Array<{action: string}>): ClimbsNoun {
  const ramps = climbs.some((c) => c.action === 'ramp')
  const lifts = climbs.some((c) => c.action === 'lift')
  return ramps && lifts ? 'ramps and lifts' : lifts ? 'lifts' : 'ramps'
}

/** A climb of the runbook, as tune sees it. */
export interface RampSite {
  /** Its index in the runbook's steps. */
  index: number
  action: 'ramp' | 'lift'
  title: string
  /** The set a ramp moves weight onto, or the traffic type a lift lets back. */
  set: string
  shipped: {schedule: number[]; bake: number}
  /** Seconds between its gate's verdicts; null without a gate. */
  interval: number | null
  /**
   * A later ramp on the same set continues the climb (e.g. after a lift at half traffic), so where
   * this one ends is a waypoint the search may move; otherwise its final weight is the author's.
   */
  waypoint: boolean
  /** The site before it on the same set, whose end is where this one starts; null for the first. */
  previous: number | null
  /**
   * A ramp's set's weight before it when no earlier ramp on the set moves it (from the shipped
   * rehearsal); 0 for a lift, which skips the steps its restriction's share is already past.
   */
  startWeight: number
  /** The runbook's last climb: its last step is full traffic. */
  final: boolean
}

/**
 * How one climb is rehearsed: its bake, where it ends, and the shape of its schedule, either as
 * shipped or `steps` weights along (i/steps)^gamma from where the set stands to `end` (gamma 1 is
 * even steps; above 1, small steps first while the pool is cold; below 1, small steps last).
 */
export interface RampChoice {
  bake: number
  end: number
  shape: {kind: 'shipped'} | {kind: 'curve'; steps: number; gamma: number}
}

/** The curves tried, from small-steps-last to small-steps-first. */
export const gammas = [0.7, 1, 1.5, 2, 3]
/** Bakes of a climb without a gate are tried on this grid, from the least bake up. */
export const bakeGrid = 5

export function rampSites(runbook: Runbook, startWeights: Map<number, Record<string, number>>): RampSite[] {
  const climbs = climbSteps(runbook)
  const keyOf = (step: ClimbStep) => (step.action === 'ramp' ? `ramp:${step.set}` : `lift:${step.type}`)
  return climbs.map((step, i) => {
    const key = keyOf(step)
    const before = climbs
      .slice(0, i)
      .map((s, j) => ({s, j}))
      .filter(({s}) => keyOf(s) === key)
    const set = step.action === 'ramp' ? step.set : step.type
    return {
      index: step.index,
      action: step.action,
      title: step.title,
      set,
      shipped: {schedule: step.schedule, bake: step.bake},
      interval: step.gate?.interval ?? null,
      // A lift always ends with its type all back: only a ramp's end may be a waypoint.
      waypoint: step.action === 'ramp' && climbs.slice(i + 1).some((s) => keyOf(s) === key),
      previous: before.length === 0 ? null : before[before.length - 1].j,
      startWeight: step.action === 'ramp' ? (startWeights.get(step.index)?.[step.set] ?? 0) : 0,
      final: i === climbs.length - 1 && step.index === lastReturnIndex(runbook),
    }
  })
}

/**
 * The step that brings the last of the traffic back: the runbook's last ramp or lift, whichever
 * comes later (a type still turned away is not full traffic). Null when it has neither.
 */
export function lastReturnIndex(runbook: Runbook): number | null {
  return runbook.steps.filter((s) => s.action === 'ramp' || s.action === 'lift').at(-1)?.index ?? null
}

export function shippedChoice(site: RampSite): RampChoice {
  return {bake: site.shipped.bake, end: site.shipped.schedule[site.shipped.schedule.length - 1], shape: {kind: 'shipped'}}
}

/** A schedule from `floor` (exclusive) to `end`, or null when the choice cannot make one from there. */
export function scheduleOf(site: RampSite, choice: RampChoice, floor: number): number[] | null {
  if (choice.end <= floor || choice.end > 100) return null
  if (choice.shape.kind === 'shipped') {
    const rest = site.shipped.schedule.filter((p) => p > floor)
    return rest.length > 0 && rest[rest.length - 1] === choice.end ? rest : null
  }
  const {steps, gamma} = choice.shape
  if (steps > choice.end - floor) return null
  const schedule: number[] = []
  for (let i = 1; i <= steps; i++) {
    const p = Math.round(floor + (choice.end - floor) * (i / steps) ** gamma)
    // Whole percentages, climbing, with room left for the steps after this one.
    schedule.push(Math.min(choice.end - (steps - i), Math.max(p, (schedule[i - 2] ?? floor) + 1)))
  }
  return schedule
}

/** Every ramp's schedule under a set of choices, each starting where the one before it on its set ended; null if one cannot be made. */
export function schedulesOf(sites: RampSite[], choices: RampChoice[]): number[][] | null {
  const out: number[][] = []
  for (const [i, site] of sites.entries()) {
    const floor = site.previous === null ? site.startWeight : choices[site.previous].end
    const schedule = scheduleOf(site, choices[i], floor)
    if (!schedule) return null
    out.push(schedule)
  }
  return out
}

/** The runbook with its climbs' schedules and bakes replaced; every other step as loaded. */
export function withRamps(runbook: Runbook, sites: RampSite[], schedules: number[][], choices: RampChoice[]): Runbook {
  const byIndex = new Map(sites.map((site, i) => [site.index, {schedule: schedules[i], bake: choices[i].bake}]))
  return {
    ...runbook,
    steps: runbook.steps.map((step) =>
      (step.action === 'ramp' || step.action === 'lift') && byIndex.has(step.index) ? {...step, ...byIndex.get(step.index)!} : step,
    ),
  }
}

/** What a ramp costs in seconds before full traffic: every bake, but the final ramp's last one comes after it. */
export function costOf(site: RampSite, schedule: number[], bake: number): {beforeFull: number; total: number} {
  const total = schedule.length * bake
  return {beforeFull: site.final ? total - bake : total, total}
}

/**
 * The least bake of a climb: a ramp's is the TTL (`minBake`), since a weight reaches every client
 * only after one; a lift's change is HAProxy's at once, so a second.
 */
export const leastBake = (site: RampSite, minBake: number): number => (site.action === 'lift' ? 1 : minBake)

/** The choices the search tries for one climb: shapes and step counts, bakes from the least up to the shipped bake, and moved waypoints. */
export function choicesFor(site: RampSite, ttlBake: number): RampChoice[] {
  const shippedEnd = site.shipped.schedule[site.shipped.schedule.length - 1]
  const minBake = leastBake(site, ttlBake)
  const maxBake = Math.max(site.shipped.bake, minBake)
  // A gate judges on its interval, so a bake between two verdicts lasts until the next one: a
  // gated ramp's bakes are whole intervals, and say how long a step really holds.
  const grid = site.interval ?? bakeGrid
  const bakes: number[] = []
  for (let b = Math.ceil(minBake / grid) * grid; b < maxBake; b += grid) bakes.push(b)
  bakes.push(maxBake)
  const ends = site.waypoint
    ? [...new Set([0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.2].map((k) => Math.round(shippedEnd * k)))].filter((e) => e >= 1 && e < 100)
    : [shippedEnd]
  const maxSteps = Math.min(10, Math.max(site.shipped.schedule.length + 2, 6))
  const out: RampChoice[] = []
  for (const bake of bakes) {
    for (const end of ends) {
      if (end === shippedEnd) out.push({bake, end, shape: {kind: 'shipped'}})
      for (let steps = 1; steps <= maxSteps; steps++)
        for (const gamma of steps === 1 ? [1] : gammas) out.push({bake, end, shape: {kind: 'curve', steps, gamma}})
    }
  }
  return out
}

/** A gentle stand-in for a ramp not yet tuned: steps of at most 10% (or as many as shipped) at the shipped bake. */
export function scaffoldChoice(site: RampSite, floor: number, ttlBake: number): RampChoice {
  const end = site.shipped.schedule[site.shipped.schedule.length - 1]
  const steps = Math.max(site.shipped.schedule.length, Math.ceil((end - floor) / 10))
  return {bake: Math.max(site.shipped.bake, leastBake(site, ttlBake)), end, shape: {kind: 'curve', steps, gamma: 1}}
}
