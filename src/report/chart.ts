// Terminal line charts drawn with braille dots, plus the scale/tick helpers
// that svg.ts shares so both renderers label axes identically.

export interface ChartSeries {
  label: string
  values: ArrayLike<number> // same length as ChartPanel.t; NaN means "no data" (gap)
  axis?: 'left' | 'right' // default 'left'
  // Lowest and highest sample behind each value, when each value stands for many (a long run's
  // record): drawn as a band around the line so a spike or drop between values still shows.
  low?: ArrayLike<number>
  high?: ArrayLike<number>
}

export interface ChartMarker {
  t: number
  label: string
}

export interface ChartPanel {
  title: string
  t: ArrayLike<number> // seconds, ascending
  series: ChartSeries[] // 1..4 series
  leftUnit: string
  rightUnit?: string
  leftMax?: number // fixed y max for the left axis (otherwise from data, min 0 always)
  rightMax?: number
  markers?: ChartMarker[]
  // Said after the legend: what the reader needs to read the chart right (points clipped above the axis).
  note?: string
}

export interface TerminalChartOptions {
  width?: number
  height?: number
  color?: boolean
}

export interface ValueScale {
  top: number
  ticks: number[]
}

export interface TimeRange {
  t0: number
  t1: number
  span: number
}

const NICE_MULTIPLES = [1, 2, 2.5, 5, 10]

// Strips float noise (0.30000000000000004) so ticks compare and print exactly.
function clean(x: number): number {
  return Number(x.toPrecision(12))
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x))
}

// Smallest "nice" number (1, 2, 2.5, 5 times a power of ten) that is >= raw.
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1
  const base = 10 ** Math.floor(Math.log10(raw))
  for (const m of NICE_MULTIPLES) {
    const step = clean(m * base)
    if (step >= raw * (1 - 1e-9)) return step
  }
  return clean(10 * base)
}

// Y axes always start at 0. With data-derived maxima the top is rounded up to a
// whole number of nice steps, which yields 3-4 ticks; a fixed max is honoured exactly.
export function valueScale(dataMax: number, fixedMax?: number): ValueScale {
  if (fixedMax !== undefined && fixedMax > 0 && Number.isFinite(fixedMax)) {
    const step = niceStep(fixedMax / 3)
    const ticks: number[] = []
    for (let i = 0; clean(i * step) <= fixedMax * (1 + 1e-9); i++) ticks.push(clean(i * step))
    return {top: fixedMax, ticks}
  }
  const max = dataMax > 0 && Number.isFinite(dataMax) ? dataMax : 1
  const step = niceStep(max / 3)
  const n = Math.max(1, Math.ceil(max / step - 1e-9))
  const ticks: number[] = []
  for (let i = 0; i <= n; i++) ticks.push(clean(i * step))
  return {top: clean(n * step), ticks}
}

export function timeRange(t: ArrayLike<number>): TimeRange {
  const n = t.length
  const t0 = n > 0 ? t[0] : 0
  const t1 = n > 0 ? t[n - 1] : 0
  // A zero span would divide by zero when mapping time to columns.
  return {t0, t1, span: t1 > t0 ? t1 - t0 : 1}
}

export function timeTicks(range: TimeRange, maxTicks: number): number[] {
  const {t0, t1} = range
  if (!(t1 > t0)) return [t0]
  const step = niceStep((t1 - t0) / Math.max(1, maxTicks))
  const first = Math.ceil(t0 / step - 1e-9)
  const ticks: number[] = []
  for (let i = first; clean(i * step) <= t1 + step * 1e-9; i++) ticks.push(clean(i * step))
  return ticks
}

function trimNumber(x: number, precision: number): string {
  return String(Number(x.toPrecision(precision)))
}

export function formatAxisNumber(v: number): string {
  const a = Math.abs(v)
  if (a >= 1e6) return trimNumber(v / 1e6, 4) + 'M'
  if (a >= 1e4) return trimNumber(v / 1e3, 4) + 'k'
  return trimNumber(v, 4)
}

export function formatSeconds(s: number): string {
  return trimNumber(s, 6) + 's'
}

export function isRightAxis(s: ChartSeries): boolean {
  return s.axis === 'right'
}

// Largest finite value of the series on one axis; 0 when there is no data.
export function axisMax(panel: ChartPanel, axis: 'left' | 'right'): number {
  let max = 0
  for (const s of panel.series) {
    if ((axis === 'right') !== isRightAxis(s)) continue
    max = Math.max(max, seriesMax(s.high ?? s.values, panel.t.length))
  }
  return max
}

// Largest finite value among the first n; 0 when there is none. A loop, not Math.max(...values):
// spreading a long series overflows the call stack.
export function seriesMax(values: ArrayLike<number>, n = values.length): number {
  let max = 0
  const end = Math.min(n, values.length)
  for (let i = 0; i < end; i++) {
    const v = values[i]
    if (Number.isFinite(v) && v > max) max = v
  }
  return max
}

/** Each step of a runbook where it started, by its number in the runbook (from 1, as the plan numbers it). */
export function stepMarkers(steps: ReadonlyArray<{index: number; startedAt: number | null}>): ChartMarker[] {
  return steps.flatMap((s) => (s.startedAt === null ? [] : [{t: s.startedAt, label: String(s.index + 1)}]))
}

/** The value below which a share `q` of the finite values lie (nearest rank); 0 when there are none. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const finite = Array.from(values).filter(Number.isFinite)
  if (finite.length === 0) return 0
  finite.sort((a, b) => a - b)
  return finite[Math.min(finite.length - 1, Math.max(0, Math.ceil(q * finite.length) - 1))]
}

/**
 * A left axis that one spike cannot flatten: scaled to the larger of `envelope` (what the line is
 * read against, such as demand) and the 95th percentile of the plotted values, times `margin`,
 * rounded up to a nice top. Values above it are drawn at the top; how many is counted so the
 * chart can say so.
 */
export function robustLeftAxis(panel: ChartPanel, envelope: number, margin = 1.5): {max: number; clipped: number} {
  const values = panel.series.filter((s) => !isRightAxis(s)).flatMap((s) => Array.from(s.high ?? s.values))
  const bulk = Math.max(envelope, quantile(values, 0.95))
  const all = seriesMax(values)
  if (!(bulk > 0) || all <= bulk * margin) return {max: valueScale(all).top, clipped: 0}
  const max = valueScale(bulk * margin).top
  return {max, clipped: values.filter((v) => v > max).length}
}

/** The note a clipped axis carries: "3 points above 2,500 rps clipped". */
export function clippedNote(clipped: number, max: number, unit: string): string | undefined {
  if (clipped === 0) return undefined
  return `${clipped} point${clipped === 1 ? '' : 's'} above ${max.toLocaleString('en-US')}${unit ? ` ${unit}` : ''} clipped`
}

export function legendLabel(panel: ChartPanel, s: ChartSeries): string {
  if (!isRightAxis(s)) return panel.leftUnit ? `${s.label} (${panel.leftUnit})` : s.label
  return panel.rightUnit ? `${s.label} (${panel.rightUnit}, right axis)` : `${s.label} (right axis)`
}

// ---- braille canvas -------------------------------------------------------

// Bit for the dot at [dot column within cell][dot row within cell, from top].
const DOT_BITS = [
  [0x01, 0x02, 0x04, 0x40],
  [0x08, 0x10, 0x20, 0x80],
]
const BRAILLE_BASE = 0x2800

// Owner 0 = empty, 1 = marker, 2+i = series i; drives the cell colour.
const OWNER_MARKER = 1
const OWNER_SERIES = 2
const SERIES_COLORS = [36, 33, 35, 32] // cyan, yellow, magenta, green
const MARKER_COLOR = 90 // grey
const RESET = '\x1b[0m'

interface Canvas {
  width: number // cells
  height: number // cells
  bits: Uint8Array
  owner: Uint8Array
}

function createCanvas(width: number, height: number): Canvas {
  return {width, height, bits: new Uint8Array(width * height), owner: new Uint8Array(width * height)}
}

// x is a dot column, r a dot row counted from the bottom (0 = value 0).
function setDot(c: Canvas, x: number, r: number, owner: number): void {
  const fromTop = c.height * 4 - 1 - r
  const cell = (fromTop >> 2) * c.width + (x >> 1)
  c.bits[cell] |= DOT_BITS[x & 1][fromTop & 3]
  c.owner[cell] = owner
}

function dotColumn(time: number, range: TimeRange, cols: number): number {
  return clamp(Math.floor(((time - range.t0) / range.span) * cols), 0, cols - 1)
}

// Mean of the finite samples per dot column, so dense series keep their shape.
// Columns no sample falls into (sparse series) are linearly interpolated so the
// line stays continuous; columns whose samples are all NaN stay NaN (a gap).
function columnMeans(t: ArrayLike<number>, values: ArrayLike<number>, range: TimeRange, cols: number): Float64Array {
  const n = Math.min(t.length, values.length)
  const sum = new Float64Array(cols)
  const count = new Uint32Array(cols)
  const seen = new Uint8Array(cols)
  for (let i = 0; i < n; i++) {
    const c = dotColumn(t[i], range, cols)
    seen[c] = 1
    if (Number.isFinite(values[i])) {
      sum[c] += values[i]
      count[c]++
    }
  }
  const means = new Float64Array(cols).fill(NaN)
  let j = 0
  for (let c = 0; c < cols; c++) {
    if (count[c] > 0) {
      means[c] = sum[c] / count[c]
      continue
    }
    if (seen[c]) continue
    const tc = range.t0 + ((c + 0.5) * range.span) / cols
    while (j + 1 < n && t[j + 1] <= tc) j++
    if (j + 1 >= n || t[j] > tc) continue
    const a = values[j]
    const b = values[j + 1]
    if (!Number.isFinite(a) || !Number.isFinite(b)) continue
    const f = t[j + 1] > t[j] ? (tc - t[j]) / (t[j + 1] - t[j]) : 0
    means[c] = a + (b - a) * f
  }
  return means
}

// Row of a value in dots from the bottom; values above the axis top are clipped.
function dotRow(v: number, scale: ValueScale, rows: number): number {
  return Math.round(clamp(v / scale.top, 0, 1) * (rows - 1))
}

// Path of dots [x, r, x, r, ...] in drawing order. A jump between neighbouring
// columns is split at its midpoint so each column carries the half nearest its
// own value, keeping steep drops visible without smearing into the next column.
function tracePath(means: Float64Array, scale: ValueScale, rows: number): number[] {
  const path: number[] = []
  let prev = -1
  for (let c = 0; c < means.length; c++) {
    if (!Number.isFinite(means[c])) {
      prev = -1
      continue
    }
    const r = dotRow(means[c], scale, rows)
    if (prev >= 0 && Math.abs(r - prev) > 1) {
      const dir = r > prev ? 1 : -1
      for (let k = prev + dir; k !== r; k += dir) {
        path.push(Math.abs(k - prev) < Math.abs(k - r) ? c - 1 : c, k)
      }
    }
    path.push(c, r)
    prev = r
  }
  return path
}

// Per dot column, the lowest low and highest high of the samples in it; NaN where there are none.
function columnRanges(
  t: ArrayLike<number>,
  low: ArrayLike<number>,
  high: ArrayLike<number>,
  range: TimeRange,
  cols: number,
): {lo: Float64Array; hi: Float64Array} {
  const lo = new Float64Array(cols).fill(NaN)
  const hi = new Float64Array(cols).fill(NaN)
  const n = Math.min(t.length, low.length, high.length)
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(low[i]) || !Number.isFinite(high[i])) continue
    const c = dotColumn(t[i], range, cols)
    if (!(lo[c] <= low[i])) lo[c] = low[i]
    if (!(hi[c] >= high[i])) hi[c] = high[i]
  }
  return {lo, hi}
}

// Each column's lowest and highest sample as a dot: filling the range between them would bury the
// lines of a series that swings through it every few seconds.
function drawBand(canvas: Canvas, band: {lo: Float64Array; hi: Float64Array}, scale: ValueScale, owner: number): void {
  const rows = canvas.height * 4
  for (let c = 0; c < band.lo.length; c++) {
    if (!Number.isFinite(band.lo[c])) continue
    setDot(canvas, c, dotRow(band.lo[c], scale, rows), owner)
    setDot(canvas, c, dotRow(band.hi[c], scale, rows), owner)
  }
}

/**
 * How a series' line is drawn and shown in the legend: which of its path's dots are set on a
 * terminal, and the same pattern as an SVG dash (svg.ts), so a chart looks one way wherever it is read.
 */
export interface LineStyle {
  glyph: string
  drawn: (k: number) => boolean
  /** stroke-dasharray in SVG pixels, with round caps: '' for a solid line. */
  dash: string
}

// Without colour (NO_COLOR, a pipe, a log, greyscale print, a colour-blind reader) a line is told
// from another only by its pattern: on each axis, each series gets the next pattern, solid first
// on the left, dotted first on the right. The SVG dashes follow the terminal's: long dashes for
// ╍, dots for ┅ and ┈ (closer for ┈), a short dash far apart for ╌.
export const lineStyles: Record<'left' | 'right', LineStyle[]> = {
  left: [
    {glyph: '━', drawn: () => true, dash: ''},
    {glyph: '╍', drawn: (k) => k % 6 < 3, dash: '7 5'},
    {glyph: '┅', drawn: (k) => k % 3 === 0, dash: '0.5 6'},
  ],
  right: [
    {glyph: '┈', drawn: (k) => k % 2 === 0, dash: '0.5 3'},
    {glyph: '╌', drawn: (k) => k % 8 < 2, dash: '3 9'},
  ],
}

/** The style of each series of a panel, by its place among the series on its axis. */
export function seriesStyles(panel: ChartPanel): LineStyle[] {
  const seen = {left: 0, right: 0}
  return panel.series.map((s) => {
    const axis = isRightAxis(s) ? 'right' : 'left'
    const styles = lineStyles[axis]
    return styles[seen[axis]++ % styles.length]
  })
}

function drawSeries(canvas: Canvas, means: Float64Array, scale: ValueScale, owner: number, style: LineStyle): void {
  const path = tracePath(means, scale, canvas.height * 4)
  for (let i = 0; i < path.length; i += 2) if (style.drawn(i / 2)) setDot(canvas, path[i], path[i + 1], owner)
}

interface PlacedMarker {
  cell: number
  label: string
}

function drawMarkers(canvas: Canvas, markers: ChartMarker[], range: TimeRange, hasData: boolean): PlacedMarker[] {
  const rows = canvas.height * 4
  const cols = canvas.width * 2
  const placed: PlacedMarker[] = []
  for (const m of markers) {
    if (!hasData || !(m.t >= range.t0 && m.t <= range.t1)) continue
    const x = dotColumn(m.t, range, cols)
    for (let fromTop = 0; fromTop < rows; fromTop += 2) setDot(canvas, x, rows - 1 - fromTop, OWNER_MARKER)
    placed.push({cell: x >> 1, label: m.label})
  }
  return placed
}

// ---- text assembly --------------------------------------------------------

function paint(text: string, code: number | undefined, color: boolean): string {
  return color && code !== undefined ? `\x1b[${code}m${text}${RESET}` : text
}

function ownerColor(owner: number): number | undefined {
  if (owner === OWNER_MARKER) return MARKER_COLOR
  if (owner >= OWNER_SERIES) return SERIES_COLORS[(owner - OWNER_SERIES) % SERIES_COLORS.length]
  return undefined
}

function seriesColor(i: number): number {
  return SERIES_COLORS[i % SERIES_COLORS.length]
}

function cellRow(v: number, scale: ValueScale, height: number): number {
  const fromTop = height * 4 - 1 - dotRow(v, scale, height * 4)
  return fromTop >> 2
}

// Tick label per cell row; when two ticks land on one row the first keeps it.
function tickLabels(scale: ValueScale, height: number): Map<number, string> {
  const labels = new Map<number, string>()
  for (const v of scale.ticks) {
    const row = cellRow(v, scale, height)
    if (!labels.has(row)) labels.set(row, formatAxisNumber(v))
  }
  return labels
}

function maxLength(labels: Map<number, string>): number {
  let w = 1
  for (const l of labels.values()) w = Math.max(w, l.length)
  return w
}

function plotRow(canvas: Canvas, row: number, color: boolean): string {
  let out = ''
  let active: number | undefined
  for (let x = 0; x < canvas.width; x++) {
    const cell = row * canvas.width + x
    const code = color ? ownerColor(canvas.owner[cell]) : undefined
    if (code !== active) {
      out += code === undefined ? RESET : `\x1b[${code}m`
      active = code
    }
    out += String.fromCharCode(BRAILLE_BASE + canvas.bits[cell])
  }
  return active === undefined ? out : out + RESET
}

// Places labels left to right on as few lines as needed so none overlap.
function markerLines(markers: PlacedMarker[], offset: number, lineWidth: number, color: boolean): string[] {
  const lines: {text: string; end: number}[] = []
  const sorted = markers.map((m, i) => ({...m, i})).sort((a, b) => a.cell - b.cell || a.i - b.i)
  for (const m of sorted) {
    let start = offset + m.cell
    if (start + m.label.length > lineWidth) start = Math.max(0, lineWidth - m.label.length)
    let line = lines.find((l) => l.end === 0 || start > l.end)
    if (!line) {
      line = {text: '', end: 0}
      lines.push(line)
    }
    line.text += ' '.repeat(start - line.end) + paint(m.label, MARKER_COLOR, color)
    line.end = start + m.label.length
  }
  return lines.map((l) => l.text)
}

function xAxis(ticks: number[], range: TimeRange, width: number, offset: number, closeRight: boolean): {axis: string; labels: string} {
  const axis = Array.from({length: width}, () => '─')
  let labels = ''
  for (const tick of ticks) {
    const cell = dotColumn(tick, range, width * 2) >> 1
    axis[cell] = '┬'
    const text = formatSeconds(tick)
    const start = Math.max(0, offset + cell - Math.floor(text.length / 2))
    // Skip labels that would collide with the previous one.
    if (labels.length > 0 && start <= labels.length) continue
    labels += ' '.repeat(start - labels.length) + text
  }
  return {axis: ' '.repeat(offset - 1) + '└' + axis.join('') + (closeRight ? '┘' : ''), labels}
}

function legend(panel: ChartPanel, color: boolean): string {
  const styles = seriesStyles(panel)
  const entries = panel.series.map((s, i) => paint(`${styles[i].glyph} ${legendLabel(panel, s)}`, seriesColor(i), color))
  return [...entries, ...(panel.note ? [`(${panel.note})`] : [])].join('  ')
}

export function renderTerminalChart(panel: ChartPanel, opts: TerminalChartOptions = {}): string {
  const width = Math.max(8, Math.floor(opts.width ?? 72))
  const height = Math.max(2, Math.floor(opts.height ?? 10))
  const color = opts.color ?? false
  const canvas = createCanvas(width, height)
  const range = timeRange(panel.t)
  const hasRight = panel.series.some(isRightAxis)
  const left = valueScale(axisMax(panel, 'left'), panel.leftMax)
  const right = valueScale(axisMax(panel, 'right'), panel.rightMax)

  // Markers first so series dots (and colours) win where they overlap.
  const markers = drawMarkers(canvas, panel.markers ?? [], range, panel.t.length > 0)
  const styles = seriesStyles(panel)
  panel.series.forEach((s, i) => {
    const scale = isRightAxis(s) ? right : left
    if (s.low && s.high) drawBand(canvas, columnRanges(panel.t, s.low, s.high, range, width * 2), scale, OWNER_SERIES + i)
    const means = columnMeans(panel.t, s.values, range, width * 2)
    drawSeries(canvas, means, scale, OWNER_SERIES + i, styles[i])
  })

  const leftLabels = tickLabels(left, height)
  const rightLabels = hasRight ? tickLabels(right, height) : new Map<number, string>()
  const gutter = maxLength(leftLabels) + 2
  const lineWidth = gutter + width + (hasRight ? 2 + maxLength(rightLabels) : 0)

  const lines = [panel.title, ...markerLines(markers, gutter, lineWidth, color)]
  for (let row = 0; row < height; row++) {
    const l = leftLabels.get(row)
    let line = (l ?? '').padStart(gutter - 2) + (l === undefined ? ' │' : ' ┤') + plotRow(canvas, row, color)
    if (hasRight) {
      const r = rightLabels.get(row)
      line += r === undefined ? '│' : `├ ${r}`
    }
    lines.push(line)
  }
  const x = xAxis(timeTicks(range, Math.max(2, Math.floor(width / 10))), range, width, gutter, hasRight)
  lines.push(x.axis, x.labels, legend(panel, color))
  return lines.join('\n')
}
