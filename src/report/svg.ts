// Standalone SVG rendering of chart panels for reports that leave the terminal.
// Output is byte-for-byte deterministic: every number goes through num().

import {
  type ChartPanel,
  type ChartSeries,
  type TimeRange,
  type ValueScale,
  axisMax,
  formatSeconds,
  formatAxisNumber,
  isRightAxis,
  legendLabel,
  seriesStyles,
  timeRange,
  timeTicks,
  valueScale,
} from './chart.js'

export interface SvgOptions {
  width?: number
  panelHeight?: number
  title?: string
}

// Okabe and Ito's colour-blind-safe hues (blue, orange, reddish purple, bluish green): the first
// two, the usual pair (completed and demand), also far apart in lightness, so greyscale keeps them
// apart; every line also has the terminal's pattern as its dash (chart.ts's lineStyles), which
// tells them apart with no colour at all.
export const PALETTE = ['#0072b2', '#e69f00', '#cc79a7', '#009e73']
export const MARKER_COLOR = '#777'
// Wide enough that a dotted line's round caps read as dots.
const STROKE_WIDTH = 2
const GRID_COLOR = '#e6e6e6'
const AXIS_COLOR = '#999'
const TEXT_COLOR = '#333'

const MARGIN = {left: 64, right: 64, top: 30, bottom: 48}
const DOC_TITLE_HEIGHT = 32
// Rough glyph width at font-size 11, only used to keep labels from overlapping.
const CHAR_WIDTH = 6.5

interface Plot {
  left: number
  top: number
  width: number
  height: number
}

// One decimal keeps files small and byte-for-byte stable across runs.
function num(x: number): string {
  return String(Math.round(x * 10) / 10)
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${num(x)}" y="${num(y)}"${attrs}>${escapeXml(content)}</text>`
}

function line(x1: number, y1: number, x2: number, y2: number, attrs: string): string {
  return `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" ${attrs}/>`
}

function xOf(t: number, range: TimeRange, plot: Plot): number {
  return plot.left + ((t - range.t0) / range.span) * plot.width
}

function yOf(v: number, scale: ValueScale, plot: Plot): number {
  const f = Math.min(1, Math.max(0, v / scale.top))
  return plot.top + plot.height - f * plot.height
}

type Segment = Array<[number, number]>

// Splits a series at NaN gaps and keeps the min and max sample (in time order)
// per pixel bucket, so long series shrink to ~2 points per pixel and spikes survive.
function segments(t: ArrayLike<number>, values: ArrayLike<number>, range: TimeRange, buckets: number): Segment[] {
  const n = Math.min(t.length, values.length)
  const out: Segment[] = []
  let seg: Segment = []
  let bucket = -1
  let minI = -1
  let maxI = -1
  const flush = (): void => {
    if (minI < 0) return
    const a = Math.min(minI, maxI)
    const b = Math.max(minI, maxI)
    seg.push([t[a], values[a]])
    if (b !== a) seg.push([t[b], values[b]])
    minI = maxI = -1
  }
  const close = (): void => {
    flush()
    if (seg.length > 0) out.push(seg)
    seg = []
    bucket = -1
  }
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (!Number.isFinite(v)) {
      close()
      continue
    }
    const b = Math.min(buckets - 1, Math.max(0, Math.floor(((t[i] - range.t0) / range.span) * buckets)))
    if (b !== bucket) {
      flush()
      bucket = b
    }
    if (minI < 0 || v < values[minI]) minI = i
    if (maxI < 0 || v > values[maxI]) maxI = i
  }
  close()
  return out
}

function polyline(seg: Segment, scale: ValueScale, range: TimeRange, plot: Plot, stroke: string, dasharray: string): string {
  const points: string[] = []
  for (const [t, v] of seg) {
    const p = `${num(xOf(t, range, plot))},${num(yOf(v, scale, plot))}`
    if (p !== points[points.length - 1]) points.push(p)
  }
  // A lone point needs a zero-length line (drawn as a dot by the round cap).
  if (points.length === 1) points.push(points[0])
  const dash = dasharray ? ` stroke-dasharray="${dasharray}"` : ''
  return `<polyline fill="none" stroke="${stroke}" stroke-width="${STROKE_WIDTH}" stroke-linejoin="round" stroke-linecap="round"${dash} points="${points.join(' ')}"/>`
}

function yAxis(scale: ValueScale, plot: Plot, side: 'left' | 'right', unit: string): string[] {
  const out: string[] = []
  const x = side === 'left' ? plot.left : plot.left + plot.width
  const labelX = side === 'left' ? x - 6 : x + 6
  const anchor = side === 'left' ? ' text-anchor="end"' : ''
  const tickX = side === 'left' ? x - 4 : x + 4
  for (const v of scale.ticks) {
    const y = yOf(v, scale, plot)
    out.push(line(x, y, tickX, y, `stroke="${AXIS_COLOR}"`))
    out.push(text(labelX, y + 4, formatAxisNumber(v), anchor))
  }
  if (unit) out.push(text(labelX, plot.top - 8, unit, `${anchor} fill="#777"`))
  out.push(line(x, plot.top, x, plot.top + plot.height, `stroke="${AXIS_COLOR}"`))
  return out
}

function xTicks(range: TimeRange, plot: Plot): number[] {
  return timeTicks(range, Math.max(2, Math.floor(plot.width / 80)))
}

function xAxis(range: TimeRange, plot: Plot): string[] {
  const out: string[] = []
  const bottom = plot.top + plot.height
  for (const tick of xTicks(range, plot)) {
    out.push(text(xOf(tick, range, plot), bottom + 16, formatSeconds(tick), ' text-anchor="middle"'))
  }
  out.push(line(plot.left, bottom, plot.left + plot.width, bottom, `stroke="${AXIS_COLOR}"`))
  return out
}

// Gridlines follow the left axis and time ticks; drawn first so axes and data sit on top.
// Right-axis ticks would not line up with them, so that axis gets tick marks only.
function grid(scale: ValueScale, range: TimeRange, plot: Plot): string[] {
  const bottom = plot.top + plot.height
  const right = plot.left + plot.width
  const out: string[] = []
  for (const v of scale.ticks) {
    const y = yOf(v, scale, plot)
    out.push(line(plot.left, y, right, y, `stroke="${GRID_COLOR}"`))
  }
  for (const tick of xTicks(range, plot)) {
    const x = xOf(tick, range, plot)
    out.push(line(x, plot.top, x, bottom, `stroke="${GRID_COLOR}"`))
  }
  return out
}

// Labels sit inside the top of the plot; ones that would overlap drop a row.
function markers(panel: ChartPanel, range: TimeRange, plot: Plot): string[] {
  const out: string[] = []
  const rowEnds: number[] = []
  const visible = (panel.markers ?? [])
    .filter((m) => panel.t.length > 0 && m.t >= range.t0 && m.t <= range.t1)
    .map((m, i) => ({...m, i}))
    .sort((a, b) => a.t - b.t || a.i - b.i)
  for (const m of visible) {
    const x = xOf(m.t, range, plot)
    out.push(line(x, plot.top, x, plot.top + plot.height, `stroke="${MARKER_COLOR}" stroke-dasharray="4 3"`))
    let row = rowEnds.findIndex((end) => x + 3 > end)
    if (row < 0) row = rowEnds.length
    rowEnds[row] = x + 3 + m.label.length * CHAR_WIDTH + 4
    out.push(text(x + 3, plot.top + 11 + row * 12, m.label, ` font-size="10" fill="${MARKER_COLOR}"`))
  }
  return out
}

/** A legend's sample of a line: long enough to show each dash pattern at least twice. */
const SAMPLE = 24

function legend(panel: ChartPanel, plot: Plot): string[] {
  const out: string[] = []
  const y = plot.top + plot.height + 36
  const styles = seriesStyles(panel)
  let x = plot.left
  panel.series.forEach((s, i) => {
    const dash = styles[i].dash ? ` stroke-dasharray="${styles[i].dash}"` : ''
    out.push(
      line(
        x,
        y - 4,
        x + SAMPLE,
        y - 4,
        `stroke="${PALETTE[i % PALETTE.length]}" stroke-width="${STROKE_WIDTH}" stroke-linecap="round"${dash} class="legend-line"`,
      ),
    )
    const label = legendLabel(panel, s)
    out.push(text(x + SAMPLE + 4, y, label))
    x += SAMPLE + 4 + label.length * CHAR_WIDTH + 16
  })
  if (panel.note) out.push(text(x, y, `(${panel.note})`, ` fill="${MARKER_COLOR}"`))
  return out
}

// A pale band from the lowest to the highest sample per pixel, behind the line: where each value
// stands for many samples, it keeps the spikes and drops the means smooth away.
function band(panel: ChartPanel, s: ChartSeries, fill: string, scale: ValueScale, range: TimeRange, plot: Plot): string[] {
  if (!s.low || !s.high) return []
  const buckets = Math.max(1, Math.floor(plot.width))
  const lo = new Float64Array(buckets).fill(NaN)
  const hi = new Float64Array(buckets).fill(NaN)
  const n = Math.min(panel.t.length, s.low.length, s.high.length)
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(s.low[i]) || !Number.isFinite(s.high[i])) continue
    const b = Math.min(buckets - 1, Math.max(0, Math.floor(((panel.t[i] - range.t0) / range.span) * buckets)))
    if (!(lo[b] <= s.low[i])) lo[b] = s.low[i]
    if (!(hi[b] >= s.high[i])) hi[b] = s.high[i]
  }
  const top: string[] = []
  const bottom: string[] = []
  for (let b = 0; b < buckets; b++) {
    if (!Number.isFinite(lo[b])) continue
    const x = num(plot.left + ((b + 0.5) / buckets) * plot.width)
    top.push(`${x},${num(yOf(hi[b], scale, plot))}`)
    bottom.push(`${x},${num(yOf(lo[b], scale, plot))}`)
  }
  if (top.length === 0) return []
  return [`<polygon fill="${fill}" fill-opacity="0.2" stroke="none" points="${[...top, ...bottom.reverse()].join(' ')}"/>`]
}

function seriesLines(panel: ChartPanel, s: ChartSeries, i: number, scale: ValueScale, range: TimeRange, plot: Plot): string[] {
  const stroke = PALETTE[i % PALETTE.length]
  const dash = seriesStyles(panel)[i].dash
  return [
    ...band(panel, s, stroke, scale, range, plot),
    ...segments(panel.t, s.values, range, Math.max(1, Math.floor(plot.width))).map((seg) => polyline(seg, scale, range, plot, stroke, dash)),
  ]
}

function renderPanel(panel: ChartPanel, y0: number, width: number, panelHeight: number): string[] {
  const plot: Plot = {
    left: MARGIN.left,
    top: y0 + MARGIN.top,
    width: width - MARGIN.left - MARGIN.right,
    height: panelHeight - MARGIN.top - MARGIN.bottom,
  }
  const range = timeRange(panel.t)
  const hasRight = panel.series.some(isRightAxis)
  const left = valueScale(axisMax(panel, 'left'), panel.leftMax)
  const right = valueScale(axisMax(panel, 'right'), panel.rightMax)
  return [
    '<g>',
    text(plot.left, y0 + 16, panel.title, ' font-size="13" font-weight="bold"'),
    ...grid(left, range, plot),
    ...yAxis(left, plot, 'left', panel.leftUnit),
    ...(hasRight ? yAxis(right, plot, 'right', panel.rightUnit ?? '') : []),
    ...xAxis(range, plot),
    ...markers(panel, range, plot),
    ...panel.series.flatMap((s, i) => seriesLines(panel, s, i, isRightAxis(s) ? right : left, range, plot)),
    ...legend(panel, plot),
    '</g>',
  ]
}

export function renderSvg(panels: ChartPanel[], opts: SvgOptions = {}): string {
  const width = Math.max(240, Math.round(opts.width ?? 960))
  const panelHeight = Math.max(120, Math.round(opts.panelHeight ?? 240))
  const top = opts.title ? DOC_TITLE_HEIGHT : 0
  const height = top + panels.length * panelHeight
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11" fill="${TEXT_COLOR}">`,
  ]
  if (opts.title) out.push(`<title>${escapeXml(opts.title)}</title>`)
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`)
  if (opts.title) out.push(text(MARGIN.left, 22, opts.title, ' font-size="16" font-weight="bold"'))
  panels.forEach((p, i) => out.push(...renderPanel(p, top + i * panelHeight, width, panelHeight)))
  out.push('</svg>')
  return out.join('\n') + '\n'
}
