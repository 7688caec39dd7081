import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {packageRoot} from '../package-root.js'
import {lineStyles} from './chart.js'
import {MARKER_COLOR, PALETTE} from './svg.js'

// sluice's one look, for every page it makes: the stylesheet (assets/look.css) the bridge page links
// and each --html report carries inline, and the charts' vocabulary (the terminal's dashes and
// glyphs, the reports' palette), which the bridge page reads as /look.json to draw its own charts.

/** What a series is drawn with on a page: its dash, the glyph its legend shows, its colour. */
export interface SeriesLook {
  dash: string
  glyph: string
  color: string
}

export interface ChartLook {
  /** In order: the first series gets the first. The terminal's left-axis patterns, then its right-axis ones. */
  series: SeriesLook[]
  /** What a prediction or a marker is drawn with: grey, dotted, ○. */
  predicted: SeriesLook
}

export function chartLook(): ChartLook {
  const styles = [...lineStyles.left, ...lineStyles.right]
  return {
    series: styles.map((s, i) => ({dash: s.dash, glyph: s.glyph, color: PALETTE[i % PALETTE.length]})),
    predicted: {dash: '2 6', glyph: '○', color: MARKER_COLOR},
  }
}

export const lookCssFile = join(packageRoot, 'assets', 'look.css')

let css: string | undefined
/** The stylesheet, read once from the package. */
export function lookCss(): string {
  css ??= readFileSync(lookCssFile, 'utf8')
  return css
}
