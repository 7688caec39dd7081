import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {renderSvg} from '../../src/report/svg.js'
import {sluiceInProcess} from '../helpers/command.js'
import {hasRsvgConvert, renderGrey, type GreyImage} from '../helpers/greyscale.js'

// Issue 48: the SVG and HTML charts read in greyscale (and so by the common colour blindnesses,
// which keep lightness): rendered by rsvg-convert and turned to luma, each pair of map regions and
// each pair of lines must stay apart by pattern or by lightness. The HTML pages inline these SVGs.

/** Lightness apart: a fifth of the way from black to white. */
const LIGHTER = 0.2

interface Region {
  mean: number
  /** Spread of lightness within the region's cells: a pattern over a fill gives one, a flat fill none. */
  spread: number
  /** Share of its pixels darker than its own mean by a tenth: how much of it a pattern's ink covers. */
  ink: number
}

function region(image: GreyImage, cells: Array<{x: number; y: number; w: number; h: number}>): Region {
  const values: number[] = []
  for (const c of cells) for (let y = c.y + 1; y < c.y + c.h - 1; y++) for (let x = c.x + 1; x < c.x + c.w - 1; x++) values.push(image.at(x, y))
  const mean = values.reduce((a, b) => a + b, 0) / values.length
  const spread = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length)
  const ink = values.filter((v) => v < mean - 0.1).length / values.length
  return {mean, spread, ink}
}

/** Apart by lightness, or by pattern: one patterned and the other flat, or patterns of different ink. */
function regionsApart(a: Region, b: Region): boolean {
  if (Math.abs(a.mean - b.mean) >= LIGHTER) return true
  const patterned = (r: Region) => r.spread >= 0.05
  if (patterned(a) !== patterned(b)) return true
  return patterned(a) && Math.abs(a.ink - b.ink) >= 0.15
}

interface LineLook {
  /** The darkest the line gets: its ink. */
  ink: number
  /** Share of the sample covered by ink. */
  coverage: number
  /** Pixels from one dash's start to the next (0 for a solid line). */
  period: number
}

/** A legend's line sample, read along its middle row. */
function lineLook(image: GreyImage, x1: number, x2: number, y: number): LineLook {
  const row: number[] = []
  for (let x = Math.floor(x1) - 1; x <= Math.ceil(x2) + 1; x++) row.push(image.at(x, y))
  const ink = Math.min(...row)
  const on = row.map((v) => v < (1 + ink) / 2)
  const starts = on.flatMap((o, i) => (o && (i === 0 || !on[i - 1]) ? [i] : []))
  const period = starts.length > 1 ? (starts.at(-1)! - starts[0]) / (starts.length - 1) : 0
  return {ink, coverage: on.filter(Boolean).length / on.length, period}
}

function linesApart(a: LineLook, b: LineLook): boolean {
  return Math.abs(a.ink - b.ink) >= LIGHTER || Math.abs(a.coverage - b.coverage) >= 0.15 || Math.abs(a.period - b.period) >= 2
}

const attr = (tag: string, name: string): number => Number(new RegExp(`\\b${name}="([-\\d.]+)"`).exec(tag)![1])

function legendLines(svg: string): Array<{label: string; x1: number; x2: number; y: number}> {
  // A legend's sample: the one line of a chart drawn 2 px wide and followed by its label.
  return [...svg.matchAll(/(<line [^>]*stroke-width="2"[^>]*\/>)\n<text [^>]*>([^<]*)<\/text>/g)].map(([, tag, label]) => ({
    label,
    x1: attr(tag, 'x1'),
    x2: attr(tag, 'x2'),
    y: attr(tag, 'y1'),
  }))
}

/** Every pair of lines in each panel (a legend row each) apart; `expected` lines per panel. */
function expectLinesApart(svg: string, expected: number[]): void {
  const image = renderGrey(svg)
  const rows = new Map<number, ReturnType<typeof legendLines>>()
  for (const l of legendLines(svg)) rows.set(l.y, [...(rows.get(l.y) ?? []), l])
  expect([...rows.values()].map((r) => r.length)).toEqual(expected)
  for (const lines of rows.values()) {
    const looks = lines.map((l) => ({label: l.label, look: lineLook(image, l.x1, l.x2, l.y)}))
    for (let i = 0; i < looks.length; i++)
      for (let j = i + 1; j < looks.length; j++)
        expect(
          linesApart(looks[i].look, looks[j].look),
          `${looks[i].label} ${JSON.stringify(looks[i].look)} against ${looks[j].label} ${JSON.stringify(looks[j].look)}`,
        ).toBe(true)
  }
}

describe.runIf(hasRsvgConvert())('charts in greyscale (rsvg-convert)', () => {
  it('a sweep map: unharmed, recovered and stuck cells stay apart, pair by pair', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-grey-')), 'sweep.svg')
    const r = await sluiceInProcess(['simulate', '--scenario', 'outlook-2026', '--sweep', 'broken=0..20', '--sweep', 'demand=500..2000', '--svg', file])
    expect(r.exit, r.stderr).toBe(0)
    const svg = readFileSync(file, 'utf8')
    const cells = [...svg.matchAll(/<rect (x="[\d.]+" y="[\d.]+" width="[\d.]+" height="[\d.]+") fill="[^"]+"><title>[^<]*: (unharmed|recovered|stuck)/g)].map(
      ([, geometry, outcome]) => ({
        outcome,
        x: attr(geometry, 'x'),
        y: attr(geometry, 'y'),
        w: attr(geometry, 'width'),
        h: attr(geometry, 'height'),
      }),
    )
    const image = renderGrey(svg)
    const regions = Object.fromEntries(
      (['unharmed', 'recovered', 'stuck'] as const).map((o) => [
        o,
        region(
          image,
          cells.filter((c) => c.outcome === o).map((c) => ({...c, y: c.y + 40})),
        ),
      ]),
    )
    for (const o of ['unharmed', 'recovered', 'stuck'])
      expect(
        cells.some((c) => c.outcome === o),
        o,
      ).toBe(true)
    const pairs = [
      ['unharmed', 'recovered'],
      ['unharmed', 'stuck'],
      ['recovered', 'stuck'],
    ] as const
    for (const [a, b] of pairs)
      expect(regionsApart(regions[a], regions[b]), `${a} ${JSON.stringify(regions[a])} against ${b} ${JSON.stringify(regions[b])}`).toBe(true)
  })

  it("a rehearsal's lines (completed, demand, servers in rotation; the ramp's weights and gates) stay apart, pair by pair", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-grey-')), 'run.svg')
    const r = await sluiceInProcess(['run', 'outlook-staged-return', '--dry-run', '--svg', file])
    expect(r.exit, r.stderr).toBe(0)
    expectLinesApart(readFileSync(file, 'utf8'), [3, 4])
  })

  it("every line style a panel can hold, as the drill's real, predicted and demand on the left, two more on the right", () => {
    const t = Float64Array.from({length: 50}, (_, i) => i)
    const flat = (v: number) => Float64Array.from({length: 50}, () => v)
    const svg = renderSvg([
      {
        title: 'all styles',
        t,
        series: [
          {label: 'real (HAProxy)', values: flat(10)},
          {label: 'predicted (simulator)', values: flat(20)},
          {label: 'demand', values: flat(30)},
          {label: 'real: UP in HAProxy', values: flat(3), axis: 'right'},
          {label: 'predicted: took traffic that second', values: flat(4), axis: 'right'},
        ],
        leftUnit: 'rps',
        rightUnit: 'servers',
      },
    ])
    expectLinesApart(svg, [5])
  })
})
