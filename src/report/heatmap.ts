// The maps of `sluice simulate --sweep`: one per setup, in the terminal, as SVG side by side, and
// as an HTML page. Each cell is one run's outcome; axes are labelled in the parameters' own units.

import type {CellOutcome, CellResult} from '../sweep/classify.js'
import type {Axis} from '../sweep/grid.js'
import {axisTitle, formatNumber} from '../sweep/params.js'
import {outcomeCounts, type SetupSweep, type SweepResult} from '../sweep/sweep.js'
import {htmlPage, inlineSvg} from './html.js'
import {escapeXml} from './svg.js'

// Each outcome has one look wherever a map is read: a glyph on the terminal, and in SVG a fill
// with the same cue as a pattern over it (· dots, ▒ hatching, █ solid), in hues that stay apart
// for the common colour blindnesses and in lightness apart in greyscale (pale, mid, dark): no
// green against red.
const glyphs: Record<CellOutcome, string> = {unharmed: '·', recovered: '▒', stuck: '█'}
/** A pool back at full service by the fix and one that needed time after it are both "recovered"; an operator cares which. */
const backByTheFix = '░'
const ansi: Record<CellOutcome, number> = {unharmed: 36, recovered: 33, stuck: 31}

function glyph(cell: CellResult): string {
  return cell.outcome === 'recovered' && cell.recoveredSecondsAfterFix === 0 ? backByTheFix : glyphs[cell.outcome]
}

/** How long a run goes on after its fix, when every cell shares one: a reader judges "stuck" by it. */
function afterFix(result: SweepResult): string {
  const faults = result.scenario.faults
  if (faults.length === 0 || result.axes.some((a) => a.param.name === 'fault-duration')) return ''
  const fix = Math.max(...faults.map((f) => f.to))
  return `, ${formatNumber(result.scenario.duration - fix)} s after the fix`
}

/** What each outcome means, said once for the terminal legend, the SVG and the HTML page. */
export function outcomeLegend(result: SweepResult): Record<CellOutcome, string> {
  return {
    unharmed: 'unharmed: full service every second',
    recovered: 'recovered: below full service for a while, then back at it to the end of the run',
    stuck: `stuck: not back at full service by the end of the run (${formatNumber(result.scenario.duration)} s${afterFix(result)}), although the fault was fixed`,
  }
}

function paint(text: string, outcome: CellOutcome, color: boolean): string {
  return color ? `\x1b[${ansi[outcome]}m${text}\x1b[0m` : text
}

const visible = (s: string): number => s.replace(/\x1b\[[0-9;]*m/g, '').length

/**
 * Indices of the values to label along an axis, from the lowest, spaced so labels of `room`
 * characters never touch, always ending on the highest value (its label replaces one too close to it).
 */
function labelled(count: number, cellWidth: number, room: number): number[] {
  const every = Math.max(1, Math.ceil(room / cellWidth))
  const out: number[] = []
  for (let i = 0; i < count; i += every) out.push(i)
  const last = count - 1
  if (out.at(-1) !== last) {
    if (out.length > 1 && last - out[out.length - 1] < every) out.pop()
    out.push(last)
  }
  return out
}

function xAxisLines(x: Axis, cellWidth: number, gutter: number, title: string): string[] {
  const labels = x.values.map(formatNumber)
  const room = Math.max(...labels.map((l) => l.length)) + 1
  const ticks = labelled(x.values.length, cellWidth, room)
  const rule = Array.from({length: x.values.length * cellWidth}, () => '─')
  let text = ''
  for (const i of ticks) {
    rule[i * cellWidth] = '┬'
    text += ' '.repeat(Math.max(0, i * cellWidth - text.length)) + labels[i]
  }
  return [' '.repeat(gutter) + '└' + rule.join(''), ' '.repeat(gutter + 1) + text, ' '.repeat(gutter + 1) + title]
}

/** A point drawn over a map: the cell nearest it shows `glyph` instead of its outcome's; the SVG draws it where it lies, with `label` beside it. */
export interface MapMark {
  x: number
  y: number
  glyph: string
  label?: string
}

/** What is drawn over the SVG maps: points, arrows from one to another (by index), and a note saying what they are. */
export interface MapOverlay {
  marks: MapMark[]
  arrows: Array<[number, number]>
  note: string
}

const nearest = (values: number[], v: number): number => values.reduce((best, w, i) => (Math.abs(w - v) < Math.abs(values[best] - v) ? i : best), 0)

function cellRow(cells: CellResult[], from: number, count: number, cellWidth: number, color: boolean, marks: Map<number, string> = new Map()): string {
  let out = ''
  for (let i = from; i < from + count; i++) {
    const mark = marks.get(i - from)
    out += paint(mark ? mark + glyph(cells[i]).repeat(cellWidth - 1) : glyph(cells[i]).repeat(cellWidth), cells[i].outcome, color)
  }
  return out
}

function countsText(cells: CellResult[]): string {
  const c = outcomeCounts(cells)
  return `${c.stuck} stuck, ${c.recovered} recovered, ${c.unharmed} unharmed of ${cells.length}`
}

/** One setup's map: y rows from the highest at the top, a labelled x axis under it; `marks` drawn over their nearest cells. */
export function mapLines(result: SweepResult, setup: SetupSweep, cellWidth: number, color: boolean, marks: MapMark[] = []): string[] {
  const [x, y] = result.axes
  const nx = x.values.length
  const yLabels = y.values.map(formatNumber)
  const labelRows = new Set(labelled(y.values.length, 1, 3))
  const gutter = Math.max(...yLabels.map((l) => l.length)) + 1
  const lines = [`${setup.name}: ${countsText(setup.cells)}`, axisTitle(y.param, result.scenario, x.param)]
  for (let r = 0; r < y.values.length; r++) {
    const yi = y.values.length - 1 - r
    const label = labelRows.has(yi) ? yLabels[yi] : ''
    const here = new Map(marks.filter((m) => nearest(y.values, m.y) === yi).map((m) => [nearest(x.values, m.x), m.glyph]))
    const row = cellRow(setup.cells, yi * nx, nx, cellWidth, color, here)
    lines.push(`${label.padStart(gutter - 1)} ${label ? '┤' : '│'}${row}${y.values[yi] === setup.tipping.y ? ' ◀' : ''}`)
  }
  return [...lines, ...xAxisLines(x, cellWidth, gutter, axisTitle(x.param, result.scenario, y.param))]
}

/** One --sweep: a strip per setup, stacked over one shared x axis. */
function stripLines(result: SweepResult, cellWidth: number, color: boolean): string[] {
  const [x] = result.axes
  const gutter = Math.max(...result.setups.map((s) => s.name.length)) + 1
  const lines = result.setups.map((s) => `${s.name.padEnd(gutter)}│${cellRow(s.cells, 0, x.values.length, cellWidth, color)}  ${countsText(s.cells)}`)
  return [...lines, ...xAxisLines(x, cellWidth, gutter, axisTitle(x.param, result.scenario))]
}

/** Lays blocks of lines next to each other while they fit in `width`, then starts a new band below. */
function sideBySide(blocks: string[][], width: number): string[] {
  const gap = 4
  const widths = blocks.map((b) => Math.max(...b.map(visible)))
  const out: string[] = []
  let band: number[] = []
  const flush = (): void => {
    if (band.length === 0) return
    const height = Math.max(...band.map((i) => blocks[i].length))
    for (let r = 0; r < height; r++) {
      out.push(
        band
          .map((i, k) => {
            const line = blocks[i][r] ?? ''
            return k === band.length - 1 ? line : line + ' '.repeat(widths[i] - visible(line) + gap)
          })
          .join('')
          .trimEnd(),
      )
    }
    out.push('')
    band = []
  }
  for (let i = 0; i < blocks.length; i++) {
    const used = band.reduce((n, j) => n + widths[j] + gap, 0)
    if (band.length > 0 && used + widths[i] > width) flush()
    band.push(i)
  }
  flush()
  return out
}

function sweepTitle(result: SweepResult): string {
  const [x, y] = result.axes
  const what = y ? `${x.param.name} × ${y.param.name}` : x.param.name
  const runs = result.setups.reduce((n, s) => n + s.cells.length, 0)
  return `${result.scenario.name}: sweep of ${what}, ${formatNumber(runs)} runs (${result.setups.length} setup${result.setups.length === 1 ? '' : 's'})`
}

/** What `simulate --sweep` prints: the maps, a legend, and each setup's tipping point in words. */
export function renderSweep(result: SweepResult, options: {color: boolean; width: number}): string {
  const [x, y] = result.axes
  const legend = outcomeLegend(result)
  const cellWidth = (y ? 8 : Math.max(...result.setups.map((s) => s.name.length)) + 40) + x.values.length * 2 <= options.width ? 2 : 1
  const body = y
    ? sideBySide(
        result.setups.map((s) => mapLines(result, s, cellWidth, options.color)),
        options.width,
      )
    : [...stripLines(result, cellWidth, options.color), '']
  const key = [
    `${paint(glyphs.unharmed, 'unharmed', options.color)} ${legend.unharmed}`,
    `${paint(backByTheFix, 'recovered', options.color)} ${legend.recovered}: back by the fix`,
    `${paint(glyphs.recovered, 'recovered', options.color)} ${legend.recovered}: back some seconds after the fix (--json and --svg say how many)`,
    `${paint(glyphs.stuck, 'stuck', options.color)} ${legend.stuck}`,
  ]
  const tipY = result.setups[0].tipping.y
  const marker =
    !y || tipY === null
      ? []
      : y.values.includes(tipY)
        ? [`◀ the row the tipping points below are stated at (${y.param.say(tipY, result.scenario)}, the scenario's own)`]
        : [`tipping points below are stated at ${y.param.say(tipY, result.scenario)}, the scenario's own: a row run between the grid's rows`]
  return [sweepTitle(result), '', ...body, ...key, ...marker, '', 'tipping points:', ...result.setups.map((s) => `  ${s.sentence}`)].join('\n')
}

// ---- SVG ------------------------------------------------------------------

/** The SVG's fills: a pale sky blue, and a dark red-brown; recovered cells shade between two oranges (recoveredFill). */
export const fills = {unharmed: '#d4ecf9', stuck: '#6b1d00'}
/** The pattern drawn over each outcome's cells, by id: the SVG's second cue, after the terminal's glyphs. */
export const cellPatterns: Record<CellOutcome, string | null> = {unharmed: 'cells-dotted', recovered: 'cells-hatched', stuck: null}
const patternDefs = [
  // · : a dot in each 6 px square, dark enough to show on the pale fill.
  '<pattern id="cells-dotted" width="6" height="6" patternUnits="userSpaceOnUse"><circle cx="3" cy="3" r="1.2" fill="#1f4e6b"/></pattern>',
  // ▒ : dark diagonal hatching, over the lightest orange and the darkest alike.
  '<pattern id="cells-hatched" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="2" height="5" fill="#000" fill-opacity="0.55"/></pattern>',
]
// The top margin holds the setup's name, its counts, then the y axis title on a line of its own.
const MARGIN = {left: 70, right: 24, top: 58, bottom: 62}
const CHAR_WIDTH = 6.5

/** Recovered cells shade from light (back at the fix) to dark (the slowest recovery on the page). */
function recoveredFill(seconds: number, slowest: number): string {
  const f = slowest > 0 ? Math.min(1, seconds / slowest) : 0
  const mix = (a: number, b: number): string =>
    Math.round(a + (b - a) * f)
      .toString(16)
      .padStart(2, '0')
  // From a light yellow-orange to Okabe and Ito's orange: lighter than stuck's fill at its darkest.
  return `#${mix(0xfb, 0xe6)}${mix(0xdf, 0x9f)}${mix(0x8f, 0x00)}`
}

const n1 = (v: number): string => String(Math.round(v * 10) / 10)

function svgText(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${n1(x)}" y="${n1(y)}"${attrs}>${escapeXml(content)}</text>`
}

interface PanelGeometry {
  cell: number
  cellHeight: number
  width: number
  height: number
}

function geometry(result: SweepResult): PanelGeometry {
  const [x, y] = result.axes
  const ny = y ? y.values.length : 1
  const cell = Math.max(6, Math.min(28, Math.floor(360 / Math.max(x.values.length, ny))))
  const cellHeight = y ? cell : 28
  // A panel is as wide as its counts line too, so it never runs into the next panel's title.
  const counts = Math.max(...result.setups.map((s) => countsText(s.cells).length)) * CHAR_WIDTH + 16
  const width = Math.max(MARGIN.left + x.values.length * cell + MARGIN.right, MARGIN.left + counts)
  return {cell, cellHeight, width, height: MARGIN.top + ny * cellHeight + MARGIN.bottom}
}

/**
 * Where the ◀ points, in rows from the bottom of the map (0.5 is the middle of the lowest row):
 * the row the tipping points are stated at, or between two rows when the scenario's own value
 * falls between the grid's. Null when the sentences are not stated at a value of the y axis, or
 * it lies outside the map.
 */
export function tippingRow(result: SweepResult): number | null {
  const [, y] = result.axes
  const at = result.setups[0]?.tipping.y ?? null
  if (!y || at === null || at < y.from || at > y.to) return null
  const exact = y.values.indexOf(at)
  if (exact >= 0) return exact + 0.5
  const above = y.values.findIndex((v) => v > at)
  if (above <= 0) return null
  const below = above - 1
  return below + 0.5 + (at - y.values[below]) / (y.values[above] - y.values[below])
}

function svgPanel(result: SweepResult, setup: SetupSweep, left: number, g: PanelGeometry, slowest: number, overlay?: MapOverlay): string[] {
  const [x, y] = result.axes
  const nx = x.values.length
  const ny = y ? y.values.length : 1
  const plotLeft = left + MARGIN.left
  const plotTop = MARGIN.top
  const plotBottom = plotTop + ny * g.cellHeight
  const out = ['<g>', svgText(plotLeft, 18, setup.name, ' font-size="13" font-weight="bold"'), svgText(plotLeft, 32, countsText(setup.cells), ' fill="#777"')]
  setup.cells.forEach((c, i) => {
    const xi = i % nx
    const yi = Math.floor(i / nx)
    const fill = c.outcome === 'recovered' ? recoveredFill(c.recoveredSecondsAfterFix ?? 0, slowest) : fills[c.outcome]
    const at = y ? `${x.param.say(x.values[xi], result.scenario)}, ${y.param.say(y.values[yi], result.scenario)}` : x.param.say(x.values[xi], result.scenario)
    const detail = c.outcome === 'recovered' ? ` ${formatNumber(c.recoveredSecondsAfterFix ?? 0)} s after the fix` : ''
    out.push(
      `<rect x="${n1(plotLeft + xi * g.cell)}" y="${n1(plotBottom - (yi + 1) * g.cellHeight)}" width="${n1(g.cell)}" height="${n1(g.cellHeight)}" fill="${fill}"><title>${escapeXml(`${at}: ${c.outcome}${detail}`)}</title></rect>`,
    )
  })
  // Each outcome's pattern over its cells, one path a pattern: a second cue beside the fill.
  for (const outcome of ['unharmed', 'recovered'] as const) {
    const d = setup.cells
      .map((c, i) =>
        c.outcome === outcome
          ? `M${n1(plotLeft + (i % nx) * g.cell)} ${n1(plotBottom - (Math.floor(i / nx) + 1) * g.cellHeight)}h${n1(g.cell)}v${n1(g.cellHeight)}h-${n1(g.cell)}z`
          : '',
      )
      .join('')
    if (d) out.push(`<path d="${d}" fill="url(#${cellPatterns[outcome]})" class="cells-${outcome}"/>`)
  }
  // The bisected edges, where the grid alone would only say "between two cells".
  const xOf = (v: number): number => plotLeft + (((v - x.from) / (x.to - x.from)) * (nx - 1) + 0.5) * g.cell
  setup.edges.forEach((line, yi) => {
    const top = plotBottom - (yi + 1) * g.cellHeight
    for (const t of line.transitions) {
      const px = xOf((t.holds + t.stuck) / 2)
      out.push(`<line x1="${n1(px)}" y1="${n1(top)}" x2="${n1(px)}" y2="${n1(top + g.cellHeight)}" stroke="#111" stroke-width="2"/>`)
    }
  })
  const tick = (px: number, py: number, label: string, anchor: string): string => svgText(px, py, label, ` text-anchor="${anchor}"`)
  for (const i of labelled(nx, g.cell, 7 * Math.max(...x.values.map((v) => formatNumber(v).length)) + 8))
    out.push(tick(plotLeft + (i + 0.5) * g.cell, plotBottom + 16, formatNumber(x.values[i]), 'middle'))
  out.push(svgText(plotLeft + (nx * g.cell) / 2, plotBottom + 36, axisTitle(x.param, result.scenario, y?.param), ' text-anchor="middle"'))
  if (y) {
    for (const i of labelled(ny, g.cellHeight, 14)) out.push(tick(plotLeft - 6, plotBottom - (i + 0.5) * g.cellHeight + 4, formatNumber(y.values[i]), 'end'))
    // From the panel's left edge, not ending at the plot: ending there cut the first panel's title off at the page's edge.
    out.push(svgText(left + 8, plotTop - 8, axisTitle(y.param, result.scenario, x.param), ' fill="#555"'))
    const row = tippingRow(result)
    if (row !== null) out.push(svgText(plotLeft + nx * g.cell + 3, plotBottom - row * g.cellHeight + 4, '◀', ' class="tipping-row"'))
    if (overlay) {
      // Where a value lies, not its nearest cell: the middle of the first cell is `from`, of the last `to`.
      const yOf = (v: number): number => plotBottom - (((v - y.from) / (y.to - y.from)) * (ny - 1) + 0.5) * g.cellHeight
      for (const [from, to] of overlay.arrows) {
        const a = overlay.marks[from]
        const b = overlay.marks[to]
        out.push(
          `<line x1="${n1(xOf(a.x))}" y1="${n1(yOf(a.y))}" x2="${n1(xOf(b.x))}" y2="${n1(yOf(b.y))}" stroke="#111" stroke-width="2" marker-end="url(#arrow)" class="lever"/>`,
        )
      }
      overlay.marks.forEach((m, k) => {
        const filled = m.glyph === '●'
        // The first mark's label above it, the others' below, so two marks a row apart do not write over each other.
        const dy = k === 0 ? -8 : 16
        out.push(
          `<circle cx="${n1(xOf(m.x))}" cy="${n1(yOf(m.y))}" r="5" fill="${filled ? '#111' : '#fff'}" stroke="#111" stroke-width="2" class="mark"/>`,
          ...(m.label ? [svgText(xOf(m.x) + 8, yOf(m.y) + dy, m.label, ' font-weight="bold" paint-order="stroke" stroke="#fff" stroke-width="3"')] : []),
        )
      })
    }
  }
  out.push('</g>')
  return out
}

/** The maps side by side, a legend, and the tipping points in words under them. */
export function sweepSvg(result: SweepResult, overlay?: MapOverlay): string {
  const g = geometry(result)
  const slowest = Math.max(0, ...result.setups.flatMap((s) => s.cells.map((c) => (c.outcome === 'recovered' ? (c.recoveredSecondsAfterFix ?? 0) : 0))))
  const legend = outcomeLegend(result)
  const [, y] = result.axes
  const row = tippingRow(result)
  const tipY = result.setups[0]?.tipping.y ?? null
  const pointer =
    row === null || !y || tipY === null
      ? ''
      : ` ◀ (right of each map): the ${y.param.name} the sentences are stated at, ${y.param.say(tipY, result.scenario)}${Number.isInteger(row - 0.5) ? '' : ', between two rows of the grid'}.`
  const notes = [
    ...result.setups.map((s) => s.sentence),
    `Black marks: where the outcome changes between stuck and not stuck, found by bisection.${pointer}`,
    ...(overlay ? [overlay.note] : []),
  ]
  // Wide enough for the longest line of text too (about 6.5 px a character at 11 px), so no sentence is cut off.
  const longest = Math.max(...notes.map((n) => n.length), ...Object.values(legend).map((l) => l.length + 60))
  const width = Math.max(720, result.setups.length * g.width, Math.ceil(MARGIN.left + longest * 6.5 + MARGIN.right))
  const legendTop = 40 + g.height
  const height = legendTop + 3 * 18 + 12 + notes.length * 18 + 12
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" fill="#333">`,
    `<title>${escapeXml(sweepTitle(result))}</title>`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<defs>${patternDefs.join('')}${
      overlay?.arrows.length
        ? '<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#111"/></marker>'
        : ''
    }</defs>`,
    svgText(MARGIN.left, 24, sweepTitle(result), ' font-size="16" font-weight="bold"'),
    '<g transform="translate(0,40)">',
    ...result.setups.flatMap((s, i) => svgPanel(result, s, i * g.width, g, slowest, overlay)),
    '</g>',
  ]
  const swatches: Array<[CellOutcome, string, string]> = [
    ['unharmed', fills.unharmed, legend.unharmed],
    ['recovered', recoveredFill(slowest / 2, slowest), `${legend.recovered} (darker: slower, up to ${formatNumber(slowest)} s after the fix)`],
    ['stuck', fills.stuck, legend.stuck],
  ]
  swatches.forEach(([outcome, fill, label], i) => {
    const top = legendTop + i * 18
    const pattern = cellPatterns[outcome]
    out.push(
      `<rect x="${MARGIN.left}" y="${top}" width="12" height="12" fill="${fill}"/>`,
      ...(pattern ? [`<rect x="${MARGIN.left}" y="${top}" width="12" height="12" fill="url(#${pattern})"/>`] : []),
      svgText(MARGIN.left + 18, top + 10, `${glyphs[outcome]} ${label}`),
    )
  })
  notes.forEach((note, i) => out.push(svgText(MARGIN.left, legendTop + 3 * 18 + 16 + i * 18, note)))
  out.push('</svg>')
  return out.join('\n') + '\n'
}

/** A page to share: the maps, the tipping points, and each setup's counts, with what the outcomes mean. */
export function sweepHtml(result: SweepResult): string {
  const e = escapeXml
  const legend = outcomeLegend(result)
  const rows = result.setups
    .map((s) => {
      const c = outcomeCounts(s.cells)
      return `<tr><td>${e(s.name)}</td><td>${c.unharmed}</td><td>${c.recovered}</td><td>${c.stuck}</td><td>${e(s.sentence)}</td></tr>`
    })
    .join('\n')
  return htmlPage(
    sweepTitle(result),
    `${inlineSvg(sweepSvg(result))}
<h2>Tipping points</h2>
<ul>
${result.setups.map((s) => `<li>${e(s.sentence)}</li>`).join('\n')}
</ul>
<table><thead><tr><th>setup</th><th>unharmed</th><th>recovered</th><th>stuck</th><th>in words</th></tr></thead><tbody>
${rows}
</tbody></table>
<h2>What the cells mean</h2>
<ul>
${(['unharmed', 'recovered', 'stuck'] as const).map((o) => `<li>${e(legend[o])}</li>`).join('\n')}
<li>Full service: completed requests within 1% of demand.</li>
</ul>`,
  )
}
