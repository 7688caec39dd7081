// What `sluice assess` prints: where the pool is, in sentences an operator can paste into the
// incident channel, the levers tried with what each does, and the map with the pool on it.

import type {Assessment} from '../assess/assess.js'
import {formatNumber} from '../sweep/params.js'
import {mapLines, sweepSvg, type MapMark, type MapOverlay} from './heatmap.js'
import {htmlPage, htmlParagraphs, inlineSvg} from './html.js'
import {escapeXml} from './svg.js'
import {formatTable} from './table.js'

const here = '●'
const afterShedding = '○'

/**
 * The shed that moves the pool along the map's demand axis: a share of all traffic. A share of
 * one type lowers demand by that share of the type only, and a whole type is no row of the map.
 */
const shedOfAll = (a: Assessment) => a.levers.find((l) => l.kind === 'shed' && l.type === 'all' && l.holds && l.value !== null && l.value < 100)

/** The pool on its map, and where the smallest shed would move it (shedding lowers demand; the other levers change the map itself). */
export function assessMarks(a: Assessment): MapMark[] {
  const shed = shedOfAll(a)
  // The pool itself is drawn last, so it wins a cell it shares with a shed that moves it less than a row.
  return [
    ...(shed && shed.value !== null && shed.value < 100 ? [{x: a.out, y: a.state.demand * (1 - shed.value / 100), glyph: afterShedding}] : []),
    {x: a.out, y: a.state.demand, glyph: here},
  ]
}

export function renderAssessment(a: Assessment, options: {color: boolean; width: number; source: string}): string {
  const s = a.state
  const lines = [
    `${options.source}: ${formatNumber(Math.round(s.demand))} rps, ${formatNumber(s.healthy)} of ${formatNumber(s.servers)} servers in rotation, ${formatNumber(Math.round(s.errorRate * 1000) / 10)}% errors`,
    '',
    ...a.sentences,
  ]
  if (a.levers.length > 0) {
    lines.push('', `Levers, each checked by simulation from now, the trigger fixed now (setup ${a.setup}):`)
    const rows = a.levers.map((l) => [
      l.what,
      l.holds ? 'yes' : 'no',
      l.backInSeconds === null ? 'stays stuck' : `${formatNumber(l.backInSeconds)} s after`,
      l.command ?? '',
    ])
    lines.push(formatTable(['lever', 'gets it out', 'full service', 'with'], rows, {width: options.width, free: [0, 3], wrap: true}))
  }
  if (a.map) {
    const marks = assessMarks(a)
    lines.push(
      '',
      `The map: servers broken × demand, the trigger fixed at the same moment in every cell, watched ${formatNumber(a.watchedSeconds)} s after`,
      ...mapLines(a.map, a.map.setups[0], a.map.axes[0].values.length * 2 + 12 <= options.width ? 2 : 1, options.color, marks),
      `${here} the pool now${marks.some((m) => m.glyph === afterShedding) ? `   ${afterShedding} after the smallest shed that gets it out` : ''}   · unharmed  ░ back by the fix  ▒ back after it  █ stuck`,
    )
  }
  lines.push('', trust)
  return lines.join('\n')
}

const trust =
  "How far to trust it: the pool is placed at the fewest broken servers that take it down to what is in rotation now, all fixed at once (--broken N says how many the trigger broke, if you know); the model is the calibrated scenario's, whose comments say which figures were read, fitted or assumed."

/** The marks and arrows over the SVG map: the pool, where the smallest shed moves it, and what the other levers do instead. */
function overlayOf(a: Assessment): MapOverlay {
  const shed = shedOfAll(a)
  const marks: MapMark[] = [{x: a.out, y: a.state.demand, glyph: here, label: 'now'}]
  if (shed) marks.push({x: a.out, y: a.state.demand * (1 - shed.value! / 100), glyph: afterShedding, label: `shed ${shed.value}%`})
  const others = a.levers.filter((l) => l.holds && l !== shed).map((l) => l.what)
  const note = `● the pool now (${formatNumber(a.out)} broken at ${formatNumber(Math.round(a.state.demand))} rps)${shed ? '; the arrow: the smallest shed that gets it out' : ''}${
    others.length ? `; the other levers that get it out change the map rather than move the pool: ${others.join('; ')}` : ''
  }.`
  return {marks, arrows: shed ? [[0, 1]] : [], note}
}

/** The map as SVG with the pool and its way out drawn on it; null without a map (--quick). */
export function assessSvg(a: Assessment): string | null {
  return a.map ? sweepSvg(a.map, overlayOf(a)) : null
}

/** One page to paste a link to: the verdict in sentences, the levers, the map with the pool on it, and how far to trust it. */
export function assessHtml(a: Assessment, source: string): string {
  const e = escapeXml
  const svg = assessSvg(a)
  const levers = a.levers
    .map(
      (l) =>
        `<tr><td>${e(l.what)}</td><td>${l.holds ? 'yes' : 'no'}</td><td>${l.backInSeconds === null ? 'stays stuck' : `${formatNumber(l.backInSeconds)} s after`}</td><td>${e(l.command ?? '')}</td></tr>`,
    )
    .join('\n')
  return htmlPage(
    `${source}: ${a.region.toUpperCase()}`,
    `${htmlParagraphs(a.sentences)}
${levers ? `<h2>Levers, each checked by simulation from now</h2>\n<table><thead><tr><th scope="col">lever</th><th scope="col">gets it out</th><th scope="col">full service</th><th scope="col">with</th></tr></thead><tbody>\n${levers}\n</tbody></table>` : ''}
${svg ? `<h2>The map</h2>\n${inlineSvg(svg)}` : ''}
${htmlParagraphs([trust])}`,
  )
}
