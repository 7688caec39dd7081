import {describe, expect, it} from 'vitest'
import {summarizeRepeats} from '../../src/drill/repeats.js'
import type {DrillReport} from '../../src/drill/report.js'
import type {ReportCard} from '../../src/drill/report-card.js'
import {drillRepeatsJson, renderRepeats} from '../../src/report/drill.js'
import {report} from '../helpers/drill-reports.js'

const late = {...report({}).load, eventLoopDelayP99Ms: 400}
const run = (real: Partial<ReportCard>, load = report({}).load): DrillReport => report(real, {}, {load})

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
    expect(text).toContain('run 2: disagree (served during fault (model kinder), requests lost (model kinder))')
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
    const mostlyLate = [run({cascaded: true}, late), run({cascaded: true}, late), run({})]
    expect(summarizeRepeats(mostlyLate).verdict).toEqual({kind: 'inconclusive', reason: '2 of 3 runs machine-limited'})
    expect(drillRepeatsJson(mostlyLate).agree).toBeNull()
    const oneLate = [run({cascaded: true}, late), run({}), run({})]
    const summary = summarizeRepeats(oneLate)
    expect(summary.verdict).toEqual({kind: 'agree'})
    expect(summary.median.cascaded).toBe(false)
  })
})
