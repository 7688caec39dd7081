import type {RunResult} from '../engine/engine.js'
import type {GateVerdict} from '../ports/io.js'
import {formatMetric, groupedVerdictLines} from '../format.js'
import type {WeightMap} from '../ports/control-plane.js'
import type {SimulationRecord} from '../sim/record.js'
import type {Scenario} from '../sim/scenario/schema.js'
import type {FaultWindow} from '../sim/fault-window.js'
import {fullServiceSince, type RunSummary} from '../sim/summary.js'
import type {RollbackAfterRun} from '../way-back/undo-run.js'
import {renderTerminalChart, stepMarkers, type ChartPanel} from './chart.js'
import {chartSeries, inRotationLabel, resolutionNote} from './simulation.js'
import {escapeXml, renderSvg} from './svg.js'
import {htmlPage, inlineSvg, verdictCell} from './html.js'
import {rollbackHow, rollbackLine} from './rollback.js'
import {rollbackFigures, type RollbackFigures} from '../drill/rollback-figures.js'
import {perSecond, simTimeline} from '../drill/timeline.js'
import {fullServiceWindow} from '../drill/report-card.js'
import {rehearsalOutcome, singleActionOutcome, stoppedWords, type OutcomeFacts} from './outcome.js'

/**
 * What a rehearsal did: the engine's result and the simulated fleet's record around it. The
 * rehearsal (src/wiring/rehearsal.ts) fills it in; everything here draws it.
 */
export interface Rehearsal {
  run: RunResult
  scenario: Scenario
  setup: string
  startAt: number
  /** Scenario seconds at which the runbook finished. */
  endAt: number
  window: FaultWindow | null
  record: SimulationRecord
  summary: RunSummary
  /** Full service at the end of the rehearsal, held to the end. */
  recovered: boolean
  restrictedAtEnd: string[]
  /** Share of demand turned away by restrictions in the last tick. */
  restrictedPercentAtEnd: number
  /** Every weight change the runbook made, and its rollback, when it made it: the report draws the ramp from these. */
  weights: WeightChange[]
  /** The rollback after the runbook (settings.rollback), in scenario seconds; null when none was asked for or the run was interrupted. */
  rollback: ({how: 'ramped' | 'now'} & RollbackAfterRun) | null
  /** The same rehearsal on the seeds after the scenario's (--seeds); null for one seed, or when the first was interrupted. */
  overSeeds: OverSeedsRehearsed | null
}

/** A runbook rehearsed on more seeds: with randomness drawn, each is one sample of arrivals and service times. */
export interface OverSeedsRehearsed {
  randomness: 'drawn' | 'none'
  /** Every seed, the scenario's own (the rehearsal shown) first. */
  seeds: RehearsalSeed[]
}

export interface RehearsalSeed {
  seed: number
  outcome: RunResult['outcome']
  /** Where it stopped, when it did not complete. */
  stoppedAt: {step: number; title: string; message: string} | null
  recovered: boolean
  lostPercent: number
  /** How the rehearsed rollback after it ended (--rollback); null without one. */
  rollback: RollbackAfterRun['outcome'] | null
}

/** Safe on a seed as the rehearsal's own verdict means it: completed, service at full at the end, and any rollback after it completed. */
export const safeOnSeed = (s: RehearsalSeed): boolean => s.outcome === 'completed' && s.recovered && (s.rollback === null || s.rollback === 'done')

/** The verdict over seeds in one or two lines: on how many seeds it was safe, and how each other one ended. */
export function overSeedsLines(over: OverSeedsRehearsed | null): string[] {
  if (!over) return []
  const n = over.seeds.length
  const safe = over.seeds.filter(safeOnSeed).length
  const drawn =
    over.randomness === 'drawn' ? 'arrivals and service times drawn' : 'nothing drawn (randomness: none), so a seed changes only which servers a fault breaks'
  const others = over.seeds.filter((s) => !safeOnSeed(s))
  const how = (s: RehearsalSeed): string =>
    s.outcome === 'completed'
      ? s.rollback !== null && s.rollback !== 'done'
        ? `seed ${s.seed}'s rollback ${s.rollback}`
        : `seed ${s.seed} completed with service not back to full`
      : `seed ${s.seed} ${stoppedWords[s.outcome]}${s.stoppedAt ? ` at step ${s.stoppedAt.step + 1} (${s.stoppedAt.title})` : ''}`
  const listed = others.slice(0, 4).map(how).join('; ') + (others.length > 4 ? `; and ${others.length - 4} more` : '')
  return [`Over ${n} seeds (${over.seeds[0].seed}–${over.seeds[n - 1].seed}), ${drawn}: safe on ${safe} of ${n}${others.length > 0 ? `; ${listed}` : ''}.`]
}

export interface WeightChange {
  at: number
  weights: WeightMap
  /** What the run's own steps changed (not a rollback's): the step, its weights before, and the pools as the change found them. */
  taken?: {
    step: number
    before: WeightMap
    /** Each server pool's serving capacity at that moment (ServerPool.servingCapacity), rps. */
    capacityRps: Record<string, number>
    /** The demand the split shares out then, at the mean, restrictions taken off, rps. */
    demandRps: number
  }
}

export interface RehearsalFigures {
  scenario: string
  setup: string
  startAt: number
  endAt: number
  recovered: boolean
  /** Seconds from the scenario's fix to full service held to the end; null when not recovered. */
  secondsFromFixToFull: number | null
  lostPercent: number
  peakErrorRatePercent: number
  minInRotation: number
  /** Scenario second from which service was full to the end; null when it never was. */
  fullServiceFrom: number | null
  /** Traffic types still restricted when the rehearsal ended: full service leaves them out. */
  restrictedAtEnd: string[]
  restrictedPercentAtEnd: number
  /**
   * The same three figures from the runbook's start to the end: what the runbook made of the
   * outage, apart from the outage before it began (the whole scenario's figures above).
   */
  fromStart: {lostPercent: number; peakErrorRatePercent: number; minInRotation: number}
  /** The rollback after the runbook (--rollback): what the way back cost from its start. */
  rollback: RollbackFigures | null
  /** The rehearsal on every seed of --seeds (the scenario's own first): how many were safe, and each one's end; null for one seed. */
  overSeeds: {randomness: 'drawn' | 'none'; safe: number; seeds: RehearsalSeed[]} | null
}

const round = (x: number, places = 3): number => Math.round(x * 10 ** places) / 10 ** places

export function rehearsalFigures(r: Rehearsal): RehearsalFigures {
  return {
    scenario: r.scenario.name,
    setup: r.setup,
    startAt: r.startAt,
    endAt: r.endAt,
    recovered: r.recovered,
    secondsFromFixToFull: r.recovered ? r.summary.recoveredSecondsAfterFix : null,
    lostPercent: round(r.summary.lostPercent),
    peakErrorRatePercent: round(r.summary.peakErrorRatePercent),
    minInRotation: r.summary.minInRotation,
    fullServiceFrom: r.recovered ? fullServiceSince(r.record) : null,
    restrictedAtEnd: r.restrictedAtEnd,
    restrictedPercentAtEnd: round(r.restrictedPercentAtEnd),
    fromStart: fromStartOf(r),
    rollback: rollbackOf(r),
    overSeeds: r.overSeeds && {
      randomness: r.overSeeds.randomness,
      safe: r.overSeeds.seeds.filter(safeOnSeed).length,
      seeds: r.overSeeds.seeds.map((s) => ({...s, lostPercent: round(s.lostPercent)})),
    },
  }
}

function fromStartOf(r: Rehearsal): RehearsalFigures['fromStart'] {
  const m = r.record.fromMark
  if (!m || m.minInRotation === Infinity) return {lostPercent: 0, peakErrorRatePercent: 0, minInRotation: r.summary.minInRotation}
  return {
    lostPercent: round(m.demand > 0 ? Math.max(0, ((m.demand - m.served) / m.demand) * 100) : 0),
    peakErrorRatePercent: round(m.peakErrorRate * 100),
    minInRotation: m.minInRotation,
  }
}

/**
 * The rollback's figures, read as a drill reads them (src/drill/rollback-figures.ts): a point a
 * second, the worst full-service window from its start.
 */
function rollbackOf(r: Rehearsal): RollbackFigures | null {
  if (!r.rollback) return null
  const {how, startedAt, endedAt, outcome, message, plan, verdicts} = r.rollback
  const figures = rollbackFigures(perSecond(simTimeline(r.record)), {how, startedAt, endedAt, outcome, message, plan, verdicts}, fullServiceWindow)
  return {...figures, lostPercent: round(figures.lostPercent), peakLossPercent: round(figures.peakLossPercent)}
}

/** The rollback after the runbook: how it said it would go back, how it ended, what it cost, its verdicts. */
function rollbackLines(f: RehearsalFigures): string[] {
  const r = f.rollback
  if (!r) return []
  return [
    '',
    `Rollback after the runbook (${rollbackHow(r)}): ${rollbackLine(r)}`,
    ...r.plan.map((line) => `  ${line}`),
    ...groupedVerdictLines(r.verdicts).map((l) => `  ${l}`),
  ]
}

function recoveredText(r: Rehearsal, f: RehearsalFigures): string {
  const restricted =
    f.restrictedAtEnd.length > 0 ? `; still restricted: ${f.restrictedAtEnd.join(', ')} (${f.restrictedPercentAtEnd.toFixed(1)}% of demand turned away)` : ''
  if (!f.recovered) return `no: not at full service (completed within 1% of demand) at the end${restricted}`
  if (!r.window) return `yes: at full service to the end (the scenario has no fault)${restricted}`
  const since = f.fullServiceFrom === null ? '' : ` from ${round(f.fullServiceFrom, 1)} s`
  return `yes: at full service${since} to the end, ${f.secondsFromFixToFull} s after the fix at ${r.window.to} s${restricted}`
}

/** Each step with its status, then every gate verdict: how a live run and a rehearsal both end. */
function stepsAndVerdicts(run: RunResult): string[] {
  const verdicts = run.steps.flatMap((s) => s.verdicts)
  return [
    'Steps:',
    ...run.steps.map((s) => `  ${s.index + 1}. [${s.status}] ${s.title}${s.status === 'done' || s.status === 'skipped' ? '' : `: ${s.message}`}`),
    '',
    verdicts.length > 0 ? 'Gate verdicts:' : 'Gate verdicts: none',
    ...groupedVerdictLines(verdicts).map((l) => `  ${l}`),
  ]
}

/** The end of a live run: the outcome, each step, every gate verdict, and the outcome again last. */
export function renderLiveRun(run: RunResult): string {
  const outcome = `Outcome: ${run.outcome} — ${run.message}`
  return [`Run of ${run.runbook}`, outcome, '', ...stepsAndVerdicts(run), '', outcome].join('\n')
}

/** Seconds the chart runs on after the runbook ends: enough to see a relapse begin, not the scenario's whole tail. */
const chartSettle = 120

/** The ticks the chart shows: from the start to shortly after the run ends. The figures use the whole record. */
function chartTicks(r: Rehearsal): number {
  const end = r.endAt + chartSettle
  let n = r.record.ticks
  while (n > 1 && r.record.t[n - 1] > end) n--
  return n
}

export function rehearsalPanel(r: Rehearsal): ChartPanel {
  const markers = [
    ...(r.window
      ? [
          {t: r.window.from, label: 'fault'},
          {t: r.window.to, label: 'fix'},
        ]
      : []),
    ...stepMarkers(r.run.steps),
    ...(r.rollback ? [{t: r.rollback.startedAt, label: 'rollback'}] : []),
    {t: r.endAt, label: 'end'},
  ]
  const servers = r.scenario.pools.reduce((n, p) => n + (p.servers ?? 0), 0)
  const n = chartTicks(r)
  return {
    title: `rehearsal: ${r.run.runbook} on ${r.scenario.name} · ${r.setup} (numbers mark where each step started)${resolutionNote(r.record)}`,
    t: r.record.t.subarray(0, n),
    series: [
      {label: 'completed', ...chartSeries(r.record, 'served', n)},
      {label: 'demand', ...chartSeries(r.record, 'demand', n)},
      {label: inRotationLabel, ...chartSeries(r.record, 'inRotation', n), axis: 'right'},
    ],
    leftUnit: 'rps',
    rightUnit: 'servers',
    rightMax: servers,
    markers,
  }
}

/**
 * The ramp and the gates on the same timeline as the fleet: each ramped set's share of the weight,
 * and each gate's measured value, held from one verdict to the next. Null when the run ramped and
 * measured nothing.
 */
export function rampAndGatesPanel(r: Rehearsal): ChartPanel | null {
  const n = chartTicks(r)
  const t = r.record.t.subarray(0, n)
  const stepwise = (points: Array<{at: number; value: number}>): Float64Array => {
    const values = new Float64Array(n).fill(Number.NaN)
    let k = -1
    for (let i = 0; i < n; i++) {
      while (k + 1 < points.length && points[k + 1].at <= t[i]) k++
      if (k >= 0) values[i] = points[k].value
    }
    return values
  }
  const ramped = [...new Set(r.weights.flatMap((w) => Object.keys(w.weights)))].filter((set) => new Set(r.weights.map((w) => w.weights[set])).size > 1)
  const share = (set: string) =>
    r.weights.map((w) => {
      const total = Object.values(w.weights).reduce((a, b) => a + b, 0)
      return {at: w.at, value: total > 0 ? (w.weights[set] / total) * 100 : 0}
    })
  // A gate's measurement is read against its threshold, not against the weights' 0–100%: a 2%
  // gate on that axis is a line on the floor. So gates get the right axis, scaled to the
  // threshold (twice it, or the worst value if higher), with each threshold drawn as a line.
  const verdicts = [...r.run.steps.flatMap((s) => s.verdicts), ...(r.rollback?.verdicts ?? [])].filter((v) => v.unit === '%' && v.value !== null)
  // One gate metric on that axis: a 2% error rate and a 95% healthy share need scales of their own.
  const metrics = [...new Set(verdicts.map((v) => v.metric))]
  const metric = metrics.find((m) => m !== 'healthy-targets') ?? metrics[0]
  const gates = metric === undefined ? [] : [verdicts.filter((v) => v.metric === metric)]
  const bound = (v: GateVerdict): number => v.bound ?? v.threshold
  const series: ChartPanel['series'] = [
    ...ramped.slice(0, 2).map((set) => ({label: `${set} weight`, values: stepwise(share(set))})),
    ...gates.flatMap((of) => [
      {label: `${of[0].metric} measured`, values: stepwise(of.map((v) => ({at: v.at, value: v.value!}))), axis: 'right' as const},
      {label: `${of[0].metric} threshold`, values: stepwise(of.map((v) => ({at: v.at, value: bound(v)}))), axis: 'right' as const},
    ]),
  ]
  if (series.length === 0) return null
  const measured = gates.flat()
  const rightMax =
    measured.length === 0 ? undefined : metric === 'healthy-targets' ? 100 : Math.max(2 * Math.max(...measured.map(bound)), ...measured.map((v) => v.value!))
  return {
    title: 'ramp weights (left) and gate measurements against their thresholds (right)',
    t,
    series,
    leftUnit: '%',
    leftMax: 100,
    ...(rightMax === undefined ? {} : {rightUnit: '%', rightMax}),
    markers: rehearsalPanel(r).markers,
  }
}

function outcomeFacts(r: Rehearsal, f: RehearsalFigures): OutcomeFacts {
  return {
    run: r.run,
    record: r.record,
    startAt: r.startAt,
    endAt: r.endAt,
    recovered: r.recovered,
    fullServiceFrom: f.fullServiceFrom,
    restrictedAtEnd: f.restrictedAtEnd,
    restrictedPercentAtEnd: f.restrictedPercentAtEnd,
    ...(r.rollback ? {rollbackOutcome: r.rollback.outcome} : {}),
  }
}

/**
 * The outcome in two sentences, what the runbook did from its own start and whether it would be
 * safe to run, then the verdict over seeds: the terminal's and the page's first lines alike.
 */
function rehearsalHeadline(r: Rehearsal, f: RehearsalFigures): string[] {
  const unsafeSeed = r.overSeeds !== null && !r.overSeeds.seeds.every(safeOnSeed)
  return [...rehearsalOutcome({...outcomeFacts(r, f), safeOnShownSeedOnly: unsafeSeed}), ...overSeedsLines(r.overSeeds)]
}

/** A single action rehearsed: what it does and what it did to the rehearsal fleet, then its gate verdicts, the outcome last. */
export function renderSingleAction(r: Rehearsal, action: {name: string; changesTraffic: boolean}): string {
  const outcome = singleActionOutcome(outcomeFacts(r, rehearsalFigures(r)), action)
  const verdicts = groupedVerdictLines(r.run.steps.flatMap((s) => s.verdicts))
  if (verdicts.length === 0) return outcome.join('\n')
  return [...outcome, '', 'Gate verdicts:', ...verdicts.map((l) => `  ${l}`), '', ...outcome].join('\n')
}

/**
 * The end of a rehearsal as a person reads it: the outcome first, the figures, every gate verdict,
 * the chart, and the outcome again last, where a short terminal leaves the eye.
 */
export function renderRehearsal(r: Rehearsal, options: {color: boolean; width: number}): string {
  const f = rehearsalFigures(r)
  const headline = rehearsalHeadline(r, f)
  const lines = [
    ...headline,
    '',
    `Rehearsal of ${r.run.runbook} against ${f.scenario} (setup ${f.setup}), from ${f.startAt} s to ${round(f.endAt, 1)} s`,
    `Outcome: ${r.run.outcome} — ${r.run.message}`,
    `Recovered: ${recoveredText(r, f)}`,
    `From the runbook's start at ${f.startAt} s: requests lost ${f.fromStart.lostPercent.toFixed(1)}%   peak error rate ${f.fromStart.peakErrorRatePercent.toFixed(1)}%   fewest in rotation ${f.fromStart.minInRotation}`,
    `Whole scenario, the outage before it included: requests lost ${f.lostPercent.toFixed(1)}%   peak error rate ${f.peakErrorRatePercent.toFixed(1)}%   fewest in rotation ${f.minInRotation}`,
    '',
    ...stepsAndVerdicts(r.run),
    ...rollbackLines(f),
    '',
    renderTerminalChart(rehearsalPanel(r), {color: options.color, width: options.width, height: 10}),
    '',
    ...headline,
  ]
  return lines.join('\n')
}

export function rehearsalSvg(r: Rehearsal): string {
  const ramp = rampAndGatesPanel(r)
  return renderSvg([rehearsalPanel(r), ...(ramp ? [ramp] : [])], {title: `sluice rehearsal: ${r.run.runbook}`})
}

/** A self-contained HTML page: the outcome, the chart, the figures, the steps, and the verdicts with repeats folded. */
export function rehearsalHtml(r: Rehearsal): string {
  const f = rehearsalFigures(r)
  const e = escapeXml
  const verdicts = foldVerdicts(r.run.steps.flatMap((s) => s.verdicts))
  return htmlPage(
    `sluice rehearsal: ${r.run.runbook}`,
    `${rehearsalHeadline(r, f)
      .map((l) => `<p class="outcome"><b>${e(l)}</b></p>`)
      .join('\n')}
<p>Against <b>${e(f.scenario)}</b> (setup ${e(f.setup)}), from ${f.startAt} s to ${round(f.endAt, 1)} s.</p>
<p><b>Outcome:</b> ${e(r.run.outcome)} — ${e(r.run.message)}</p>
${inlineSvg(rehearsalSvg(r))}
<table>
<tr><th>Recovered</th><td>${e(recoveredText(r, f))}</td></tr>
<tr><th></th><th>From the runbook's start (${f.startAt} s)</th><th>Whole scenario</th></tr>
<tr><th>Requests lost</th><td>${f.fromStart.lostPercent.toFixed(1)}%</td><td>${f.lostPercent.toFixed(1)}%</td></tr>
<tr><th>Peak error rate</th><td>${f.fromStart.peakErrorRatePercent.toFixed(1)}%</td><td>${f.peakErrorRatePercent.toFixed(1)}%</td></tr>
<tr><th>Fewest in rotation</th><td>${f.fromStart.minInRotation}</td><td>${f.minInRotation}</td></tr>
${f.rollback ? `<tr><th>Rollback (${e(rollbackHow(f.rollback))})</th><td>${e(rollbackLine(f.rollback))}<br>${f.rollback.plan.map(e).join('<br>')}</td></tr>` : ''}
</table>
<h2>Steps</h2>
<table><tr><th>#</th><th>Step</th><th>Status</th><th>Result</th></tr>
${r.run.steps.map((s) => `<tr><td>${s.index + 1}</td><td>${e(s.title)}</td><td>${e(s.status)}</td><td>${e(s.message)}</td></tr>`).join('\n')}
</table>
<h2>Gate verdicts</h2>
<table><tr><th>Step</th><th>From</th><th>Gate</th><th>While</th><th>Measured</th><th>Verdict</th></tr>
${verdicts.map(({first, last, count}) => `<tr><td>${last.step + 1}</td><td>${round(first.at, 1)} s</td><td>${e(last.gate)}</td><td>${e(last.context)}</td><td>${e(last.said ?? formatMetric(last.value, last.unit))}</td>${verdictCell(last.outcome, count > 1 ? ` ×${count}` : '')}</tr>`).join('\n')}
</table>`,
    `Rehearsal of ${r.run.runbook}`,
  )
}

/** Runs of the same verdict on the same gate and step, as one row: the table is read, not scrolled. */
function foldVerdicts(verdicts: GateVerdict[]): Array<{first: GateVerdict; last: GateVerdict; count: number}> {
  const rows: Array<{first: GateVerdict; last: GateVerdict; count: number}> = []
  for (const v of verdicts) {
    const row = rows.at(-1)
    if (row && row.last.step === v.step && row.last.gate === v.gate && row.last.context === v.context && row.last.outcome === v.outcome) {
      row.last = v
      row.count++
    } else rows.push({first: v, last: v, count: 1})
  }
  return rows
}
