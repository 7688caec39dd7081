import type {SimulationReport} from '../sim/simulate.js'
import {renderTerminalChart, type ChartPanel} from './chart.js'
import {renderSvg} from './svg.js'
import {formatTable} from './table.js'

function describeScenario(report: SimulationReport): string {
  const s = report.scenario
  const pools = s.pools
    .filter((p) => p.kind === 'servers')
    .map((p) => `${p.name}: ${p.servers} servers × ${p.capacity} rps`)
    .join('; ')
  const demand = s.demand.rps === undefined ? `demand curve ${s.demand.curve!.map(([t, r]) => `${r} rps at ${t} s`).join(', ')}` : `demand ${s.demand.rps} rps`
  const faults = s.faults
    .map((f) => (f.kind === 'broken' ? `${f.servers} broken ${f.from}–${f.to} s` : `${f.kind} ${f.from}–${f.to} s`))
    .join('; ')
  return `${pools}; ${demand}${faults ? `; ${faults}` : ''}; ${s.duration} s`
}

/** The summary table: one row per setup. */
export function simulationTable(report: SimulationReport): string {
  const demand = report.scenario.demand.rps
  const rows = report.setups.map(({name, summary}) => {
    const during = summary.meanServedDuringFault
    const share = during !== null && demand ? ` (${Math.round((during / demand) * 100)}%)` : ''
    const recovered = summary.recoveredSecondsAfterFix
    return [
      name,
      during === null ? 'no fault' : `${Math.round(during)} rps${share}`,
      `${summary.lostPercent.toFixed(1)}%`,
      recovered === null ? 'not recovered' : `${recovered} s`,
      String(summary.minInRotation),
    ]
  })
  return formatTable(['setup', 'served during fault', 'lost', 'full service after fix', 'fewest in rotation'], rows)
}

export function simulationPanels(report: SimulationReport): ChartPanel[] {
  const markers = report.window ? [{t: report.window.from, label: 'fault'}, {t: report.window.to, label: 'fix'}] : []
  const peak = Math.max(...report.setups.map((s) => Math.max(...s.record.demand, ...s.record.offered)))
  const servers = report.scenario.pools.reduce((n, p) => n + (p.servers ?? 0), 0)
  return report.setups.map(({name, record}) => ({
    title: `${report.scenario.name} · ${name}`,
    t: record.t,
    series: [
      {label: 'completed', values: record.served},
      {label: 'offered', values: record.offered},
      {label: 'in rotation', values: record.inRotation, axis: 'right' as const},
    ],
    leftUnit: 'rps',
    rightUnit: 'servers',
    leftMax: peak,
    rightMax: servers,
    markers,
  }))
}

/** What `sluice simulate` prints for people: the scenario, the table, then a chart per setup. */
export function renderSimulation(report: SimulationReport, options: {color: boolean; width: number}): string {
  const parts = [`${report.scenario.name}: ${describeScenario(report)}`, '', simulationTable(report)]
  for (const panel of simulationPanels(report)) {
    parts.push('', renderTerminalChart(panel, {color: options.color, width: options.width, height: 8}))
  }
  return parts.join('\n')
}

export function simulationSvg(report: SimulationReport): string {
  return renderSvg(simulationPanels(report), {title: `sluice simulate: ${report.scenario.name}`})
}
