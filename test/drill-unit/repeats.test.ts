import {describe, expect, it} from 'vitest'
import {summarizeRepeats} from '../../src/drill/repeats.js'
import type {DrillReport} from '../../src/drill/report.js'
import type {ReportCard, Timeline} from '../../src/drill/report-card.js'
import {drillRepeatsJson, renderRepeats} from '../../src/report/drill.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

const {scenario} = loadScenario('drill-headroom')
const line: Timeline = {
  t: Float64Array.from({length: 30}, (_, t) => t),
  demand: new Float64Array(30).fill(400),
  served: new Float64Array(30).fill(390),
  inRotation: new Float64Array(30).fill(10),
}
const card = (overrides: Partial<ReportCard> = {}): ReportCard => ({
  servedDuringFault: 350,
  lostPercent: 2,
  secondsToFullServiceAfterFix: 4,
  fewestInRotation: 6,
  cascaded: false,
  recovered: true,
  before: 1,
  ...overrides,
})
const quiet = {eventLoopDelayP99Ms: 12, fleetLoopDelayP99Ms: 10, local: 0, offered: 12_000, cpuSeconds: 3, clientTimeoutWallMs: 1250}

function run(real: Partial<ReportCard>, load = quiet): DrillReport {
  return {
    target: {kind: 'scenario', name: 'drill-headroom'},
    scenario,
    setup: 'checks-only',
    scales: {rateScale: 0.5, timeScale: 0.25},
    queueSeconds: 2,
    fault: {from: 10, to: 20, servers: 4},
    servers: 10,
    seconds: 30,
    fullServiceWindow: 10,
    wallSeconds: 10,
    real: {timeline: line, card: card(real)},
    predicted: {timeline: {...line, served: new Float64Array(30).fill(400)}, card: card()},
    load,
    interrupted: false,
  }
}

describe('a drill run several times', () => {
  it("is judged by the median of its runs, each figure's range beside it, each run's verdict kept", () => {
    // Bands: 40 rps, 2 points, 10 s, 1 server. Run 2 alone is outside on served during fault.
    const runs = [
      run({servedDuringFault: 340, lostPercent: 2.5}),
      run({servedDuringFault: 290, lostPercent: 4.5}),
      run({servedDuringFault: 360, lostPercent: 1.5}),
    ]
    const summary = summarizeRepeats(runs)
    expect(summary.figures.servedDuringFault).toEqual({min: 290, median: 340, max: 360})
    expect(summary.figures.lostPercent).toEqual({min: 1.5, median: 2.5, max: 4.5})
    expect(summary.verdicts.map((v) => v.kind)).toEqual(['agree', 'disagree', 'agree'])
    expect(summary.verdict).toEqual({kind: 'agree'})
    expect(summary.representative).toBe(0)
    const text = renderRepeats(runs, {color: false, width: 60})
    expect(text).toContain('3 runs on HAProxy and a loopback fleet')
    expect(text).toContain('run 2: disagree (served during fault, requests lost)')
    expect(text).toMatch(/served during fault\s+340 rps \(290 rps–360 rps\)\s+350 rps\s+±40 rps: within/)
    expect(text).toContain('Over the median of 3 runs: The drill and the simulator agree')
    expect(text).toContain("(run 1, the median's)")
  })

  it('disagrees when the median is outside a band, and takes each outcome by majority', () => {
    const runs = [
      run({lostPercent: 9, recovered: false, secondsToFullServiceAfterFix: null}),
      run({lostPercent: 8}),
      run({lostPercent: 7, recovered: false, secondsToFullServiceAfterFix: null}),
    ]
    const summary = summarizeRepeats(runs)
    expect(summary.median.recovered).toBe(false)
    // Not back counts as past every value: two of three were not back.
    expect(summary.figures.secondsToFullServiceAfterFix).toEqual({min: 4, median: null, max: 4})
    expect(summary.verdict).toMatchObject({kind: 'disagree', outcomes: ['recovered']})
    expect(drillRepeatsJson(runs)).toMatchObject({agree: false, summary: {runs: 3, figures: {lostPercent: {min: 7, median: 8, max: 9}}}})
  })

  it('is inconclusive when most runs were machine-limited, and judges only the conclusive ones otherwise', () => {
    const late = {...quiet, eventLoopDelayP99Ms: 400}
    const mostlyLate = [run({cascaded: true}, late), run({cascaded: true}, late), run({})]
    expect(summarizeRepeats(mostlyLate).verdict).toEqual({kind: 'inconclusive', reason: '2 of 3 runs machine-limited'})
    expect(drillRepeatsJson(mostlyLate).agree).toBeNull()
    const oneLate = [run({cascaded: true}, late), run({}), run({})]
    const summary = summarizeRepeats(oneLate)
    expect(summary.verdict).toEqual({kind: 'agree'})
    expect(summary.median.cascaded).toBe(false)
  })
})
