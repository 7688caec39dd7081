import type {Runbook} from '../loader/runbook.js'
import {choicesFor, costOf, scaffoldChoice, schedulesOf, shippedChoice, withRamps, type RampChoice, type RampSite} from './ramps.js'
import {runTrial, type Ground, type SlowMinority, type Trial, type Variant} from './trial.js'

// The search: coordinate descent over the ramps, one ramp at a time with the others held, each
// ramp's choices tried cheapest first. A choice is rehearsed once on the nominal case; only one
// that beats the best so far is rehearsed across the robustness set, which stops at its first
// miss (demand up first, where a ramp fails). A ramp's time is known before it is rehearsed (its
// steps times its bake), so the first choice whose predicted time cannot beat the best ends that
// ramp's turn.

export interface Robustness {
  seeds: number[]
  demandFactors: number[]
  /** Rehearsed on the first seed at the scenario's demand, where it has a pool to make slow; null: not. */
  slowMinority: SlowMinority | null
}

/**
 * The variants a candidate must pass: the nominal case first, then demand off each way, then the
 * slow minority, then the other seeds.
 */
export function robustnessVariants(r: Robustness): Variant[] {
  const [first, ...others] = r.seeds
  const off = r.demandFactors.filter((f) => f !== 1)
  const slow = r.slowMinority
  return [
    {seed: first, demandFactor: 1, slowMinority: null},
    ...off.map((f) => ({seed: first, demandFactor: f, slowMinority: null})),
    ...(slow === null ? [] : [{seed: first, demandFactor: 1, slowMinority: slow}]),
    ...others.flatMap((seed) => [...off, 1].map((demandFactor) => ({seed, demandFactor, slowMinority: null}))),
  ]
}

/** How soon a candidate's nominal rehearsal reaches full traffic, and how long the whole runbook takes (seconds from its start). */
export interface Score {
  secondsToFullTraffic: number
  seconds: number
}

/** A candidate rehearsed: its nominal rehearsal and score, and whether it passed every variant (null: not tried, as it could not win). */
export interface Evaluation {
  nominal: Trial
  score: Score | null
  robust: boolean | null
  /** The first variant it failed, when it failed one. */
  failure: Trial | null
  failedStep: number | null
}

export type SearchEvent =
  | {type: 'rehearsal'; count: number}
  | {type: 'ramp'; pass: number; site: RampSite; tried: number; best: {schedule: number[]; bake: number} | null; score: Score | null}
  /** A ramp left for the next pass: the run misses where another ramp is to blame. */
  | {type: 'ramp-deferred'; pass: number; site: RampSite; failedStep: number; before: boolean}

export interface SearchResult {
  choices: RampChoice[] | null
  schedules: number[][] | null
  score: Score | null
  rehearsals: number
  passes: number
}

const better = (a: Score, b: Score | null): boolean =>
  b === null || a.secondsToFullTraffic < b.secondsToFullTraffic || (a.secondsToFullTraffic === b.secondsToFullTraffic && a.seconds < b.seconds)

/** What the search needs to know of a candidate: its score, whether it passed everywhere, and where it first missed if known. */
export type Standing = Pick<Evaluation, 'score' | 'robust'> & {failedStep?: number | null}

/** What the search asks of its rehearsals: a candidate judged, and progress told. */
export interface Judge {
  readonly rehearsals: number
  evaluate(schedules: number[][], choices: RampChoice[], toBeat: Score | null): Promise<Standing>
  report(event: SearchEvent): void
}

/** Rehearses candidates, each at most once per variant. */
export class Evaluator implements Judge {
  rehearsals = 0
  private readonly cache = new Map<string, Evaluation>()
  private readonly variants: Variant[]

  constructor(
    private readonly runbook: Runbook,
    private readonly ground: Ground,
    private readonly sites: RampSite[],
    robustness: Robustness,
    readonly report: (event: SearchEvent) => void,
  ) {
    this.variants = robustnessVariants(robustness)
  }

  private async trial(candidate: Runbook, variant: Variant): Promise<Trial> {
    this.rehearsals++
    const trial = await runTrial(candidate, this.ground, variant, {stopEarly: true})
    this.report({type: 'rehearsal', count: this.rehearsals})
    // Let a progress display draw between rehearsals: each one is a run of microtasks.
    await new Promise((resolve) => setImmediate(resolve))
    return trial
  }

  /** Rehearses a candidate on the nominal case and, if it beats `toBeat`, on every other variant until one fails. */
  async evaluate(schedules: number[][], choices: RampChoice[], toBeat: Score | null): Promise<Evaluation> {
    const key = JSON.stringify(schedules.map((s, i) => [s, choices[i].bake]))
    let evaluation = this.cache.get(key)
    const candidate = withRamps(this.runbook, this.sites, schedules, choices)
    if (!evaluation) {
      const nominal = await this.trial(candidate, this.variants[0])
      const score =
        nominal.passed && nominal.secondsToFullTraffic !== null ? {secondsToFullTraffic: nominal.secondsToFullTraffic, seconds: nominal.seconds} : null
      evaluation = {nominal, score, robust: score ? null : false, failure: score ? null : nominal, failedStep: score ? null : nominal.failedStep}
      this.cache.set(key, evaluation)
    }
    if (evaluation.robust === null && evaluation.score && better(evaluation.score, toBeat)) {
      evaluation.robust = true
      for (const variant of this.variants.slice(1)) {
        const trial = await this.trial(candidate, variant)
        if (!trial.passed) {
          evaluation.robust = false
          evaluation.failure = trial
          evaluation.failedStep = trial.failedStep
          break
        }
      }
    }
    return evaluation
  }
}

/**
 * Finds the ramps that reach full traffic soonest while every variant passes. Pass 1 tunes the
 * ramps in order with the later ones on a gentle scaffold (so a failure is this ramp's doing, not
 * a later one's); later passes go round again with the others at their best, until a pass changes
 * nothing.
 */
export async function searchRamps(evaluator: Judge, sites: RampSite[], minBake: number, shipped: Standing | null, maxPasses = 4): Promise<SearchResult> {
  const shippedChoices = sites.map(shippedChoice)
  let best: Best | null = shipped?.robust && shipped.score ? {choices: shippedChoices, score: shipped.score} : null
  let current = shippedChoices
  let passes = 0
  for (let pass = 1; pass <= maxPasses; pass++) {
    passes = pass
    let changed = false
    for (const r of sites.keys()) {
      if (pass === 1) {
        const held = withScaffold(sites, current, r, minBake)
        // A miss is charged to the last ramp before it. If the ramps as they stand miss after a
        // later ramp has begun, or before this one, this ramp's choices are judged by another's
        // failure: it waits for the next pass, when every ramp has had its turn.
        const heldSchedules = schedulesOf(sites, held)
        const probe = heldSchedules ? await evaluator.evaluate(heldSchedules, held, null) : null
        const charged = probe && !probe.robust && typeof probe.failedStep === 'number' ? chargedTo(sites, probe.failedStep) : r
        if (charged !== r) {
          evaluator.report({type: 'ramp-deferred', pass, site: sites[r], failedStep: probe!.failedStep!, before: charged < r})
          continue
        }
        // Against the scaffold, the fastest ramp that passes is what counts, not the best overall.
        const found = await tuneOne(evaluator, sites, held, r, minBake, pass, null)
        if (found) current = current.map((c, i) => (i === r ? found.choices[r] : c))
        continue
      }
      const found = await tuneOne(evaluator, sites, current, r, minBake, pass, best)
      if (found && (best === null || better(found.score, best.score))) {
        best = found
        current = found.choices
        changed = true
      }
    }
    if (pass === 1) {
      const schedules = schedulesOf(sites, current)
      const evaluation = schedules ? await evaluator.evaluate(schedules, current, best?.score ?? null) : null
      if (evaluation?.robust && evaluation.score && (best === null || better(evaluation.score, best.score))) {
        best = {choices: current, score: evaluation.score}
        changed = true
      }
      current = best?.choices ?? current
    }
    if (!changed && pass > 1) break
  }
  const schedules = best ? schedulesOf(sites, best.choices) : null
  return {choices: best?.choices ?? null, schedules, score: best?.score ?? null, rehearsals: evaluator.rehearsals, passes}
}

/** The ramp whose step is the last to start at or before `step`; -1 when the step comes before every ramp. */
function chargedTo(sites: RampSite[], step: number): number {
  let charged = -1
  for (const [i, site] of sites.entries()) if (site.index <= step) charged = i
  return charged
}

interface Best {
  choices: RampChoice[]
  score: Score
}

/** The choices with every ramp after `r` on its scaffold, each from where the one before it on its set ends. */
function withScaffold(sites: RampSite[], choices: RampChoice[], r: number, minBake: number): RampChoice[] {
  const out = [...choices]
  for (let i = r + 1; i < sites.length; i++) {
    const site = sites[i]
    const floor = site.previous === null ? site.startWeight : out[site.previous].end
    out[i] = scaffoldChoice(site, floor, minBake)
  }
  return out
}

/**
 * Tunes ramp `r` with the others held: its choices cheapest first, until none left can beat the
 * best (`overall`, or the best found in this turn).
 */
async function tuneOne(
  evaluator: Judge,
  sites: RampSite[],
  held: RampChoice[],
  r: number,
  minBake: number,
  pass: number,
  overall: Best | null,
): Promise<Best | null> {
  const site = sites[r]
  const options = choicesFor(site, minBake).flatMap((choice) => {
    const choices = held.map((c, i) => (i === r ? choice : c))
    const schedules = schedulesOf(sites, choices)
    // Costs of every ramp: a moved waypoint changes where the next ramp on the set starts.
    return schedules ? [{choice, choices, schedules, cost: costsOf(sites, schedules, choices)}] : []
  })
  // Cheapest first; at equal time, fewer changes, then the waypoint nearest the author's.
  const shippedEnd = site.shipped.schedule[site.shipped.schedule.length - 1]
  options.sort(
    (a, b) =>
      a.cost.beforeFull - b.cost.beforeFull ||
      a.cost.total - b.cost.total ||
      a.schedules[r].length - b.schedules[r].length ||
      Math.abs(a.choice.end - shippedEnd) - Math.abs(b.choice.end - shippedEnd),
  )
  let found: (Best & {schedule: number[]}) | null = null
  let toBeat: Score | null = overall?.score ?? null
  let anchor = overall ? costsOf(sites, schedulesOf(sites, overall.choices)!, overall.choices) : null
  let tried = 0
  const seen = new Set<string>()
  for (const option of options) {
    const key = JSON.stringify(option.schedules.map((s, i) => [s, option.choices[i].bake]))
    if (seen.has(key)) continue
    seen.add(key)
    if (toBeat && anchor) {
      // What this option would score if the rest of the run takes as long as it did for the best.
      const predicted = {
        secondsToFullTraffic: toBeat.secondsToFullTraffic - anchor.beforeFull + option.cost.beforeFull,
        seconds: toBeat.seconds - anchor.total + option.cost.total,
      }
      if (!better(predicted, toBeat)) break
    }
    tried++
    const evaluation = await evaluator.evaluate(option.schedules, option.choices, toBeat)
    if (evaluation.robust && evaluation.score && better(evaluation.score, toBeat)) {
      found = {choices: option.choices, score: evaluation.score, schedule: option.schedules[r]}
      toBeat = evaluation.score
      anchor = option.cost
    }
    // The rehearsal up to this ramp's first step is the same whatever this ramp does: a miss
    // before it is every choice's miss.
    if (evaluation.robust === false && typeof evaluation.failedStep === 'number' && evaluation.failedStep < site.index) break
  }
  evaluator.report({type: 'ramp', pass, site, tried, best: found ? {schedule: found.schedule, bake: found.choices[r].bake} : null, score: found?.score ?? null})
  return found
}

function costsOf(sites: RampSite[], schedules: number[][], choices: RampChoice[]): {beforeFull: number; total: number} {
  return sites.reduce(
    (sum, s, i) => {
      const c = costOf(s, schedules[i], choices[i].bake)
      return {beforeFull: sum.beforeFull + c.beforeFull, total: sum.total + c.total}
    },
    {beforeFull: 0, total: 0},
  )
}
