import {describe, expect, it} from 'vitest'
import {renderSweep, sweepHtml, sweepSvg} from '../../src/report/heatmap.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import type {CellOutcome, CellResult} from '../../src/sweep/classify.js'
import {buildAxes} from '../../src/sweep/grid.js'
import type {SweepResult} from '../../src/sweep/sweep.js'

const {scenario} = loadScenario('outlook-2026')
const [noGuard, capThird] = pickSetups(scenario, 'all')

const cell = (outcome: CellOutcome, seconds: number | null = outcome === 'stuck' ? null : 0): CellResult => ({
  outcome,
  recoveredSecondsAfterFix: seconds,
  meanServedDuringFault: 100,
  minInRotation: 0,
})

/** A hand-made 3 × 2 result, so each glyph's place on the map is known. */
function result(): SweepResult {
  const axes = buildAxes(['broken=0..2', 'demand=1000..2000:2'], scenario, 2)
  const line = (y: number) => ({y, startsStuck: false, endsStuck: true, transitions: [{holds: 1, stuck: 2, into: true}]})
  return {
    scenario,
    axes,
    setups: [
      // Row y=1000 first (bottom of the map), then y=2000.
      {
        ...noGuard,
        cells: [cell('unharmed'), cell('recovered', 12), cell('stuck'), cell('unharmed'), cell('stuck'), cell('stuck')],
        edges: [line(1000), line(2000)],
        tipping: line(1000),
        sentence: 'no-guard tips.',
      },
      {
        ...capThird,
        cells: [cell('unharmed'), cell('recovered', 3), cell('recovered', 40), cell('unharmed'), cell('recovered'), cell('recovered')],
        edges: [line(1000), line(2000)],
        tipping: line(1000),
        sentence: 'cap-third holds.',
      },
    ],
  }
}

describe('the terminal maps', () => {
  it('draw the highest y on top, label both axes in their units, and carry a legend and the sentences', () => {
    const text = renderSweep(result(), {color: false, width: 40})
    const lines = text.split('\n')
    expect(lines[0]).toBe('outlook-2026: sweep of broken × demand, 12 runs (2 setups)')
    expect(text).toContain('no-guard: 3 stuck, 1 recovered, 2 unharmed of 6')
    expect(lines).toContain('2,000 ┤··████')
    expect(lines).toContain('1,000 ┤··▒▒██ ◀')
    expect(text).toContain('░ recovered: below full service for a while, then back at it to the end of the run: back by the fix')
    expect(text).toContain('demand (rps)')
    expect(text).toContain('broken servers (of 20)')
    expect(text).toMatch(/└┬─┬─┬─\n\s+0 1 2\n/)
    expect(text).toContain('█ stuck: not back at full service by the end of the run (600 s, 360 s after the fix), although the fault was fixed')
    expect(text).toContain('◀ the row the tipping points below are stated at (1,000 rps')
    expect(text).toMatch(/tipping points:\n {2}no-guard tips\.\n {2}cap-third holds\.$/)
    expect(text).not.toContain('\x1b[')
  })

  it('put maps side by side when the width allows, one under the other when not', () => {
    const wide = renderSweep(result(), {color: false, width: 120}).split('\n')
    expect(wide.some((l) => l.includes('no-guard: ') && l.includes('cap-third: '))).toBe(true)
    const narrow = renderSweep(result(), {color: false, width: 30}).split('\n')
    expect(narrow.some((l) => l.includes('no-guard: ') && l.includes('cap-third: '))).toBe(false)
  })

  it('colour each outcome only when asked', () => {
    expect(renderSweep(result(), {color: true, width: 80})).toContain('\x1b[31m██\x1b[0m')
  })

  it('draw one --sweep as a strip per setup over a shared axis', () => {
    const r = result()
    const axes = buildAxes(['broken=0..2'], scenario, 2)
    const strip: SweepResult = {
      ...r,
      axes,
      setups: r.setups.map((s) => ({...s, cells: s.cells.slice(0, 3), edges: [{...s.edges[0], y: null}], tipping: {...s.tipping, y: null}})),
    }
    const lines = renderSweep(strip, {color: false, width: 100}).split('\n')
    expect(lines).toContain('no-guard  │··▒▒██  1 stuck, 1 recovered, 1 unharmed of 3')
    expect(lines).toContain('cap-third │··▒▒▒▒  0 stuck, 2 recovered, 1 unharmed of 3')
    expect(
      renderSweep(
        {...strip, setups: [{...strip.setups[1], cells: [cell('recovered', 0), cell('recovered', 3), cell('unharmed')]}]},
        {color: false, width: 100},
      ),
    ).toContain('cap-third │░░▒▒··')
  })
})

describe('the SVG and HTML maps', () => {
  it('SVG: one panel per setup side by side, a rect per cell, the bisected edges, the legend and the sentences; byte-stable', () => {
    const svg = sweepSvg(result())
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    // A rect per cell, a swatch per outcome in the legend, and the pattern over the two patterned swatches (issue 48).
    expect(svg.match(/<rect x=/g)).toHaveLength(12 + 3 + 2)
    expect(svg).toContain('>no-guard</text>')
    expect(svg).toContain('>cap-third</text>')
    expect(svg).toContain('demand (rps)')
    expect(svg).toContain('broken servers (of 20)')
    expect(svg).toContain('<title>2 of 20 broken, 2,000 rps: stuck</title>')
    expect(svg).toContain('<title>2 of 20 broken, 1,000 rps: recovered 40 s after the fix</title>')
    expect(svg.match(/stroke="#111"/g)).toHaveLength(4)
    expect(svg).toContain('>no-guard tips.</text>')
    expect(svg).toContain('up to 40 s after the fix')
    expect(sweepSvg(result())).toBe(svg)
    // Panels sit side by side: the second panel's title is to the right of the first.
    const xs = [...svg.matchAll(/<text x="([\d.]+)" y="18"/g)].map((m) => Number(m[1]))
    expect(xs).toHaveLength(2)
    expect(xs[1]).toBeGreaterThan(xs[0])
  })

  /** Each text's left and right edge, at about 6.5 px a character (the renderer's own estimate). */
  const textBounds = (svg: string) =>
    [...svg.matchAll(/<text x="([\d.-]+)" y="([\d.-]+)"([^>]*)>([^<]*)<\/text>/g)].map((m) => {
      const x = Number(m[1])
      const length = m[4].replace(/&[a-z]+;/g, '&').length * 6.5
      const anchor = /text-anchor="(\w+)"/.exec(m[3])?.[1] ?? 'start'
      const left = anchor === 'end' ? x - length : anchor === 'middle' ? x - length / 2 : x
      return {text: m[4], left, right: left + length, y: Number(m[2])}
    })

  it('SVG: every text, the axis titles first among them, lies inside the viewBox', () => {
    const svg = sweepSvg(result())
    const [, width, height] = /viewBox="0 0 ([\d.]+) ([\d.]+)"/.exec(svg)!.map(Number)
    const texts = textBounds(svg)
    expect(texts.filter((t) => t.text === 'demand (rps)')).toHaveLength(2)
    for (const t of texts) {
      expect(t.left, t.text).toBeGreaterThanOrEqual(0)
      expect(t.right, t.text).toBeLessThanOrEqual(width)
      expect(t.y, t.text).toBeLessThanOrEqual(height)
    }
  })

  it("SVG: no panel's counts run into the next panel's title", () => {
    const texts = textBounds(sweepSvg(result()))
    const counts = texts.find((t) => t.text.startsWith('3 stuck'))!
    const next = texts.find((t) => t.text === 'cap-third')!
    expect(counts.right).toBeLessThan(next.left)
  })

  it('SVG: the ◀ the notes explain is drawn, right of each map at the row the sentences are stated at', () => {
    const svg = sweepSvg(result())
    const pointers = [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" class="tipping-row">◀<\/text>/g)]
    expect(pointers).toHaveLength(2)
    // Tipping at 1,000 rps: the bottom row, level with its tick label.
    const tick = textBounds(svg).find((t) => t.text === '1,000')!
    expect(Number(pointers[0][2])).toBeCloseTo(tick.y, 0)
    expect(svg).toContain('◀ (right of each map): the demand the sentences are stated at, 1,000 rps.')
  })

  it('SVG: between two rows, the ◀ points between them and says so; with nothing to point at, no ◀ and no word of one', () => {
    const between = result()
    for (const s of between.setups) s.tipping = {...s.tipping, y: 1500}
    const svg = sweepSvg(between)
    const ys = [...svg.matchAll(/y="([\d.]+)" class="tipping-row">◀</g)].map((m) => Number(m[1]))
    const rowY = (label: string) => textBounds(svg).find((t) => t.text === label)!.y
    expect(ys).toHaveLength(2)
    expect(ys[0]).toBeCloseTo((rowY('1,000') + rowY('2,000')) / 2, 0)
    expect(svg).toContain('1,500 rps, between two rows of the grid.')
    const none = result()
    for (const s of none.setups) s.tipping = {...s.tipping, y: null}
    expect(sweepSvg(none)).not.toContain('◀')
  })

  it('HTML: the maps inline, the sentences, counts and what the outcomes mean', () => {
    const html = sweepHtml(result())
    expect(html).toMatch(/^<!doctype html>/)
    expect(html).toContain('<svg role="img" xmlns=')
    expect(html).toContain('<li>no-guard tips.</li>')
    expect(html).toContain('<tr><td>no-guard</td><td>2</td><td>1</td><td>3</td>')
    expect(html).toContain('Full service: completed requests within 1% of demand.')
  })
})
