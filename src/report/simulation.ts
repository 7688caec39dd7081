import {clockStamp} from '../format.js'
import {overSeedsSentence} from '../sim/seeds.js'
import {fullServiceWindowSeconds} from '../sim/record.js'
import type {SimulationReport} from '../sim/simulate.js'
import {amplificationDuringFault} from '../sim/summary.js'
import type {RecordSeriesKey, SimulationRecord} from '../sim/record.js'
import {renderTerminalChart, seriesMax, type ChartPanel} from './chart.js'
import {renderSvg} from './svg.js'
import {htmlPage, htmlParagraphs, htmlTable, inlineSvg} from './html.js'
import {formatTable} from './table.js'

function describeScenario(report: SimulationReport): string {
  const s = report.scenario
  const pools = s.pools
    .filter((p) => p.kind === 'servers')
    .map((p) => `${p.name}: ${p.servers} servers × ${p.capacity} rps`)
    .join('; ')
  const demand = s.demand.rps === undefined ? `demand curve ${s.demand.curve!.map(([t, r]) => `${r} rps at ${t} s`).join(', ')}` : `demand ${s.demand.rps} rps`
  const faults = s.faults
    .map((f) =>
      f.kind === 'broken'
        ? `${f.servers} broken ${f.from}–${f.to} s`
        : f.kind === 'errors'
          ? `${f.pool ?? s.pools[0].name} errs on ${f.percent}% ${f.from}–${f.to} s`
          : `${f.kind} ${f.from}–${f.to} s`,
    )
    .join('; ')
  return `${pools}; ${demand}${faults ? `; ${faults}` : ''}; ${s.duration} s`
}

const tableHeader = ['setup', 'served during fault', 'lost', 'full service after fix', 'fewest in rotation', 'load during fault']

/** The summary table's rows: one per setup. */
function simulationRows(report: SimulationReport): string[][] {
  const demand = report.scenario.demand.rps
  const rows = report.setups.map(({name, summary, record}) => {
    const during = summary.meanServedDuringFault
    const share = during !== null && demand ? ` (${Math.round((during / demand) * 100)}%)` : ''
    const recovered = summary.recoveredSecondsAfterFix
    const amplification = amplificationDuringFault(record)
    return [
      name,
      during === null ? 'no fault' : `${Math.round(during)} rps${share}`,
      `${summary.lostPercent.toFixed(1)}%`,
      recovered === null ? 'not recovered' : `${Number(recovered.toFixed(1))} s`,
      String(summary.minInRotation),
      amplification === null ? '–' : `${amplification.toFixed(2)}×`,
    ]
  })
  return rows
}

/**
 * The summary table: one row per setup. Load during the fault: attempts (new requests and retries)
 * reaching the pools ÷ user requests. Fitted to `width` by breaking the long names over two lines.
 */
export function simulationTable(report: SimulationReport, width?: number): string {
  return formatTable(tableHeader, simulationRows(report), width === undefined ? {} : {width, wrapHeader: true})
}

/**
 * The servers-in-rotation series, in words: the servers that took traffic in each second, counted
 * before that second's health checks eject any, so a second that served traffic never shows 0.
 */
export const inRotationLabel = 'in rotation (took traffic that second, before its checks ejected any)'

/** A record's series as a chart draws it: its points, with each point's lowest and highest tick once points stand for many. */
export function chartSeries(record: SimulationRecord, key: RecordSeriesKey, n = record.ticks): {values: Float64Array; low?: Float64Array; high?: Float64Array} {
  const range = record.range(key)
  return {values: record[key].subarray(0, n), ...(range ? {low: range.low.subarray(0, n), high: range.high.subarray(0, n)} : {})}
}

/** A chart's title notes the resolution when a point stands for more than one tick. */
export function resolutionNote(record: SimulationRecord): string {
  return record.stride > 1 ? ` (each point the mean of ${Number(record.resolution.toPrecision(6))} s, drawn with its lowest and highest tick)` : ''
}

export function simulationPanels(report: SimulationReport): ChartPanel[] {
  const markers = report.window
    ? [
        {t: report.window.from, label: 'fault'},
        {t: report.window.to, label: 'fix'},
      ]
    : []
  let peak = 0
  for (const {record} of report.setups) {
    for (const key of ['demand', 'offered'] as const) peak = Math.max(peak, seriesMax(record.range(key)?.high ?? record[key], record.ticks))
  }
  const servers = report.scenario.pools.reduce((n, p) => n + (p.servers ?? 0), 0)
  return report.setups.map(({name, record}) => ({
    title: `${report.scenario.name} · ${name}${resolutionNote(record)}`,
    t: record.t.subarray(0, record.ticks),
    series: [
      {label: 'completed', ...chartSeries(record, 'served')},
      {label: 'offered', ...chartSeries(record, 'offered')},
      {label: inRotationLabel, ...chartSeries(record, 'inRotation'), axis: 'right' as const},
    ],
    leftUnit: 'rps',
    rightUnit: 'servers',
    leftMax: peak,
    rightMax: servers,
    markers,
  }))
}

/** A line of `; `-separated clauses, broken after a clause where it would pass `width` (never inside one), the rest indented. */
function fitClauses(line: string, width?: number): string[] {
  if (width === undefined || [...line].length <= width) return [line]
  const out: string[] = []
  for (const clause of line.split('; ')) {
    const last = out.at(-1)
    if (last !== undefined && [...`${last}; ${clause}`].length <= width) out[out.length - 1] = `${last}; ${clause}`
    else out.push(last === undefined ? clause : `  ${clause}`)
  }
  return out.map((l, i) => (i < out.length - 1 ? `${l};` : l))
}

/**
 * Each setup over the seeds of --seeds, in words: on how many it held and when the others tipped.
 * With nothing drawn, a seed changes only which servers a fault breaks, and that is said too.
 */
export function overSeedsLines(report: SimulationReport): string[] {
  const over = report.overSeeds
  if (!over) return []
  const stamp = (at: number) => clockStamp(at, 'scenario').slice(1, -1)
  const heading =
    over.randomness === 'drawn'
      ? `Over ${over.seeds.length} seeds (${over.seeds[0]}–${over.seeds.at(-1)}), arrivals and service times drawn; held means at full service over the last ${fullServiceWindowSeconds} s:`
      : `Over ${over.seeds.length} seeds (${over.seeds[0]}–${over.seeds.at(-1)}), with nothing drawn (randomness: none), so a seed changes only which servers a fault breaks:`
  return [heading, ...over.setups.map((setup) => `  ${setup.name}: ${overSeedsSentence(setup, stamp)}`)]
}

/** What `sluice simulate` prints for people: the scenario, the table, the verdict over seeds, then a chart per setup. */
export function renderSimulation(report: SimulationReport, options: {color: boolean; width: number; tableWidth?: number}): string {
  const parts = [...fitClauses(`${report.scenario.name}: ${describeScenario(report)}`, options.tableWidth), '', simulationTable(report, options.tableWidth)]
  const seeds = overSeedsLines(report)
  if (seeds.length > 0) parts.push('', ...seeds)
  for (const panel of simulationPanels(report)) {
    parts.push('', renderTerminalChart(panel, {color: options.color, width: options.width, height: 8}))
  }
  return parts.join('\n')
}

export function simulationSvg(report: SimulationReport): string {
  return renderSvg(simulationPanels(report), {title: `sluice simulate: ${report.scenario.name}`})
}

/** A page to share: the scenario, the table of every setup's figures, and the chart of each. */
export function simulationHtml(report: SimulationReport): string {
  return htmlPage(
    `sluice simulate: ${report.scenario.name}`,
    `${htmlParagraphs([describeScenario(report)])}
<h2>Figures</h2>
${htmlTable(tableHeader, simulationRows(report))}
${htmlParagraphs(['Full service: completed requests within 1% of demand from that second to the end of the run. Load during the fault: attempts (new requests and retries) reaching the pools ÷ user requests.'])}
${
  report.overSeeds
    ? `<h2>Over seeds</h2>
${htmlParagraphs(overSeedsLines(report))}`
    : ''
}
<h2>Charts</h2>
${inlineSvg(simulationSvg(report))}`,
  )
}
