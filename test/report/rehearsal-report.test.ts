import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {rampAndGatesPanel, rehearsalFigures, rehearsalHtml, rehearsalPanel} from '../../src/report/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {RecordingIO} from '../helpers/fakes.js'
import {lookCss} from '../../src/report/look.js'

const rehearsed = async (file: string) =>
  (await rehearse(loadRunbookFile(file), {operator: 'test', io: new RecordingIO(true), signal: new AbortController().signal}, {pace: null})).rehearsal

describe('the rehearsal report', () => {
  it("leads with the runbook's own figures, from its start, the tick series summed from there; the whole scenario's beside them", async () => {
    const r = await rehearsed('runbooks/outlook-staged-return.yaml')
    const f = rehearsalFigures(r)
    // Every tick is a point at this length, so the series can be summed from the start to check the running figures.
    expect(r.record.ticks).toBe(r.record.ticksRecorded)
    let demand = 0
    let served = 0
    let fewest = Infinity
    for (let i = 0; i < r.record.ticks; i++) {
      if (r.record.t[i] < r.startAt) continue
      demand += r.record.demand[i]
      served += r.record.served[i]
      fewest = Math.min(fewest, r.record.inRotation[i])
    }
    expect(f.fromStart.lostPercent).toBeCloseTo(((demand - served) / demand) * 100, 2)
    expect(f.fromStart.minInRotation).toBe(fewest)
    // The pool collapsed at 60 s and the runbook starts at 300 s: the four minutes before it are the scenario's loss, not the runbook's.
    expect(f.fromStart.lostPercent).toBeLessThan(f.lostPercent - 3)
  })

  it('charts from the start to shortly after the run ends, with each step marked where it started', async () => {
    const r = await rehearsed('runbooks/naive-full-return.yaml')
    const panel = rehearsalPanel(r)
    const last = panel.t[panel.t.length - 1]
    expect(r.record.t[r.record.ticks - 1]).toBeGreaterThan(r.endAt + 600)
    expect(last).toBeGreaterThanOrEqual(r.endAt)
    expect(last).toBeLessThanOrEqual(r.endAt + 120)
    const starts = r.run.steps.filter((s) => s.startedAt !== null)
    expect(panel.markers).toEqual(expect.arrayContaining(starts.map((s) => ({t: s.startedAt, label: String(s.index + 1)}))))
    expect(panel.markers).toContainEqual({t: r.endAt, label: 'end'})
  })

  it("draws the ramp's weights and the gates' measured values on the same timeline", async () => {
    const r = await rehearsed('runbooks/regional-dns-ramp.yaml')
    const panel = rampAndGatesPanel(r)!
    expect(panel.series.map((s) => s.label)).toEqual(expect.arrayContaining(['api-west weight', 'error-rate measured']))
    const west = panel.series.find((s) => s.label === 'api-west weight')!.values
    const shares = new Set(
      Array.from(west)
        .filter((v) => !Number.isNaN(v))
        .map((v) => Math.round(v)),
    )
    expect([...shares].sort((a, b) => a - b)).toEqual([1, 5, 10, 25, 50])
    expect(panel.t.length).toBe(rehearsalPanel(r).t.length)
  })

  it("puts the gate on an axis of its own, scaled to its threshold, with the threshold drawn: not on the weights' 0–100%", async () => {
    const r = await rehearsed('runbooks/regional-dns-ramp.yaml')
    const panel = rampAndGatesPanel(r)!
    const measured = panel.series.find((s) => s.label === 'error-rate measured')!
    const threshold = panel.series.find((s) => s.label === 'error-rate threshold')!
    expect(measured.axis).toBe('right')
    expect(threshold.axis).toBe('right')
    expect(panel.series.find((s) => s.label === 'api-west weight')!.axis).toBeUndefined()
    // The thresholds drawn are the verdicts' own bounds, each from its verdict on.
    const bounds = r.run.steps
      .flatMap((s) => s.verdicts)
      .filter((v) => v.metric === 'error-rate')
      .map((v) => v.bound ?? v.threshold)
    const drawn = new Set(Array.from(threshold.values).filter((v) => !Number.isNaN(v)))
    expect(drawn).toEqual(new Set(bounds))
    expect(panel.rightMax).toBe(2 * Math.max(...bounds))
  })

  it('leads the HTML page with the chart, and folds repeated passes into one row', async () => {
    const r = await rehearsed('runbooks/regional-dns-ramp.yaml')
    const html = rehearsalHtml(r)
    expect(html.indexOf('<svg')).toBeGreaterThan(0)
    expect(html.indexOf('<svg')).toBeLessThan(html.indexOf('<h2>Steps</h2>'))
    const verdicts = r.run.steps.flatMap((s) => s.verdicts).length
    const rows = html.slice(html.indexOf('<h2>Gate verdicts</h2>')).match(/<tr><td>/g)!.length
    expect(rows).toBeLessThan(verdicts / 2)
    expect(html).toMatch(/<td data-status="pass">✓ pass ×\d+<\/td>/)
    // The bridge page's look, inline: the same stylesheet, the chart named as an image.
    expect(html).toContain(`<style>\n${lookCss()}</style>`)
    expect(html).toContain('<svg role="img" ')
    expect(html).toMatch(/<main>\n<h1>Rehearsal of regional-dns-ramp<\/h1>/)
  })

  it("says a counts gate's verdicts in their own words, numbers and all", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-report-counts-'))
    const file = join(dir, 'counts.yaml')
    writeFileSync(
      file,
      `name: counts-ramp
targets:
  dns: {zone: Z2FDTNDATAQYW2, record: api.example.com., type: A, ttl: 60, sets: {api-east: east, api-west: west}}
  metrics: {source: cloudwatch, loadBalancer: app/api-west/9f0d3a2b1c4e5f67}
rehearsal: {scenario: two-regions, setup: cap-shed-slow-start, startAt: 60}
steps:
  - action: ramp
    set: api-west
    schedule: [10]
    bake: 300
    gate: {metric: error-rate, threshold: 1, interval: 30, pool: west, relativeTo: stable, judge: counts}
`,
    )
    const html = rehearsalHtml(await rehearsed(file))
    expect(html.slice(html.indexOf('<h2>Gate verdicts</h2>'))).toMatch(
      /<td>west [\d.]+% of [\d,]+ against east [\d.]+% of [\d,]+: (worse|better) by [\d.]+ points?, margin 1[^<]*→ pass<\/td><td data-status="pass">/,
    )
  })
})
