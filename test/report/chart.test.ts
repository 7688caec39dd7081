import {describe, expect, it} from 'vitest'

import {type ChartPanel, renderTerminalChart, valueScale} from '../../src/report/chart.js'

const BLANK = '\u2800'
const BRAILLE = /[\u2800-\u28FF]/g

function range(n: number): number[] {
  return Array.from({length: n}, (_, i) => i)
}

function panel(values: ArrayLike<number>, extra: Partial<ChartPanel> = {}): ChartPanel {
  return {title: 'Test', t: range(values.length), series: [{label: 'served', values}], leftUnit: 'rps', ...extra}
}

// The braille cells of each plot row, in order, with labels and axes stripped.
function plotRows(out: string): string[] {
  return out
    .split('\n')
    .filter((l) => /[\u2800-\u28FF]/.test(l))
    .map((l) => (l.match(BRAILLE) ?? []).join(''))
}

function isBlank(cells: string): boolean {
  return [...cells].every((c) => c === BLANK)
}

describe('valueScale', () => {
  it('rounds the top up to a nice step and starts at 0', () => {
    expect(valueScale(1430)).toEqual({top: 1500, ticks: [0, 500, 1000, 1500]})
    expect(valueScale(0).ticks[0]).toBe(0)
  })

  it('honours a fixed max exactly', () => {
    expect(valueScale(5000, 1000)).toEqual({top: 1000, ticks: [0, 500, 1000]})
  })
})

describe('renderTerminalChart', () => {
  it('emits no ANSI escapes when color is false', () => {
    const out = renderTerminalChart(panel([1, 5, 3], {markers: [{t: 1, label: 'fault'}]}), {color: false})
    expect(out).not.toContain('\x1b')
  })

  it('without colour, tells two lines on one axis apart by pattern: the first solid, the next dashed, each with its own legend glyph', () => {
    const n = 200
    const flat = (v: number) => Array.from({length: n}, () => v)
    const chart = {
      title: 'two lines',
      t: range(n),
      leftUnit: 'rps',
      series: [
        {label: 'completed', values: flat(10)},
        {label: 'demand', values: flat(40)},
      ],
    }
    const out = renderTerminalChart(
      {...chart, series: [...chart.series, {label: 'in rotation', values: flat(5), axis: 'right' as const}], rightMax: 10, rightUnit: 'servers'},
      {color: false, width: 40, height: 8},
    )
    const legend = out.split('\n').at(-1)!
    expect(legend).toBe('━ completed (rps)  ╍ demand (rps)  ┈ in rotation (servers, right axis)')
    // Each line alone on its row: the solid one has no gap, the dashed one has gaps at regular places.
    const rows = plotRows(renderTerminalChart(chart, {color: false, width: 40, height: 8}))
    const solid = rows.find((r) => !isBlank(r) && [...r].every((c) => c !== BLANK))
    const dashed = rows.find((r) => !isBlank(r) && [...r].some((c) => c === BLANK))
    expect(solid).toBeDefined()
    expect(dashed).toBeDefined()
    const gaps = [...dashed!].filter((c) => c === BLANK).length
    expect(gaps).toBeGreaterThan(8)
    expect(gaps).toBeLessThan(32)
  })

  it('colours series when color is true', () => {
    const out = renderTerminalChart(panel([1, 5, 3]), {color: true})
    expect(out).toContain('\x1b[')
  })

  it('puts the title on the first line', () => {
    expect(renderTerminalChart(panel([1, 2])).split('\n')[0]).toBe('Test')
  })

  it('draws a flat series at the max on the top row only', () => {
    const rows = plotRows(renderTerminalChart(panel(new Array(100).fill(100)), {width: 20, height: 5}))
    expect(rows).toHaveLength(5)
    expect([...rows[0]].every((c) => c !== BLANK)).toBe(true)
    for (const row of rows.slice(1)) expect(isBlank(row)).toBe(true)
  })

  it('draws a zero series on the bottom row only', () => {
    const rows = plotRows(renderTerminalChart(panel(new Array(100).fill(0)), {width: 20, height: 5}))
    expect([...rows[4]].every((c) => c !== BLANK)).toBe(true)
    for (const row of rows.slice(0, 4)) expect(isBlank(row)).toBe(true)
  })

  it('shows a drop from 100 to 0 in the middle as top-left, bottom-right and a vertical stroke', () => {
    const values = range(600).map((i) => (i < 300 ? 100 : 0))
    const rows = plotRows(renderTerminalChart(panel(values), {width: 40, height: 5}))
    const top = rows[0]
    expect(isBlank(top.slice(0, 20))).toBe(false)
    expect([...top.slice(0, 20)].every((c) => c !== BLANK)).toBe(true)
    expect(isBlank(top.slice(20))).toBe(true)
    expect(isBlank(rows[4].slice(0, 20))).toBe(true)
    expect(isBlank(rows[4].slice(20))).toBe(false)
    // The drop is connected: every row has a dot somewhere.
    for (const row of rows) expect(isBlank(row)).toBe(false)
  })

  it('averages samples per column instead of picking one', () => {
    // Alternating 0/100 averages to 50; sampling would put dots on the top or bottom row.
    const values = range(3600).map((i) => (i % 2 === 0 ? 0 : 100))
    const rows = plotRows(renderTerminalChart(panel(values, {leftMax: 100}), {width: 40, height: 5}))
    expect([...rows[2]].every((c) => c !== BLANK)).toBe(true)
    for (const i of [0, 1, 3, 4]) expect(isBlank(rows[i])).toBe(true)
  })

  it('leaves a gap where values are NaN', () => {
    const values = range(400).map((i) => (i >= 100 && i < 300 ? NaN : 10))
    const rows = plotRows(renderTerminalChart(panel(values), {width: 40, height: 4}))
    for (const row of rows) expect(isBlank(row.slice(12, 28))).toBe(true)
    expect(isBlank(rows.join(''))).toBe(false)
  })

  it('labels the y axis with 0 and a rounded max', () => {
    const values = range(100).map((i) => i * 14.3)
    const lines = renderTerminalChart(panel(values)).split('\n')
    expect(lines.some((l) => /^\s*1500 ┤/.test(l))).toBe(true)
    expect(lines.some((l) => /^\s*0 ┤/.test(l))).toBe(true)
    expect(lines.some((l) => /^\s*1000 ┤/.test(l))).toBe(true)
  })

  it('labels the x axis in rounded seconds', () => {
    const out = renderTerminalChart(panel(range(601)))
    for (const label of ['0s', '100s', '300s', '600s']) expect(out).toMatch(new RegExp(`(^|\\s)${label}(\\s|$)`, 'm'))
  })

  it('labels the right axis when a series uses it', () => {
    const p = panel(range(100), {
      rightUnit: 'servers',
      series: [
        {label: 'served', values: range(100)},
        {label: 'in rotation', values: new Array(100).fill(40), axis: 'right'},
      ],
    })
    const lines = renderTerminalChart(p).split('\n')
    expect(lines.some((l) => /├ 40$/.test(l))).toBe(true)
    expect(lines.some((l) => /├ 0$/.test(l))).toBe(true)
  })

  it('draws a marker line with its label above that column', () => {
    const out = renderTerminalChart(panel(new Array(101).fill(NaN), {markers: [{t: 50, label: 'fault'}]}), {width: 40})
    const lines = out.split('\n')
    const labelLine = lines.findIndex((l) => l.includes('fault'))
    const firstPlot = lines.findIndex((l) => /[\u2800-\u28FF]/.test(l))
    expect(labelLine).toBeGreaterThan(0)
    expect(labelLine).toBeLessThan(firstPlot)
    const col = lines[labelLine].indexOf('fault')
    const plot = lines.filter((l) => /[\u2800-\u28FF]/.test(l))
    for (const l of plot) expect(l[col]).not.toBe(BLANK)
    // Nothing but the marker is drawn.
    for (const l of plot) expect(isBlank(plotRows(l.slice(0, col) + l.slice(col + 1)).join(''))).toBe(true)
  })

  it('names every series in the legend', () => {
    const p = panel(range(10), {
      rightUnit: 'servers',
      series: [
        {label: 'served', values: range(10)},
        {label: 'offered', values: range(10)},
        {label: 'in rotation', values: range(10), axis: 'right'},
      ],
    })
    const legend = renderTerminalChart(p).split('\n').at(-1)
    expect(legend).toContain('served (rps)')
    expect(legend).toContain('offered (rps)')
    expect(legend).toContain('in rotation (servers, right axis)')
  })

  it('is deterministic', () => {
    const values = range(3600).map((i) => Math.sin(i / 100) * 500 + 500)
    const p = panel(values, {markers: [{t: 1000, label: 'fix'}]})
    expect(renderTerminalChart(p, {color: true})).toBe(renderTerminalChart(p, {color: true}))
    expect(renderTerminalChart(p)).toBe(renderTerminalChart(p))
  })

  it('makes every plot row exactly width braille cells wide', () => {
    const p = panel(
      range(3600).map((i) => i % 700),
      {markers: [{t: 3599, label: 'end'}]},
    )
    for (const [width, height] of [
      [72, 10],
      [33, 3],
      [8, 2],
    ]) {
      for (const color of [false, true]) {
        const rows = plotRows(renderTerminalChart(p, {width, height, color}))
        expect(rows).toHaveLength(height)
        for (const row of rows) expect(row.length).toBe(width)
      }
    }
    expect(plotRows(renderTerminalChart(p))[0].length).toBe(72)
  })

  it('copes with empty and single-point series', () => {
    expect(() => renderTerminalChart(panel([]))).not.toThrow()
    const rows = plotRows(renderTerminalChart(panel([5]), {width: 10, height: 2}))
    expect(rows).toHaveLength(2)
  })
})

describe('a series whose values stand for many samples', () => {
  const flat = new Array(40).fill(50)
  const banded = (low: number, high: number): ChartPanel =>
    panel(flat, {leftMax: 100, series: [{label: 'served', values: flat, low: new Array(40).fill(low), high: new Array(40).fill(high)}]})

  it("marks each column's lowest and highest sample above and below the line", () => {
    const rows = plotRows(renderTerminalChart(banded(0, 100), {width: 20, height: 4}))
    const plain = plotRows(renderTerminalChart(panel(flat, {leftMax: 100}), {width: 20, height: 4}))
    expect(isBlank(plain[0])).toBe(true)
    expect(isBlank(rows[0])).toBe(false)
    expect(isBlank(rows[rows.length - 1])).toBe(false)
  })

  it('draws nothing more when the range is the value itself', () => {
    expect(renderTerminalChart(banded(50, 50), {width: 20, height: 4})).toBe(renderTerminalChart(panel(flat, {leftMax: 100}), {width: 20, height: 4}))
  })

  it('scales the axis to the highest value of a series of 300,000 samples', () => {
    const long = new Float64Array(300_000).fill(10)
    long[123_456] = 700
    const out = renderTerminalChart(
      {title: 'long', t: Float64Array.from(range(300_000)), series: [{label: 'served', values: long}], leftUnit: 'rps'},
      {width: 40, height: 4},
    )
    expect(out).toContain('750 ┤')
  })
})
