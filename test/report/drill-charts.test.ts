import {describe, expect, it} from 'vitest'
import {renderTerminalChart, robustLeftAxis, type ChartPanel} from '../../src/report/chart.js'
import {drillHtml, drillPanels, drillSvg, renderDrill} from '../../src/report/drill.js'
import {card, report, timeline} from '../helpers/drill-reports.js'
import {lookCss} from '../../src/report/look.js'

/** A drill whose real run served one second of 5× demand (a queue drained at once), and ran two runbook steps. */
const spiky = () =>
  report(
    {},
    {},
    {
      target: {kind: 'runbook', name: 'staged-return'},
      real: {
        timeline: timeline(
          (t) => (t === 21 ? 2000 : 398),
          () => 10,
        ),
        card: card(),
        runbook: {
          outcome: 'completed',
          message: 'all steps done',
          steps: [
            {index: 0, title: 'freeze', startedAt: 12, endedAt: 13, lastVerdict: null},
            {index: 1, title: 'cycle the broken', startedAt: 15, endedAt: 22, lastVerdict: null},
          ],
        },
      },
      predicted: {
        ...report({}).predicted,
        runbook: {outcome: 'completed', message: 'all steps done', steps: [{index: 0, title: 'freeze', startedAt: 12, endedAt: 12, lastVerdict: null}]},
      },
    },
  )

describe('the drill chart', () => {
  it('scales its axis to the bulk of the line, not one spike, and says how many points it clipped', () => {
    const [served] = drillPanels(spiky())
    // Demand is 400 rps: the axis tops out near it, far below the 2,000 rps spike.
    expect(served.leftMax).toBeGreaterThanOrEqual(400)
    expect(served.leftMax).toBeLessThanOrEqual(1000)
    expect(served.note).toBe(`1 point above ${served.leftMax} rps clipped`)
    const text = renderTerminalChart(served, {width: 60, height: 8})
    expect(text).toContain(`(1 point above ${served.leftMax} rps clipped)`)
    expect(text).not.toMatch(/^ *2,?000 ┤/m)
    expect(text).toMatch(/^ *\d+ ┤/m)
    expect(drillSvg(spiky())).toContain(`(1 point above ${served.leftMax} rps clipped)</text>`)
  })

  it('leaves an axis without spikes as it was, with no note', () => {
    const [served] = drillPanels(report({}))
    expect(served.leftMax).toBeUndefined()
    expect(served.note).toBeUndefined()
  })

  it('counts every clipped point, on every left-axis series', () => {
    const t = Float64Array.from({length: 100}, (_, i) => i)
    const flat = (spikes: number[]) => Float64Array.from(t, (i) => (spikes.includes(i) ? 7500 : 1500))
    const panel: ChartPanel = {
      title: 'x',
      t,
      series: [
        {label: 'a', values: flat([10, 50])},
        {label: 'b', values: flat([70])},
      ],
      leftUnit: 'rps',
    }
    const axis = robustLeftAxis(panel, 1500)
    expect(axis.max).toBeGreaterThanOrEqual(2250)
    expect(axis.max).toBeLessThanOrEqual(3000)
    expect(axis.clipped).toBe(3)
  })

  it("marks each of the real run's steps by its number, on both charts, the terminal's and the SVG", () => {
    const panels = drillPanels(spiky())
    for (const p of panels)
      expect(p.markers).toEqual(
        expect.arrayContaining([
          {t: 12, label: '1'},
          {t: 15, label: '2'},
        ]),
      )
    expect(panels.map((p) => p.title).join()).not.toContain('numbers')
    expect(panels[1].note).toBe("numbers: the real run's steps, where each began")
    const text = renderDrill(spiky(), {color: false, width: 60})
    // The marker labels sit on the line above the plot, beside the fault and fix.
    expect(text).toMatch(/^ +fault +2 +fix$/m)
    expect(text).toMatch(/^ +1$/m)
    const svg = drillSvg(spiky())
    expect(svg.match(/font-size="10" fill="#777">1<\/text>/g)).toHaveLength(2)
    expect(svg.match(/font-size="10" fill="#777">2<\/text>/g)).toHaveLength(2)
  })

  it('keeps every word of the SVG inside its page: titles, legends and notes (at 6.5 px a character of 11 px type)', () => {
    const svg = drillSvg(report({}, {}, {...spiky(), target: {kind: 'runbook', name: 'outlook-staged-return-with-lifts'}, setup: 'outlook-2026-minority'}))
    const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)![1])
    const texts = [...svg.matchAll(/<text x="([\d.]+)"[^>]*?(?:font-size="(\d+)")?[^>]*>([^<]*)<\/text>/g)]
    expect(texts.length).toBeGreaterThan(10)
    for (const [, x, size, words] of texts) {
      const right = Number(x) + [...words.replace(/&[a-z]+;/g, '&')].length * 6.5 * (Number(size ?? 11) / 11)
      expect(right, words).toBeLessThanOrEqual(width)
    }
  })
})

describe('the drill page (--html)', () => {
  it('carries the verdict, the figures and steps as tables, the words, and the charts inline', () => {
    const html = drillHtml(spiky())
    expect(html).toMatch(/^<!doctype html>/)
    expect(html).toContain('<title>sluice drill: staged-return</title>')
    expect(html).toContain('<h2>Verdict</h2>\n<p>The drill and the simulator agree')
    expect(html).toContain('<th scope="col">real (HAProxy)</th><th scope="col">predicted (simulator)</th>')
    expect(html).toContain(`<style>\n${lookCss()}</style>`)
    expect(html).toContain('<tr><td>served during fault</td><td>350 rps</td><td>350 rps</td><td>same</td>')
    expect(html).toContain('<tr><td>1 freeze</td>')
    expect(html).toContain('<p>real run: completed: all steps done</p>')
    expect(html.match(/<svg role="img" /g)).toHaveLength(1)
    expect(html).not.toContain('\u0000')
    // The verdict once, at the top: not again among the report's words.
    expect(html.match(/The drill and the simulator agree/g)).toHaveLength(1)
    expect(html).toContain('<p>Runbook steps, in scenario seconds from the start of the run:</p>')
  })
})
