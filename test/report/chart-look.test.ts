import {describe, expect, it} from 'vitest'
import {renderTerminalChart, seriesStyles, type ChartPanel} from '../../src/report/chart.js'
import {cellPatterns, fills, sweepSvg} from '../../src/report/heatmap.js'
import {PALETTE, renderSvg} from '../../src/report/svg.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import type {CellOutcome, CellResult} from '../../src/sweep/classify.js'
import {buildAxes} from '../../src/sweep/grid.js'

// Issue 48: lines and map regions are told apart without colour, and look one way in SVG as on a
// terminal. These read what the SVG declares; test/e2e/greyscale-charts.test.ts renders it and looks.

/** WCAG's relative luminance of a #rrggbb colour, 0..1. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

const t = Float64Array.from({length: 40}, (_, i) => i * 10)
const flat = (v: number) => Float64Array.from({length: 40}, () => v)
const panel: ChartPanel = {
  title: 'drill',
  t,
  series: [
    {label: 'real (HAProxy)', values: flat(100)},
    {label: 'predicted (simulator)', values: flat(90)},
    {label: 'demand', values: flat(120)},
    {label: 'real: UP in HAProxy', values: flat(5), axis: 'right'},
    {label: 'predicted: took traffic that second', values: flat(6), axis: 'right'},
  ],
  leftUnit: 'rps',
  rightUnit: 'servers',
}

describe('line charts: a pattern per line, the same in SVG as on the terminal', () => {
  it('gives every line of a panel its own dash, drawn on its polyline and its legend sample alike', () => {
    const svg = renderSvg([panel])
    const dashOf = (tag: string) => /stroke-dasharray="([^"]*)"/.exec(tag)?.[1] ?? ''
    const polylines = [...svg.matchAll(/<polyline [^>]*>/g)].map(([tag]) => tag)
    const samples = [...svg.matchAll(/<line [^>]*class="legend-line"\/>/g)].map(([tag]) => tag)
    expect(polylines).toHaveLength(5)
    expect(samples).toHaveLength(5)
    const styles = seriesStyles(panel)
    expect(polylines.map(dashOf)).toEqual(styles.map((s) => s.dash))
    expect(samples.map(dashOf)).toEqual(styles.map((s) => s.dash))
    expect(new Set(styles.map((s) => s.dash)).size).toBe(5)
    // The terminal's legend shows the same patterns by their glyphs, in the same order.
    const legend = renderTerminalChart(panel, {width: 60, height: 6}).split('\n').at(-1)!
    expect(legend).toBe(
      styles
        .map(
          (s, i) =>
            `${s.glyph} ${['real (HAProxy) (rps)', 'predicted (simulator) (rps)', 'demand (rps)', 'real: UP in HAProxy (servers, right axis)', 'predicted: took traffic that second (servers, right axis)'][i]}`,
        )
        .join('  '),
    )
  })

  it('draws the usual pair (completed or real, then demand or predicted) in colours far apart in lightness', () => {
    expect(Math.abs(luminance(PALETTE[0]) - luminance(PALETTE[1]))).toBeGreaterThan(0.2)
  })
})

describe('sweep and assess maps: a colour-blind-safe fill and a pattern per outcome', () => {
  const {scenario} = loadScenario('outlook-2026')
  const [noGuard] = pickSetups(scenario, 'all')
  const cell = (outcome: CellOutcome): CellResult => ({
    outcome,
    recoveredSecondsAfterFix: outcome === 'stuck' ? null : 30,
    meanServedDuringFault: 1,
    minInRotation: 0,
  })
  const line = (y: number) => ({y, startsStuck: false, endsStuck: true, transitions: []})
  const svg = sweepSvg({
    scenario,
    axes: buildAxes(['broken=0..2', 'demand=1000..2000:2'], scenario, 2),
    setups: [
      {
        ...noGuard,
        cells: [cell('unharmed'), cell('recovered'), cell('stuck'), cell('unharmed'), cell('recovered'), cell('stuck')],
        edges: [line(1000), line(2000)],
        tipping: line(1000),
        sentence: 'no-guard tips.',
      },
    ],
  })

  it('covers each outcome but the solid one with its own pattern, declared in the SVG', () => {
    expect(cellPatterns.unharmed).not.toBe(cellPatterns.recovered)
    expect(cellPatterns.stuck).toBeNull()
    for (const outcome of ['unharmed', 'recovered'] as const) {
      expect(svg).toContain(`<pattern id="${cellPatterns[outcome]}"`)
      // Two cells of each outcome: two squares in the path that lays its pattern over them.
      const path = new RegExp(`<path d="([^"]+)" fill="url\\(#${cellPatterns[outcome]}\\)" class="cells-${outcome}"/>`).exec(svg)
      expect(path, outcome).not.toBeNull()
      expect(path![1].match(/M/g)).toHaveLength(2)
    }
  })

  it('fills unharmed and stuck far apart in lightness, and neither green against red', () => {
    expect(luminance(fills.unharmed) - luminance(fills.stuck)).toBeGreaterThan(0.5)
    expect(svg).not.toMatch(/#2e8b3e|#c0392b/)
  })
})
