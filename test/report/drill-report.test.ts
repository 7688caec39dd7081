import {describe, expect, it} from 'vitest'
import {drillAgrees, drillJson, drillTable, renderDrill} from '../../src/report/drill.js'
import {card, report} from '../helpers/drill-reports.js'

/** The table's row for a figure, split into its cells. */
const row = (table: string, figure: string): string[] => {
  const line = table.split('\n').find((l) => l.startsWith(figure))
  expect(line, figure).toBeDefined()
  return line!
    .slice(figure.length)
    .trim()
    .split(/\s{2,}/)
}

describe('drillTable', () => {
  it('shows each figure real against predicted, with the difference and its band', () => {
    const table = drillTable(
      report(
        {servedDuringFault: 300, lostPercent: 5.3, secondsToFullServiceAfterFix: null, fewestInRotation: 6, recovered: false},
        {secondsToFullServiceAfterFix: 4},
      ),
    )
    expect(table.split('\n')[0]).toMatch(/real \(HAProxy\)\s+predicted \(simulator\)\s+real − predicted\s+band/)
    // Bands: a tenth of the 400 rps demanded during the fault, 2 points, the 10 s window, one server.
    expect(row(table, 'served during fault')).toEqual(['300 rps', '350 rps', '-50 rps', '±40 rps: OUTSIDE, model kinder'])
    expect(row(table, 'requests lost')).toEqual(['5.3%', '2.0%', '+3.3 points', '±2.0 points: OUTSIDE, model kinder'])
    expect(row(table, 'full service after fix')).toEqual(['not back', '4 s', 'differs', '±10 s: OUTSIDE, model kinder'])
    expect(row(table, 'fewest in rotation')).toEqual(['6', '6', 'same', '±1: within'])
    expect(row(table, 'cascaded')).toEqual(['no', 'no', 'agree'])
    expect(row(table, 'recovered')).toEqual(['no', 'yes', 'DISAGREE, model kinder'])
  })

  it('says which way the model errs: harsher where it predicted worse for the pool than the real run showed', () => {
    const harsh = report(
      {servedDuringFault: 395, lostPercent: 0.5, secondsToFullServiceAfterFix: 4, fewestInRotation: 6, cascaded: false, recovered: true},
      {lostPercent: 5, secondsToFullServiceAfterFix: 30, fewestInRotation: 3, cascaded: true, recovered: false},
    )
    const table = drillTable(harsh)
    expect(row(table, 'served during fault')).toEqual(['395 rps', '350 rps', '+45 rps', '±40 rps: OUTSIDE, model harsher'])
    expect(row(table, 'requests lost')).toEqual(['0.5%', '5.0%', '-4.5 points', '±2.0 points: OUTSIDE, model harsher'])
    expect(row(table, 'full service after fix')).toEqual(['4 s', '30 s', '-26 s', '±10 s: OUTSIDE, model harsher'])
    expect(row(table, 'fewest in rotation')).toEqual(['6', '3', '+3', '±1: OUTSIDE, model harsher'])
    expect(row(table, 'cascaded')).toEqual(['no', 'yes', 'DISAGREE, model harsher'])
    expect(row(table, 'recovered')).toEqual(['yes', 'no', 'DISAGREE, model harsher'])
    expect(renderDrill(harsh, {color: false, width: 60})).toContain(
      'The drill and the simulator DISAGREE on cascaded (model harsher), recovered (model harsher), served during fault (model harsher), requests lost (model harsher), full service after fix (model harsher), fewest in rotation (model harsher): see the table.',
    )
    expect(drillJson(harsh)).toMatchObject({
      verdict: {kind: 'disagree', directions: {cascaded: 'harsher', lostPercent: 'harsher', fewestInRotation: 'harsher'}},
    })
  })

  it('says same for differences that round away, and for two runs without a fault', () => {
    const table = drillTable(report({servedDuringFault: null, lostPercent: 2.04, fewestInRotation: 10}, {servedDuringFault: null, fewestInRotation: 10}))
    expect(row(table, 'served during fault')).toEqual(['no fault', 'no fault', 'same', '±40 rps: within'])
    expect(row(table, 'requests lost')).toEqual(['2.0%', '2.0%', 'same', '±2.0 points: within'])
    expect(row(table, 'full service after fix')).toEqual(['4 s', '4 s', 'same', '±10 s: within'])
  })

  it('marks a cascade one run saw and the other did not', () => {
    const table = drillTable(report({cascaded: true, fewestInRotation: 2}))
    expect(row(table, 'cascaded')).toEqual(['yes', 'no', 'DISAGREE, model kinder'])
    expect(row(table, 'fewest in rotation')).toEqual(['2', '6', '-4', '±1: OUTSIDE, model kinder'])
  })

  it("prints each predicted figure's range over the seeds and each outcome's count, and judges by them", () => {
    const seeds = [
      ...Array.from({length: 3}, () => card({cascaded: true, fewestInRotation: 5, lostPercent: 4.5})),
      ...Array.from({length: 7}, () => card({lostPercent: 2.5})),
    ]
    const real = {cascaded: true, fewestInRotation: 4, lostPercent: 6.1}
    const table = drillTable(report(real, {}, {spread: {seeds: 10, sampleScale: 0.125, cards: seeds}}))
    expect(row(table, 'requests lost')).toEqual(['6.1%', '2.0% (2.5%–4.5% over 10 seeds)', '+4.1 points', '±2.0 points: within'])
    expect(row(table, 'fewest in rotation')).toEqual(['4', '6 (5–6 over 10 seeds)', '-2', '±1: within'])
    expect(row(table, 'served during fault')).toEqual(['350 rps', '350 rps (350 rps over 10 seeds)', 'same', '±40 rps: within'])
    // Judged against the seeds' range, not the scenario's own prediction: 2.0% is out of 2.5–4.5% by 0.5 points, within 2.
    expect(row(drillTable(report({lostPercent: 7}, {}, {spread: {seeds: 10, sampleScale: 0.125, cards: seeds}})), 'requests lost')).toEqual([
      '7.0%',
      '2.0% (2.5%–4.5% over 10 seeds)',
      '+5.0 points',
      '±2.0 points: OUTSIDE, model kinder',
    ])
    const notBack = card({secondsToFullServiceAfterFix: null, recovered: false})
    expect(row(drillTable(report(notBack, {}, {spread: {seeds: 2, sampleScale: 0.125, cards: [notBack, notBack]}})), 'full service after fix')).toEqual([
      'not back',
      '4 s (not back in all 2 seeds)',
      'differs',
      '±10 s: within',
    ])
    expect(row(table, 'cascaded')).toEqual(['yes', 'no; yes in 3 of 10 seeds', 'agree'])
    // Seeds that never cascade: a real cascade is a disagreement.
    const never = drillTable(report(real, {}, {spread: {seeds: 10, sampleScale: 0.125, cards: Array.from({length: 10}, () => card())}}))
    expect(row(never, 'cascaded')).toEqual(['yes', 'no; yes in 0 of 10 seeds', 'DISAGREE, model kinder'])
  })
})

describe('the seconds the card reads', () => {
  it('says both sides are read over the same seconds, and where each record ended when they differ', () => {
    const same = renderDrill(report({}), {color: false, width: 60})
    expect(same).toContain('Over the whole drill, 0–29 s, the same seconds on both sides:')
    expect(same).not.toContain('record went on')
    const longer = renderDrill(report({}, {}, {compared: {to: 29, realTo: 40, predictedTo: 29}}), {color: false, width: 60})
    expect(longer).toContain(
      "Over the whole drill, 0–29 s, the same seconds on both sides (the real run's record went on to 40 s, the prediction's to 29 s; each is read only as far as both go):",
    )
    expect(drillJson(report({}, {}, {compared: {to: 29, realTo: 40, predictedTo: 29}}))).toMatchObject({compared: {to: 29, realTo: 40, predictedTo: 29}})
  })

  it("judges the runbook's span as rehearsed on its own, with its table, its verdict and which way the model errs", () => {
    // Over the whole drill the two agree; over the runbook's span the real run lost more than predicted.
    const spanned = report(
      {},
      {},
      {
        target: {kind: 'runbook', name: 'lift-at-once'},
        runbookSpan: {from: 5, to: 25, real: card({lostPercent: 9}), predicted: card({lostPercent: 3}), spread: []},
      },
    )
    expect(drillAgrees(spanned)).toBe(true)
    const text = renderDrill(spanned, {color: false, width: 60})
    expect(text).toContain(
      "Over the runbook's span as rehearsed, 5–25 s (its start to the rehearsal's end and the settle after it), the same seconds on both sides:",
    )
    const spanTable = text.slice(text.indexOf("Over the runbook's span"))
    expect(row(spanTable, 'requests lost')).toEqual(['9.0%', '3.0%', '+6.0 points', '±2.0 points: OUTSIDE, model kinder'])
    expect(text).toContain("On the runbook's span: disagree on requests lost (model kinder).")
    expect(drillJson(spanned)).toMatchObject({
      agree: true,
      runbookSpan: {
        from: 5,
        to: 25,
        real: {lostPercent: 9},
        predicted: {lostPercent: 3},
        verdict: {kind: 'disagree', figures: ['lostPercent'], directions: {lostPercent: 'kinder'}},
      },
    })
    expect(drillJson(report({}))).toMatchObject({runbookSpan: null})
  })
})

describe('drillAgrees and renderDrill', () => {
  it('agree only when the outcomes agree and every figure is within its band', () => {
    const apart = report({servedDuringFault: 100, lostPercent: 30})
    expect(drillAgrees(apart)).toBe(false)
    expect(renderDrill(apart, {color: false, width: 60})).toContain(
      'The drill and the simulator DISAGREE on served during fault (model kinder), requests lost (model kinder): see the table.',
    )
    const agreeing = report({servedDuringFault: 320, lostPercent: 3.5, fewestInRotation: 5})
    expect(drillAgrees(agreeing)).toBe(true)
    const text = renderDrill(agreeing, {color: false, width: 60})
    expect(text).toContain('The drill and the simulator agree: on every outcome, and on every figure within its band.')
    expect(text).not.toContain('DISAGREE')
    expect(text.split('\n')[0]).toBe(
      'drill-headroom (checks-only), on HAProxy and a loopback fleet: rate scale 0.5, time scale 0.25, servers queue 2 s of work; 30 scenario s in 10 s of wall time',
    )
    expect(text).toContain('real 100.0%, predicted 100.0%')
    // Quiet about the generator when it kept up.
    expect(text).not.toContain('load generator was short')
    expect(text).toContain('completed requests')
    expect(text).toContain('servers in rotation')
  })

  it('say so when they disagree on an outcome', () => {
    for (const [real, named] of [
      [{cascaded: true}, 'cascaded (model kinder)'],
      [{recovered: false}, 'recovered (model kinder)'],
    ] as const) {
      const disagreeing = report(real)
      expect(drillAgrees(disagreeing)).toBe(false)
      expect(renderDrill(disagreeing, {color: false, width: 60})).toContain(`The drill and the simulator DISAGREE on ${named}: see the table.`)
    }
  })

  it('read a run the machine limited as inconclusive, not as a disagreement', () => {
    const limited = report(
      {cascaded: true},
      {},
      {
        load: {
          eventLoopDelayP99Ms: 180,
          fleetLoopDelayP99Ms: 3,
          cpuWait: {runSeconds: 12, waitSeconds: 4, share: 0.25, slices: 100_000, meanWaitMs: 0.04},
          local: 0,
          offered: 12_000,
          cpuSeconds: 3,
          clientTimeoutWallMs: 1250,
          serviceTimeMs: 100,
        },
      },
    )
    expect(drillAgrees(limited)).toBeNull()
    const text = renderDrill(limited, {color: false, width: 60})
    expect(text).toContain(
      "Inconclusive, machine-limited: the drill was short of this machine: the load generator's event loop ran 180 ms late at p99 (limit 10 ms): the real run says as much about this machine as about the pool, so it is not compared.",
    )
    expect(text).not.toContain('DISAGREE on')
    expect(drillJson(limited)).toMatchObject({agree: null, verdict: {kind: 'inconclusive'}})
  })

  it("names the runbook, both runs' outcomes, an interrupt and a generator short of the machine", () => {
    const text = renderDrill(
      report(
        {before: 0.957},
        {},
        {
          target: {kind: 'runbook', name: 'small-cycle'},
          real: {
            ...report({}).real,
            card: card({before: 0.957}),
            runbook: {
              outcome: 'held',
              message: 'a gate failed',
              steps: [
                {index: 0, title: 'Freeze deploys', startedAt: 60.2, endedAt: 61.4, lastVerdict: null},
                {
                  index: 1,
                  title: 'Ramp the pool back',
                  startedAt: 61.4,
                  endedAt: 212.6,
                  lastVerdict:
                    'gate error-rate ≤ pool blue + 1 point: green 1.7% of 12,046 against blue 0.0% of 12,189: worse by 1.7 points, margin 1, >99.9% sure → fail',
                },
                {index: 2, title: 'Unfreeze', startedAt: null, endedAt: null, lastVerdict: null},
              ],
            },
          },
          predicted: {
            ...report({}).predicted,
            runbook: {
              outcome: 'completed',
              message: 'its steps are done',
              steps: [
                {index: 0, title: 'Freeze deploys', startedAt: 60, endedAt: 60, lastVerdict: null},
                {
                  index: 1,
                  title: 'Ramp the pool back',
                  startedAt: 60,
                  endedAt: 180,
                  lastVerdict: 'gate error-rate ≤ pool blue + 1 point: green 0.4% of 9,000: … → pass',
                },
                {index: 2, title: 'Unfreeze', startedAt: 180, endedAt: 180, lastVerdict: null},
              ],
            },
          },
          interrupted: true,
          load: {
            eventLoopDelayP99Ms: 250,
            fleetLoopDelayP99Ms: null,
            cpuWait: {runSeconds: 12, waitSeconds: 4, share: 0.25, slices: 100_000, meanWaitMs: 0.04},
            local: 0,
            offered: 12_000,
            cpuSeconds: 1,
            clientTimeoutWallMs: 1250,
            serviceTimeMs: 2000,
          },
        },
      ),
      {color: false, width: 60},
    )
    const lines = text.split('\n')
    expect(lines[0]).toMatch(/^runbook small-cycle against drill-headroom \(checks-only\), .* \(interrupted: the figures cover what ran\)$/)
    expect(lines[1]).toBe('real run: held: a gate failed')
    expect(lines[2]).toBe('rehearsal: completed: its steps are done')
    // When each step ran on each side, and how much later the real one ended.
    const steps = lines.indexOf('Runbook steps, in scenario seconds from the start of the run:')
    expect(steps).toBeGreaterThan(2)
    expect(lines.slice(steps + 1, steps + 10).map((l) => l.trimEnd())).toEqual([
      'step                  real      rehearsal  real ends',
      '────────────────────  ────────  ─────────  ─────────',
      '1 Freeze deploys      60–61 s   60–60 s    +1 s',
      '2 Ramp the pool back  61–213 s  60–180 s   +33 s',
      '3 Unfreeze            not run   180–180 s',
      // Each gated step's last verdict on both sides, whole: the judge's sentence is never cut.
      "Each step's last gate verdict:",
      '  2 Ramp the pool back',
      '    real:      gate error-rate ≤ pool blue + 1 point: green 1.7% of 12,046 against blue 0.0% of 12,189: worse by 1.7 points, margin 1, >99.9% sure → fail',
      '    rehearsal: gate error-rate ≤ pool blue + 1 point: green 0.4% of 9,000: … → pass',
    ])
    expect(text).toContain('real 95.7%, predicted 100.0%')
    expect(text).toContain("The drill was short of this machine: the load generator's event loop ran 250 ms late at p99 (limit 100 ms).")
    // A drill cut short reached none of its outcomes: they are not compared, however the cards read.
    expect(text).toContain('The drill was interrupted')
    expect(text).not.toContain('DISAGREE')
    expect(drillAgrees(report({recovered: false}, {}, {interrupted: true}))).toBeNull()
  })
})

describe('drillJson', () => {
  it('rounds the figures, writes unread rotation as null and says whether the runs agree, with the verdict and its bands', () => {
    const json = drillJson(report({servedDuringFault: 301.23456, lostPercent: 1.23456, secondsToFullServiceAfterFix: 7.891, before: 0.976543}))
    expect(json).toMatchObject({
      target: {kind: 'scenario', name: 'drill-headroom'},
      scenario: 'drill-headroom',
      setup: 'checks-only',
      scales: {rateScale: 0.5, timeScale: 0.25},
      fault: {from: 10, to: 20, servers: 4},
      servers: 10,
      scenarioSeconds: 30,
      wallSeconds: 9.9,
      interrupted: false,
      agree: false,
      verdict: {kind: 'disagree', outcomes: [], figures: ['servedDuringFault']},
      bands: {servedDuringFault: 40, lostPercent: 2, secondsToFullServiceAfterFix: 10, fewestInRotation: 1},
      load: {
        eventLoopDelayP99Ms: 2.35,
        fleetLoopDelayP99Ms: 3,
        cpuWait: {runSeconds: 12, waitSeconds: 4, share: 0.25, slices: 100_000, meanWaitMs: 0.04},
        local: 0,
        offered: 12_000,
        cpuSeconds: 3.21,
        clientTimeoutWallMs: 1250,
        serviceTimeMs: 100,
      },
    })
    expect(json.real.card).toEqual({
      servedDuringFault: 301.23,
      lostPercent: 1.23,
      secondsToFullServiceAfterFix: 7.89,
      fewestInRotation: 6,
      cascaded: false,
      recovered: true,
      before: 0.9765,
    })
    expect(json.real.timeline.served[0]).toBe(398.12)
    expect(json.real.timeline.inRotation[3]).toBeNull()
    expect(json.real.timeline.inRotation.slice(11, 13)).toEqual([10, 6])
    expect(json.real.timeline.t).toHaveLength(30)
    expect(json.real).not.toHaveProperty('runbook')
    expect(json.predicted.card.servedDuringFault).toBe(350)
    // Plain JSON: no typed arrays, no NaN.
    expect(JSON.parse(JSON.stringify(json))).toEqual(json)
  })

  it('keeps a null figure null, and the runbook outcomes', () => {
    const base = report({secondsToFullServiceAfterFix: null, servedDuringFault: null, recovered: false})
    const json = drillJson({
      ...base,
      real: {
        ...base.real,
        runbook: {outcome: 'completed', message: 'done', steps: [{index: 1, title: 'Freeze', startedAt: 60.123, endedAt: null, lastVerdict: null}]},
      },
    })
    expect(json.real.card.secondsToFullServiceAfterFix).toBeNull()
    expect(json.real.card.servedDuringFault).toBeNull()
    expect(json.agree).toBe(false)
    expect(json.real.runbook).toEqual({
      outcome: 'completed',
      message: 'done',
      steps: [{index: 1, title: 'Freeze', startedAt: 60.12, endedAt: null, lastVerdict: null}],
    })
  })
})

describe('what the real clients saw fail', () => {
  it('is said in words and kept, rounded, in the JSON', () => {
    const base = report({})
    const failures = {
      run: {timeouts: 12.4, refused: 0, errors: 30.6, rejected: 0.2, givenUp: 3},
      afterFix: {timeouts: 2, refused: 0, errors: 0, rejected: 0, givenUp: 0},
    }
    const withFailures = {...base, real: {...base.real, failures}}
    expect(renderDrill(withFailures, {color: false, width: 60})).toContain('Real clients saw 12 timeouts, 31 errors, 3 requests given up (scenario requests).')
    expect(drillJson(withFailures).real.failures).toEqual({
      run: {timeouts: 12, refused: 0, errors: 31, rejected: 0, givenUp: 3},
      afterFix: {timeouts: 2, refused: 0, errors: 0, rejected: 0, givenUp: 0},
    })
    expect(drillJson(base).predicted).not.toHaveProperty('failures')
  })
})
