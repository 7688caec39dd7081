import {describeGate} from '../runbook/gate.js'
import {InputError} from '../errors.js'
import {metricUnits} from '../ports/control-plane.js'
import type {GateVerdict} from '../ports/io.js'
import {parseRunbook} from '../loader/load-runbook.js'
import type {Runbook} from '../loader/runbook.js'
import type {StepLoad} from './overreach.js'
import {climbSteps, climbsNoun, rampSites, type ClimbsNoun, type RampSite} from './ramps.js'
import {Evaluator, robustnessVariants, searchRamps, type Robustness, type SearchEvent, type Standing} from './search.js'
import {allowsSlowMinority, groundOf, runTrial, tuneSlowMinority, type Ground, type SlowMinority, type Trial, type Variant} from './trial.js'
import {aliasProblems, editRamps} from './yaml.js'

/** What "time to full traffic" means, said once for --help, the report and --json alike. */
export const fullTrafficDefinition =
  "seconds of rehearsal time from the runbook's start to the change that brings the last traffic back: the last step of its last ramp (the final weight; clients see it within one TTL), or of its last lift (the whole type let back) where that comes later"

export interface TuneSettings {
  /** How many seeds each candidate must pass: the scenario's own, and the ones after it. */
  seeds: number
  /** Demand off by this many percent each way, as well as as given. */
  demandMarginPercent: number
  /** Rehearse with a slow tenth of the servers too, where the scenario has a pool of ten or more. */
  slowMinority: boolean
  /** A scenario and setup to rehearse against instead of the runbook's own, as `run --dry-run` takes them. */
  scenario?: string
  setup?: string
}

export interface TunedStep {
  /** The step's 0-based index in the runbook. */
  index: number
  action: 'ramp' | 'lift'
  title: string
  /** The set a ramp moves weight onto, or the type a lift lets back. */
  set: string
  schedule: number[]
  bake: number
  before: {schedule: number[]; bake: number}
  /** Its change nearest what the pool it moves traffic onto served then; null for a lift, or a pool with no capacity (a sorry pool). */
  tightestStep: TightestStep | null
}

/**
 * A tuned ramp step's change that came nearest what its receiving pool served at that moment,
 * across every rehearsal of the tuned runbook (src/tune/overreach.ts): the step an operator would
 * check first. tune takes no candidate with a change past it.
 */
export type TightestStep = StepLoad & {at: {seed: number; demandPercent: number; slowMinority: boolean}}

/** How far a gate stayed from its threshold across every robustness rehearsal of the tuned runbook. */
export interface GateMargin {
  /** The step's 0-based index in the runbook. */
  index: number
  title: string
  gate: string
  metric: GateVerdict['metric']
  threshold: number
  unit: string
  /** The value nearest the threshold (the highest, or the lowest for healthy-targets); null if no verdict had data. */
  worst: number | null
  /** How far the worst value is inside the threshold, in the gate's unit. */
  margin: number | null
  /** Where the worst value was measured. */
  at: {seed: number; demandPercent: number; slowMinority: boolean; context: string} | null
  verdicts: number
}

export interface VariantOutcome {
  seed: number
  demandPercent: number
  /** Rehearsed with tune's slow minority. */
  slowMinority: boolean
  passed: boolean
  outcome: string
  secondsToFullTraffic: number | null
  reason: string | null
}

export interface TuneResult {
  runbook: string
  scenario: string
  setup: string
  definition: string
  /** What it tuned, as a sentence names them: said even when no candidate passed and steps is empty. */
  climbs: ClimbsNoun
  secondsToFullTraffic: {before: number | null; after: number | null}
  /** How much sooner, as a share of before. */
  soonerPercent: number | null
  /** The tuned ramp steps; empty when no candidate passed every variant. */
  steps: TunedStep[]
  gates: GateMargin[]
  /** The same for the shipped runbook across the same variants; a negative margin is a verdict that failed. */
  shippedGates: GateMargin[]
  /** The proposed ramp steps as YAML, ready to paste over the runbook's own. */
  yaml: string | null
  /** The whole runbook, tuned: what --write saves; null unless it passed every rehearsal as written. */
  text: string | null
  minBake: number
  robustness: {
    seeds: number[]
    demandPercents: number[]
    /** The slow minority rehearsed on the first seed at each demand; null where the scenario has no pool of ten servers or more, or --no-slow-minority. */
    slowMinority: SlowMinority | null
    /** The shipped runbook across the same variants. */
    shipped: VariantOutcome[]
    /** The tuned runbook across them, rehearsed from its text as --write saves it. */
    tuned: VariantOutcome[]
  }
  /** Rehearsals run in all; passes of the search; a whole rehearsal's cost, measured on the shipped runbook; wall seconds. */
  search: {rehearsals: number; passes: number; millisecondsPerRehearsal: number; seconds: number}
}

export type TuneEvent = SearchEvent | {type: 'phase'; message: string}

const demandPercent = (factor: number): number => Math.round(factor * 1000) / 10

/** Tunes a runbook's ramps in rehearsal (see search.ts for how), and proves the result from its own text. */
export async function tuneRunbook(runbook: Runbook, settings: TuneSettings, onEvent: (event: TuneEvent) => void = () => {}): Promise<TuneResult> {
  const started = performance.now()
  if (runbook.source.kind !== 'file') throw new InputError(`${runbook.file}: tune edits a runbook file`)
  const text = runbook.source.text
  const climbs = climbSteps(runbook)
  if (climbs.length === 0) throw new InputError(`${runbook.locate(['steps'])}: ${runbook.name} has no ramp step, or lift with a schedule, to tune`)
  const shared = aliasProblems(
    text,
    climbs.map((s) => s.index),
  )
  if (shared.length > 0) throw new InputError(shared.map((p) => `${runbook.locate(p.path)}: ${p.message}`))

  // Said only once the first rehearsal has settled the scenario and setup: a wrong one is one line.
  const {ground} = await groundOf(runbook, {scenario: settings.scenario, setup: settings.setup})
  const robustness: Robustness = {
    seeds: Array.from({length: settings.seeds}, (_, i) => ground.scenario.seed + i),
    demandFactors: settings.demandMarginPercent === 0 ? [1] : [1 - settings.demandMarginPercent / 100, 1, 1 + settings.demandMarginPercent / 100],
    slowMinority: settings.slowMinority && allowsSlowMinority(ground.scenario) ? tuneSlowMinority : null,
  }
  const variants = robustnessVariants(robustness)
  onEvent({type: 'phase', message: `rehearsing ${runbook.name} as shipped, ${variants.length === 1 ? 'once' : `${variants.length} times`}`})

  const measuring = performance.now()
  const shippedTrials = await allVariants(runbook, ground, variants)
  // The first rehearsal also loads and compiles the simulator; these are what the search will pay.
  const milliseconds = (performance.now() - measuring) / variants.length
  onEvent({
    type: 'phase',
    message: `the shipped ${climbsNoun(climbs)} pass ${shippedTrials.filter((t) => t.passed).length} of ${variants.length} ${variants.length === 1 ? 'rehearsal' : 'rehearsals'}; one takes ${Math.round(milliseconds)} ms`,
  })
  const nominal = shippedTrials[0]
  const shipped: Standing = {
    score: nominal.passed && nominal.secondsToFullTraffic !== null ? {secondsToFullTraffic: nominal.secondsToFullTraffic, seconds: nominal.seconds} : null,
    robust: shippedTrials.every((t) => t.passed),
  }

  const sites = rampSites(runbook, nominal.startWeights)
  // A weight change reaches every client only after one TTL: the record's, and the one the rehearsal models.
  const minBake = Math.max(runbook.targets.dns?.ttl ?? 0, ground.scenario.dns.ttl, 1)
  const evaluator = new Evaluator(runbook, ground, sites, robustness, onEvent)
  const found = await searchRamps(evaluator, sites, minBake, shipped)

  const base = {
    runbook: runbook.name,
    scenario: ground.scenario.name,
    setup: ground.setup,
    definition: fullTrafficDefinition,
    climbs: climbsNoun(climbs),
    minBake,
    search: {rehearsals: found.rehearsals + 1 + variants.length, passes: found.passes, millisecondsPerRehearsal: Math.round(milliseconds), seconds: 0},
  }
  const before = shipped.score?.secondsToFullTraffic ?? null
  const shippedOutcomes = shippedTrials.map(outcomeOf)
  if (!found.choices || !found.schedules) {
    return {
      ...base,
      secondsToFullTraffic: {before, after: null},
      soonerPercent: null,
      steps: [],
      gates: [],
      shippedGates: gateMargins(runbook, shippedTrials),
      yaml: null,
      text: null,
      robustness: {
        seeds: robustness.seeds,
        demandPercents: robustness.demandFactors.map(demandPercent),
        slowMinority: robustness.slowMinority,
        shipped: shippedOutcomes,
        tuned: [],
      },
      search: {...base.search, seconds: (performance.now() - started) / 1000},
    }
  }

  const schedules = tunedSteps(
    sites,
    found.schedules,
    found.choices.map((c) => c.bake),
  )
  const edited = editRamps(text, schedules)
  onEvent({type: 'phase', message: `rehearsing the tuned runbook, as written, ${variants.length === 1 ? 'once' : `${variants.length} times`}`})
  // The proof is the text a person will save: loaded and checked as `run` would, then rehearsed.
  const tuned = parseRunbook(runbook.file, edited.text)
  const tunedTrials = await allVariants(tuned, ground, variants)
  const steps = schedules.map((step) => ({...step, tightestStep: tightestOf(step.index, tunedTrials)}))
  const after = tunedTrials[0].passed ? tunedTrials[0].secondsToFullTraffic : null
  // The search rehearsed the same ramps; should the text rehearse otherwise, it is not offered to save.
  const verified = tunedTrials.every((t) => t.passed)
  return {
    ...base,
    secondsToFullTraffic: {before, after},
    soonerPercent: before !== null && after !== null && before > 0 ? Math.round(((before - after) / before) * 1000) / 10 : null,
    steps,
    gates: gateMargins(tuned, tunedTrials),
    shippedGates: gateMargins(runbook, shippedTrials),
    yaml: edited.snippet,
    text: verified ? edited.text : null,
    robustness: {
      seeds: robustness.seeds,
      demandPercents: robustness.demandFactors.map(demandPercent),
      slowMinority: robustness.slowMinority,
      shipped: shippedOutcomes,
      tuned: tunedTrials.map(outcomeOf),
    },
    search: {...base.search, rehearsals: base.search.rehearsals + variants.length, seconds: (performance.now() - started) / 1000},
  }
}

/** Every variant, run to its end: what a person is shown, not a search's early exit. */
async function allVariants(runbook: Runbook, ground: Ground, variants: Variant[]): Promise<Trial[]> {
  const trials: Trial[] = []
  for (const variant of variants) trials.push(await runTrial(runbook, ground, variant, {stopEarly: false}))
  return trials
}

function outcomeOf(trial: Trial): VariantOutcome {
  return {
    seed: trial.variant.seed,
    demandPercent: demandPercent(trial.variant.demandFactor),
    slowMinority: trial.variant.slowMinority !== null,
    passed: trial.passed,
    outcome: trial.outcome,
    secondsToFullTraffic: trial.secondsToFullTraffic,
    reason: trial.reason,
  }
}

function tunedSteps(sites: RampSite[], schedules: number[][], bakes: number[]): TunedStep[] {
  return sites.map((site, i) => ({
    index: site.index,
    action: site.action,
    title: site.title,
    set: site.set,
    schedule: schedules[i],
    bake: bakes[i],
    before: site.shipped,
    tightestStep: null,
  }))
}

/** The step's change that asked the most of its pool for what the pool served then, across the trials. */
function tightestOf(step: number, trials: Trial[]): TightestStep | null {
  let tightest: TightestStep | null = null
  for (const trial of trials)
    for (const load of trial.loads) {
      if (load.step !== step) continue
      if (tightest !== null && load.workRps / load.capacityRps <= tightest.workRps / tightest.capacityRps) continue
      const {seed, demandFactor, slowMinority} = trial.variant
      tightest = {...load, at: {seed, demandPercent: demandPercent(demandFactor), slowMinority: slowMinority !== null}}
    }
  return tightest
}

/** Each gate of the runbook, with the verdict nearest its threshold across every trial. */
export function gateMargins(runbook: Runbook, trials: Trial[]): GateMargin[] {
  const out: GateMargin[] = []
  for (const step of runbook.steps) {
    if (!('gate' in step) || !step.gate) continue
    const gate = step.gate
    const atLeast = gate.metric === 'healthy-targets'
    // The worst verdict is the one nearest its bound: a relative gate's bound moves with its baseline.
    let worst: {value: number; margin: number; trial: Trial; verdict: GateVerdict} | null = null
    let count = 0
    for (const trial of trials)
      for (const verdict of trial.verdicts) {
        if (verdict.step !== step.index) continue
        count++
        if (verdict.value === null) continue
        // A counts judge's looks before it decides are its bake going on, not verdicts on the
        // step; its bound is the baseline's rate and its margin, as a relative threshold's is.
        if (verdict.counts && verdict.outcome === 'inconclusive') continue
        const bound = verdict.bound ?? (verdict.counts && verdict.baseline?.value != null ? verdict.baseline.value + gate.threshold : gate.threshold)
        const margin = atLeast ? verdict.value - bound : bound - verdict.value
        if (!worst || margin < worst.margin) worst = {value: verdict.value, margin, trial, verdict}
      }
    out.push({
      index: step.index,
      title: step.title,
      gate: describeGate(gate),
      metric: gate.metric,
      threshold: gate.threshold,
      unit: metricUnits[gate.metric],
      worst: worst?.value ?? null,
      margin: worst?.margin ?? null,
      at: worst
        ? {
            seed: worst.trial.variant.seed,
            demandPercent: demandPercent(worst.trial.variant.demandFactor),
            slowMinority: worst.trial.variant.slowMinority !== null,
            context: worst.verdict.context,
          }
        : null,
      verdicts: count,
    })
  }
  return out
}
