import type {DrillReport, DrillSide, Failures, StepTimes} from '../drill/report.js'
import {fullServiceMargin, type ReportCard, type Timeline} from '../drill/report-card.js'
import {summarizeRepeats} from '../drill/repeats.js'
import {
  chanceOf,
  figureDirection,
  finerTickVerdict,
  observedOf,
  outcomeDirection,
  outcomesApart,
  runbookSpanVerdict,
  verdictOf,
  withinBand,
  type Bands,
  type Outcome,
  type FinerTickVerdict,
  type Figure,
  type Verdict,
} from '../drill/verdict.js'
import {clippedNote, renderTerminalChart, robustLeftAxis, seriesMax, stepMarkers, type ChartPanel} from './chart.js'
import {rollbackHow, rollbackLine} from './rollback.js'
import {htmlPage, htmlParagraphs, htmlTable, inlineSvg} from './html.js'
import {renderSvg} from './svg.js'
import {formatTable} from './table.js'

const rps = (v: number | null): string => (v === null ? 'no fault' : `${Math.round(v)} rps`)
const secondsText = (v: number | null): string => (v === null ? 'not back' : `${Math.round(v)} s`)

/** A predicted figure, with the least and most its seeds give (which the verdict reads it against). */
function predictedFigure(predicted: ReportCard, spread: ReportCard[], figure: Figure, show: (v: number | null) => string): string {
  const values = spread.map((c) => c[figure])
  const numbers = values.filter((v): v is number => v !== null)
  const text = show(predicted[figure])
  if (spread.length === 0) return text
  if (numbers.length === 0) return `${text} (${show(null)} in all ${spread.length} seeds)`
  const lo = Math.min(...numbers)
  const hi = Math.max(...numbers)
  const none = values.includes(null) ? `, ${show(null)} in ${spread.filter((c) => c[figure] === null).length}` : ''
  return `${text} (${show(lo) === show(hi) ? show(lo) : `${show(lo)}–${show(hi)}`}${none} over ${spread.length} seeds)`
}

/** A predicted outcome, with how often its seeds gave it. */
function predictedOutcome(predicted: ReportCard, spread: ReportCard[], o: Outcome): string {
  const text = yesNo(predicted[o])
  return spread.length === 0 ? text : `${text}; yes in ${spread.filter((c) => c[o]).length} of ${spread.length} seeds`
}

/** Each figure with how the real run differs from the prediction, and whether that is within its band. */
function rows(real: ReportCard, predicted: ReportCard, bands: Bands, interrupted: boolean, spread: ReportCard[]): string[][] {
  const diff = (a: number | null, b: number | null, unit: string, places = 0): string => {
    if (a === null || b === null) return a === b ? 'same' : 'differs'
    const d = a - b
    const text = `${d >= 0 ? '+' : ''}${d.toFixed(places)}${unit}`
    return Math.abs(d) < 10 ** -places / 2 ? 'same' : text
  }
  const band = (figure: Figure, unit: string, places = 0): string =>
    `±${bands[figure].toFixed(places)}${unit}: ${
      interrupted ? '–' : withinBand(real, predicted, bands, figure, spread) ? 'within' : `OUTSIDE, model ${figureDirection(real, predicted, figure, spread)}`
    }`
  const observed = observedOf([real])
  const apart = outcomesApart(observed, predicted, spread)
  const outcome = (o: Outcome): string[] => [
    o,
    yesNo(real[o]),
    predictedOutcome(predicted, spread, o),
    interrupted ? '–' : apart.includes(o) ? `DISAGREE, model ${outcomeDirection(observed, predicted, spread, o)}` : 'agree',
    '',
  ]
  const lost = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)}%`)
  const servers = (v: number | null) => (v === null ? 'not read' : String(v))
  return [
    [
      'served during fault',
      rps(real.servedDuringFault),
      predictedFigure(predicted, spread, 'servedDuringFault', rps),
      diff(real.servedDuringFault, predicted.servedDuringFault, ' rps'),
      band('servedDuringFault', ' rps'),
    ],
    [
      'requests lost',
      `${real.lostPercent.toFixed(1)}%`,
      predictedFigure(predicted, spread, 'lostPercent', lost),
      diff(real.lostPercent, predicted.lostPercent, ' points', 1),
      band('lostPercent', ' points', 1),
    ],
    [
      'full service after fix',
      secondsText(real.secondsToFullServiceAfterFix),
      predictedFigure(predicted, spread, 'secondsToFullServiceAfterFix', secondsText),
      diff(real.secondsToFullServiceAfterFix, predicted.secondsToFullServiceAfterFix, ' s'),
      band('secondsToFullServiceAfterFix', ' s'),
    ],
    [
      'fewest in rotation',
      servers(real.fewestInRotation),
      predictedFigure(predicted, spread, 'fewestInRotation', servers),
      diff(real.fewestInRotation, predicted.fewestInRotation, ''),
      band('fewestInRotation', ''),
    ],
    outcome('cascaded'),
    outcome('recovered'),
  ]
}

const yesNo = (b: boolean): string => (b ? 'yes' : 'no')
const figureWords: Record<Figure, string> = {
  servedDuringFault: 'served during fault',
  lostPercent: 'requests lost',
  secondsToFullServiceAfterFix: 'full service after fix',
  fewestInRotation: 'fewest in rotation',
}

/** What the two sides part on, each with the way the model errs: "requests lost (model kinder)". */
function apartWords(verdict: Extract<Verdict, {kind: 'disagree'}>): string {
  const named = [...verdict.outcomes, ...verdict.figures].map((x) => {
    const words = x === 'cascaded' || x === 'recovered' ? x : figureWords[x]
    const way = verdict.directions[x]
    return way ? `${words} (model ${way})` : words
  })
  return named.join(', ')
}
function agreement(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'interrupted':
      return 'The drill was interrupted: the figures compare the seconds it ran with the same seconds of the prediction; its outcomes are not compared.'
    case 'inconclusive':
      return `Inconclusive, ${verdict.reason}: the real run says as much about this machine as about the pool, so it is not compared.`
    case 'agree':
      return 'The drill and the simulator agree: on every outcome, and on every figure within its band.'
    case 'disagree':
      return `The drill and the simulator DISAGREE on ${apartWords(verdict)}: see the table.`
  }
}
const pct = (share: number): string => `${(share * 100).toFixed(1)}%`

/** A verdict in a few words, for a line that says more around it. */
function verdictWords(verdict: Verdict): string {
  switch (verdict.kind) {
    case 'interrupted':
      return 'not compared (interrupted)'
    case 'inconclusive':
      return 'inconclusive'
    case 'agree':
      return 'agree'
    case 'disagree':
      return `disagree on ${apartWords(verdict)}`
  }
}

/**
 * The model checked against itself: the same prediction at a tenth of the tick. A figure that
 * moves past its band there hangs on the model's time step, and so does any verdict on it.
 */
function finerTickLine(finer: FinerTickVerdict | null, against: string): string[] {
  if (finer === null) return []
  const c = finer.card
  const figures = `served ${rps(c.servedDuringFault)}, lost ${c.lostPercent.toFixed(1)}%, full service after fix ${secondsText(c.secondsToFullServiceAfterFix)}, fewest in rotation ${c.fewestInRotation ?? 'not read'}`
  const steady =
    finer.moved.length === 0
      ? "within the bands of the prediction at the scenario's tick"
      : `MOVED past its band on ${finer.moved.map((m) => (m === 'cascaded' || m === 'recovered' ? m : figureWords[m])).join(', ')}: the model's figures hang on its time step`
  return [`At a tenth of the tick (${finer.tick} s) the simulator predicts ${figures}: ${steady}; against ${against} it would ${verdictWords(finer.verdict)}.`]
}

/** What the machine did to the real run, when the verdict does not already say it. */
function machineLine(report: DrillReport): string[] {
  const {limited, verdict} = verdictOf(report)
  return limited && verdict.kind !== 'inconclusive' ? [`${limited[0].toUpperCase()}${limited.slice(1)}.`] : []
}

/**
 * Whether the drill and the simulator agree: on both outcomes, and on each figure within its band
 * (src/drill/verdict.ts). Null when that cannot be said: an interrupted drill, or a run the
 * machine limited.
 */
export function drillAgrees(report: DrillReport): boolean | null {
  const {verdict} = verdictOf(report)
  return verdict.kind === 'agree' ? true : verdict.kind === 'disagree' ? false : null
}

/** The report card: real against predicted, in the scenario's units. */
const tableHeader = ['', 'real (HAProxy)', 'predicted (simulator)', 'real − predicted', 'band']
const tableRows = (report: DrillReport): string[][] =>
  rows(report.real.card, report.predicted.card, verdictOf(report).bands, report.interrupted, report.spread?.cards ?? [])

export function drillTable(report: DrillReport): string {
  return formatTable(tableHeader, tableRows(report))
}

/** What the real clients saw fail, for reading a difference in the table. */
function failureLine(f: Failures): string {
  const parts = (Object.entries(f) as Array<[keyof Failures, number]>)
    .filter(([, v]) => Math.round(v) > 0)
    .map(([k, v]) => `${Math.round(v)} ${failureWords[k]}`)
  return `Real clients saw ${parts.length > 0 ? parts.join(', ') : 'no failures'} (scenario requests).`
}

const failureWords: Record<keyof Failures, string> = {
  timeouts: 'timeouts',
  refused: 'refused connections',
  errors: 'errors',
  rejected: '503s',
  givenUp: 'requests given up',
}

function runbookLine(label: string, side: DrillSide): string | null {
  return side.runbook ? `${label}: ${side.runbook.outcome}: ${side.runbook.message}` : null
}

/**
 * When each runbook step ran on both sides, in scenario seconds: where a real run falls behind
 * its rehearsal (a gate that waited longer, a drain, a restart), which the figures alone do not say.
 */
function stepsTable(report: DrillReport, width?: number): string | null {
  const rows = stepsRows(report)
  // The step's title is cut to fit, its number kept; the times are never cut.
  return rows === null ? null : formatTable(stepsHeader, rows, {width, free: [0]})
}

const stepsHeader = ['step', 'real', 'rehearsal', 'real ends']

function stepsRows(report: DrillReport): string[][] | null {
  const real = report.real.runbook?.steps
  const rehearsed = report.predicted.runbook?.steps
  if (!real || !rehearsed) return null
  const span = (s: StepTimes | undefined) =>
    s?.startedAt == null ? 'not run' : `${Math.round(s.startedAt)}–${s.endedAt === null ? '…' : Math.round(s.endedAt)} s`
  const late = (a: StepTimes | undefined, b: StepTimes | undefined) =>
    a?.endedAt == null || b?.endedAt == null ? '' : `${a.endedAt >= b.endedAt ? '+' : ''}${Math.round(a.endedAt - b.endedAt)} s`
  return rehearsed.map((b) => {
    const a = real.find((s) => s.index === b.index)
    // Numbered from 1, as the plan and the run's messages number them.
    return [`${b.index + 1} ${b.title}`, span(a), span(b), late(a, b)]
  })
}

function stepsLines(report: DrillReport, which = '', width?: number): string[] {
  const table = stepsTable(report, width)
  return table === null ? [] : ['', `Runbook steps${which}, in scenario seconds from the start of the run:`, table, ...lastVerdictLines(report)]
}

/** Each gated step's last verdict on both sides, in the gate's words: how sure each side was, and of what. */
function lastVerdictLines(report: DrillReport): string[] {
  const real = report.real.runbook?.steps ?? []
  const rehearsed = report.predicted.runbook?.steps ?? []
  const lines = rehearsed.flatMap((b) => {
    const a = real.find((s) => s.index === b.index)
    if (!a?.lastVerdict && !b.lastVerdict) return []
    return [`  ${b.index + 1} ${b.title}`, `    real:      ${a?.lastVerdict ?? 'no verdict'}`, `    rehearsal: ${b.lastVerdict ?? 'no verdict'}`]
  })
  return lines.length === 0 ? [] : ["Each step's last gate verdict:", ...lines]
}

/** Two panels, each with both lines: completed requests (and demand), and servers in rotation. */
export function drillPanels(report: DrillReport): ChartPanel[] {
  const {real, predicted} = report
  // The prediction is drawn on the real run's seconds: one axis for both lines.
  const t = real.timeline.t
  const onReal = (line: Timeline, key: 'served' | 'demand' | 'inRotation'): Float64Array => resample(line.t, line[key], t)
  const steps = real.runbook?.steps ?? []
  const markers = [
    ...(report.fault
      ? [
          {t: report.fault.from, label: 'fault'},
          {t: report.fault.to, label: 'fix'},
        ]
      : []),
    // The real run's steps: the chart is on its seconds (the steps table has the rehearsal's).
    ...stepMarkers(steps),
  ]
  const title = `${report.target.name} · ${report.setup} · rate ×${report.scales.rateScale}, time ×${report.scales.timeScale}`
  // Said after the second chart's legend, which is short: in the title it ran off a 960-pixel page.
  const stepsNote = steps.some((s) => s.startedAt !== null) ? "numbers: the real run's steps, where each began" : undefined
  const served: ChartPanel = {
    title: `${title}: completed requests`,
    t,
    series: [
      {label: 'real (HAProxy)', values: real.timeline.served},
      {label: 'predicted (simulator)', values: onReal(predicted.timeline, 'served')},
      {label: 'demand', values: real.timeline.demand},
    ],
    leftUnit: 'rps',
    markers,
  }
  // A second of catch-up (a queue drained at once, a late read) can be five times the demand:
  // scaled to it, the line the drill is about lies flat on the floor. Read against demand instead.
  const axis = robustLeftAxis(served, seriesMax(real.timeline.demand))
  return [
    axis.clipped === 0 ? served : {...served, leftMax: axis.max, note: clippedNote(axis.clipped, axis.max, 'rps')},
    {
      title: `${title}: servers in rotation`,
      t,
      series: [
        {label: 'real: UP in HAProxy', values: real.timeline.inRotation},
        {label: 'predicted: took traffic that second', values: onReal(predicted.timeline, 'inRotation')},
      ],
      leftUnit: 'servers',
      leftMax: report.servers,
      markers,
      note: stepsNote,
    },
  ]
}

/** `values` at each of `at`, from the last point of `t` at or before it (NaN before the first and past the last). */
function resample(t: ArrayLike<number>, values: ArrayLike<number>, at: ArrayLike<number>): Float64Array {
  const out = new Float64Array(at.length).fill(Number.NaN)
  let k = 0
  const step = t.length > 1 ? t[1] - t[0] : 1
  for (let i = 0; i < at.length; i++) {
    while (k + 1 < t.length && t[k + 1] <= at[i]) k++
    if (t.length > 0 && at[i] >= t[0] && at[i] < t[t.length - 1] + step) out[i] = values[k]
  }
  return out
}

/** The charts' width, and the terminal's for the tables (a table cuts its free text to fit it). */
export interface DrillRenderOptions {
  color: boolean
  width: number
  tableWidth?: number
}

/** What `sluice drill` prints: what ran, the report card, the charts, and how to read them. */
export function renderDrill(report: DrillReport, options: DrillRenderOptions): string {
  const parts = drillParts(report).map((p) =>
    typeof p === 'string' ? p : 'verdict' in p ? p.verdict : formatTable(p.header, p.rows, {width: options.tableWidth, free: p.free}),
  )
  for (const panel of drillPanels(report)) parts.push('', renderTerminalChart(panel, {color: options.color, width: options.width, height: 8}))
  return parts.join('\n')
}

/**
 * One piece of the report: its words (a blank one spaces the terminal's), a table, or the verdict,
 * which a page puts first. The terminal and the page lay out the one list.
 */
type ReportPart = string | {header: string[]; rows: string[][]; free?: number[]} | {verdict: string}

function drillParts(report: DrillReport): ReportPart[] {
  const {scales} = report
  const steps = stepsRows(report)
  return [
    `${report.target.kind === 'runbook' ? `runbook ${report.target.name} against ` : ''}${report.scenario.name} (${report.setup}), on HAProxy and a loopback fleet: rate scale ${scales.rateScale}, time scale ${scales.timeScale}, servers queue ${report.queueSeconds} s of work; ${Math.round(report.seconds)} scenario s in ${Math.round(report.wallSeconds)} s of wall time${report.interrupted ? ' (interrupted: the figures cover what ran)' : ''}`,
    ...(report.model ? [`predicted from ${report.model}'s pool, checks and clients, with ${report.scenario.name}'s demand and faults`] : []),
    ...[runbookLine('real run', report.real), runbookLine('rehearsal', report.predicted)].filter((l): l is string => l !== null),
    '',
    comparedLine(report),
    {header: tableHeader, rows: tableRows(report)},
    // The step's title is cut to fit, its number kept; the times are never cut.
    ...(steps === null
      ? []
      : ['', 'Runbook steps, in scenario seconds from the start of the run:', {header: stepsHeader, rows: steps, free: [0]}, ...lastVerdictLines(report)]),
    ...runbookSpanParts(report),
    ...rollbackLines(report),
    '',
    {verdict: agreement(verdictOf(report).verdict)},
    ...finerTickLine(finerTickVerdict(report), 'the real run'),
    ...machineLine(report),
    ...(report.real.failures ? [failureLine(report.real.failures.run)] : []),
    `Full service: completed requests back to within ${fullServiceMargin * 100} points of the run's own share before the fault (real ${pct(report.real.card.before)}, predicted ${pct(report.predicted.card.before)}) over every ${Math.round(report.fullServiceWindow)} s from then to the end, read the same way from both runs. Rates and times are in the scenario's units (real ones divided by the scales).`,
  ]
}

/** Which seconds the report card reads, the same on both sides, and where each side's record ended when that differs. */
function comparedLine(report: DrillReport): string {
  const {to, realTo, predictedTo} = report.compared
  const ends =
    Math.round(realTo) === Math.round(predictedTo)
      ? ''
      : ` (the real run's record went on to ${Math.round(realTo)} s, the prediction's to ${Math.round(predictedTo)} s; each is read only as far as both go)`
  return `Over the whole drill, 0–${Math.round(to)} s, the same seconds on both sides${ends}:`
}

/** The report card again over the runbook's span as rehearsed: what the runbook did, apart from the rest of the run. */
function runbookSpanParts(report: DrillReport): ReportPart[] {
  const judged = runbookSpanVerdict(report)
  if (judged === null || report.runbookSpan === null) return []
  const {real, predicted, spread} = report.runbookSpan
  return [
    '',
    `Over the runbook's span as rehearsed, ${Math.round(judged.from)}–${Math.round(judged.to)} s (its start to the rehearsal's end and the settle after it), the same seconds on both sides:`,
    {header: tableHeader, rows: rows(real, predicted, judged.bands, report.interrupted, spread)},
    `On the runbook's span: ${verdictWords(judged.verdict)}.`,
  ]
}

/** The rollback after the runbook on each side: how it went back, what it cost from its start, its verdicts. */
function rollbackLines(report: DrillReport): string[] {
  const side = (name: string, r: DrillSide['rollback']) => `  ${name}: ${r ? rollbackLine(r) : 'no rollback (the runbook was interrupted)'}`
  const r = report.real.rollback ?? report.predicted.rollback
  if (!r) return []
  return [
    '',
    `Rollback after the runbook (${rollbackHow(r)}): ${r.plan.join('; ')}`,
    side('real', report.real.rollback),
    side('predicted', report.predicted.rollback),
  ]
}

export function drillSvg(report: DrillReport): string {
  return renderSvg(drillPanels(report), {title: `sluice drill: ${report.target.name}`})
}

/** A page to share: the verdict first, then the figures and the steps as tables, the report's words, and the charts. */
export function drillHtml(report: DrillReport): string {
  const parts = drillParts(report)
  const verdict = parts.find((p): p is {verdict: string} => typeof p === 'object' && 'verdict' in p)!
  const body = parts
    .filter((p) => p !== '' && p !== verdict)
    .map((p) => (typeof p === 'string' ? htmlParagraphs([p]) : 'header' in p ? htmlTable(p.header, p.rows) : ''))
    .join('\n')
  return htmlPage(
    `sluice drill: ${report.target.name}`,
    `<h2>Verdict</h2>
${htmlParagraphs([verdict.verdict])}
<h2>Report</h2>
${body}
<h2>Charts</h2>
${inlineSvg(drillSvg(report))}`,
  )
}

const round = (x: number, places = 2): number => Math.round(x * 10 ** places) / 10 ** places
const roundCard = (c: ReportCard) => ({
  servedDuringFault: c.servedDuringFault === null ? null : round(c.servedDuringFault),
  lostPercent: round(c.lostPercent),
  secondsToFullServiceAfterFix: c.secondsToFullServiceAfterFix === null ? null : round(c.secondsToFullServiceAfterFix),
  fewestInRotation: c.fewestInRotation,
  cascaded: c.cascaded,
  recovered: c.recovered,
  before: round(c.before, 4),
})
const lineJson = (l: Timeline) => ({
  t: Array.from(l.t, (v) => round(v)),
  demand: Array.from(l.demand, (v) => round(v)),
  served: Array.from(l.served, (v) => round(v)),
  inRotation: Array.from(l.inRotation, (v) => (Number.isNaN(v) ? null : round(v))),
})

const roundBands = (b: Bands): Bands => ({
  servedDuringFault: round(b.servedDuringFault),
  lostPercent: round(b.lostPercent),
  secondsToFullServiceAfterFix: round(b.secondsToFullServiceAfterFix),
  fewestInRotation: round(b.fewestInRotation),
})

const finerTickJson = (f: FinerTickVerdict | null) =>
  f === null ? null : {tick: f.tick, card: roundCard(f.card), bands: roundBands(f.bands), verdict: f.verdict, moved: f.moved}

function runbookSpanJson(report: DrillReport) {
  const judged = runbookSpanVerdict(report)
  if (judged === null || report.runbookSpan === null) return null
  const {real, predicted, spread} = report.runbookSpan
  return {
    from: round(judged.from),
    to: round(judged.to),
    real: roundCard(real),
    predicted: roundCard(predicted),
    spread: spread.map(roundCard),
    bands: roundBands(judged.bands),
    verdict: judged.verdict,
  }
}

/** The `--json` shape of `sluice drill`. */
export function drillJson(report: DrillReport) {
  const counts = (f: Failures) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, Math.round(v as number)]))
  const side = (s: DrillSide) => ({
    card: roundCard(s.card),
    ...(s.runbook
      ? {
          runbook: {
            ...s.runbook,
            steps: s.runbook.steps.map((st) => ({
              ...st,
              startedAt: st.startedAt === null ? null : round(st.startedAt),
              endedAt: st.endedAt === null ? null : round(st.endedAt),
            })),
          },
        }
      : {}),
    ...(s.failures ? {failures: {run: counts(s.failures.run), afterFix: s.failures.afterFix && counts(s.failures.afterFix)}} : {}),
    ...(s.rollback
      ? {
          rollback: {
            ...s.rollback,
            startedAt: round(s.rollback.startedAt),
            endedAt: round(s.rollback.endedAt),
            lostPercent: round(s.rollback.lostPercent),
            peakLossPercent: round(s.rollback.peakLossPercent),
          },
        }
      : {}),
    timeline: lineJson(s.timeline),
  })
  return {
    target: report.target,
    scenario: report.scenario.name,
    ...(report.model ? {model: report.model} : {}),
    setup: report.setup,
    scales: report.scales,
    queueSeconds: report.queueSeconds,
    fault: report.fault,
    servers: report.servers,
    scenarioSeconds: round(report.seconds),
    compared: {to: round(report.compared.to), realTo: round(report.compared.realTo), predictedTo: round(report.compared.predictedTo)},
    runbookSpan: runbookSpanJson(report),
    wallSeconds: round(report.wallSeconds, 1),
    fullServiceWindowSeconds: round(report.fullServiceWindow),
    interrupted: report.interrupted,
    agree: drillAgrees(report),
    verdict: verdictOf(report).verdict,
    bands: roundBands(verdictOf(report).bands),
    real: side(report.real),
    predicted: side(report.predicted),
    finerTick: finerTickJson(finerTickVerdict(report)),
    spread: report.spread
      ? {
          seeds: report.spread.seeds,
          sampleScale: round(report.spread.sampleScale, 4),
          cards: report.spread.cards.map(roundCard),
          chance: {cascaded: round(chanceOf(report.spread.cards, 'cascaded'), 3), recovered: round(chanceOf(report.spread.cards, 'recovered'), 3)},
        }
      : null,
    load: {
      eventLoopDelayP99Ms: round(report.load.eventLoopDelayP99Ms),
      fleetLoopDelayP99Ms: report.load.fleetLoopDelayP99Ms === null ? null : round(report.load.fleetLoopDelayP99Ms),
      cpuWait: report.load.cpuWait && {
        runSeconds: round(report.load.cpuWait.runSeconds),
        waitSeconds: round(report.load.cpuWait.waitSeconds),
        share: round(report.load.cpuWait.share, 3),
        slices: report.load.cpuWait.slices,
        meanWaitMs: round(report.load.cpuWait.meanWaitMs, 3),
      },
      local: round(report.load.local),
      offered: Math.round(report.load.offered),
      cpuSeconds: round(report.load.cpuSeconds),
      clientTimeoutWallMs: round(report.load.clientTimeoutWallMs),
      serviceTimeMs: round(report.load.serviceTimeMs),
    },
  }
}

export type DrillJson = ReturnType<typeof drillJson>

/** A figure's median over the runs, with its range when the runs differ. */
function spreadText(s: {min: number | null; median: number | null; max: number | null}, show: (v: number | null) => string): string {
  if (s.min === null || s.max === null || s.min === s.max) return show(s.median)
  return `${show(s.median)} (${show(s.min)}–${show(s.max)})`
}

/** What `sluice drill --repeat N` prints: each run's verdict, the median card against the prediction, and the chart of the median run. */
export function renderRepeats(reports: DrillReport[], options: DrillRenderOptions): string {
  const summary = summarizeRepeats(reports)
  const first = reports[0]
  const {figures: f, predicted, bands} = summary
  const lost = (v: number | null) => (v === null ? '–' : `${v.toFixed(1)}%`)
  const servers = (v: number | null) => (v === null ? 'not read' : String(v))
  const count = (o: Outcome) => `${summary.observed[o].yes} of ${summary.observed[o].runs}`
  const spread = first.spread?.cards ?? []
  const band = (figure: Figure, unit: string, places = 0) =>
    `±${bands[figure].toFixed(places)}${unit}: ${withinBand(summary.median, predicted, bands, figure, spread) ? 'within' : 'OUTSIDE'}`
  const apart = outcomesApart(summary.observed, predicted, spread)
  const outcome = (o: Outcome) => [o, `yes in ${count(o)}`, predictedOutcome(predicted, spread, o), apart.includes(o) ? 'DISAGREE' : 'agree']
  const table = formatTable(
    ['', `real, median of ${reports.length} (range)`, 'predicted', 'band'],
    [
      [
        'served during fault',
        spreadText(f.servedDuringFault, rps),
        predictedFigure(predicted, spread, 'servedDuringFault', rps),
        band('servedDuringFault', ' rps'),
      ],
      ['requests lost', spreadText(f.lostPercent, lost), predictedFigure(predicted, spread, 'lostPercent', lost), band('lostPercent', ' points', 1)],
      [
        'full service after fix',
        spreadText(f.secondsToFullServiceAfterFix, secondsText),
        predictedFigure(predicted, spread, 'secondsToFullServiceAfterFix', secondsText),
        band('secondsToFullServiceAfterFix', ' s'),
      ],
      [
        'fewest in rotation',
        spreadText(f.fewestInRotation, servers),
        predictedFigure(predicted, spread, 'fewestInRotation', servers),
        band('fewestInRotation', ''),
      ],
      outcome('cascaded'),
      outcome('recovered'),
    ],
  )
  const runLine = (v: Verdict, i: number) =>
    `run ${i + 1}: ${v.kind === 'inconclusive' ? `inconclusive, ${v.reason}` : v.kind === 'disagree' ? `disagree (${apartWords(v)})` : v.kind}`
  const parts = [
    `${first.target.kind === 'runbook' ? `runbook ${first.target.name} against ` : ''}${first.scenario.name} (${first.setup}), ${reports.length} runs on HAProxy and a loopback fleet: rate scale ${first.scales.rateScale}, time scale ${first.scales.timeScale}, servers queue ${first.queueSeconds} s of work`,
    ...summary.verdicts.map(runLine),
    '',
    table,
    '',
    `Over the median of ${reports.length} runs: ${agreement(summary.verdict)}`,
    ...finerTickLine(summary.finerTick, `the median of ${reports.length} runs`),
    ...stepsLines(reports[summary.representative], ` (run ${summary.representative + 1}, the median's)`, options.tableWidth),
  ]
  for (const panel of drillPanels(reports[summary.representative]))
    parts.push(
      '',
      renderTerminalChart(
        {...panel, title: `${panel.title} (run ${summary.representative + 1}, the median's)`},
        {color: options.color, width: options.width, height: 8},
      ),
    )
  return parts.join('\n')
}

/** The `--json` shape of `sluice drill --repeat N`: every run, and the summary. */
export function drillRepeatsJson(reports: DrillReport[]) {
  const summary = summarizeRepeats(reports)
  const roundOrNull = (v: number | null) => (v === null ? null : round(v))
  return {
    runs: reports.map(drillJson),
    summary: {
      runs: summary.runs,
      figures: Object.fromEntries(
        Object.entries(summary.figures).map(([k, s]) => [k, {min: roundOrNull(s.min), median: roundOrNull(s.median), max: roundOrNull(s.max)}]),
      ),
      median: roundCard(summary.median),
      predicted: roundCard(summary.predicted),
      bands: roundBands(summary.bands),
      verdicts: summary.verdicts,
      verdict: summary.verdict,
      representative: summary.representative,
      finerTick: finerTickJson(summary.finerTick),
      observed: summary.observed,
    },
    agree: summary.verdict.kind === 'agree' ? true : summary.verdict.kind === 'disagree' ? false : null,
  }
}

export type DrillRepeatsJson = ReturnType<typeof drillRepeatsJson>
