import {describe, expect, it} from 'vitest'
import {perSecond} from '../../src/drill/timeline.js'
import {summarizeRepeats} from '../../src/drill/repeats.js'
import {finerTickVerdict} from '../../src/drill/verdict.js'
import {drillJson, renderDrill} from '../../src/report/drill.js'
import {card, report, timeline} from '../helpers/drill-reports.js'

// The drill checks the model against itself: the same prediction at a tenth of the tick, read a
// point a second as the real run is, judged with its own bands.

const finer = (overrides: Parameters<typeof card>[0]) => ({
  tick: 0.1,
  card: card(overrides),
  timeline: timeline(
    () => 400,
    () => 10,
  ),
})

describe('the prediction at a finer tick', () => {
  it('is read a point a second: demand and served the mean of the second, servers in rotation as at its last tick', () => {
    const t = Float64Array.from({length: 20}, (_, i) => i / 10)
    const line = perSecond({
      t,
      demand: new Float64Array(20).fill(100),
      served: Float64Array.from(t, (x) => (x < 1 ? 100 : x < 1.5 ? 0 : 100)),
      inRotation: Float64Array.from(t, (x) => (x < 1.85 ? 10 : 7)),
    })
    expect(Array.from(line.t)).toEqual([0, 1])
    expect(Array.from(line.demand)).toEqual([100, 100])
    expect(line.served[0]).toBeCloseTo(100)
    expect(line.served[1]).toBeCloseTo(50)
    expect(Array.from(line.inRotation)).toEqual([10, 7])
    // A timeline already a point a second is left as it is.
    const whole = timeline(
      () => 400,
      () => 10,
    )
    expect(perSecond(whole)).toBe(whole)
  })

  it('moved: what in it lies past its own band from the prediction at the scenario tick; its verdict is against the real run', () => {
    expect(finerTickVerdict(report({}))).toBeNull()
    const same = finerTickVerdict(report({}, {}, {finerTick: finer({})}))!
    expect(same.moved).toEqual([])
    expect(same.verdict).toEqual({kind: 'agree'})
    // The coarse prediction agrees with the real run; the finer one cascades and serves a third.
    const apart = finerTickVerdict(report({}, {}, {finerTick: finer({servedDuringFault: 120, cascaded: true})}))!
    expect(apart.moved).toEqual(['cascaded', 'servedDuringFault'])
    expect(apart.verdict).toEqual({
      kind: 'disagree',
      outcomes: ['cascaded'],
      figures: ['servedDuringFault'],
      directions: {cascaded: 'harsher', servedDuringFault: 'harsher'},
    })
    // The other way round: the coarse prediction disagrees, the finer one would agree.
    const closer = finerTickVerdict(report({servedDuringFault: 380}, {servedDuringFault: 100}, {finerTick: finer({servedDuringFault: 370})}))!
    expect(closer.moved).toEqual(['servedDuringFault'])
    expect(closer.verdict).toEqual({kind: 'agree'})
  })

  it('is printed under the verdict and given in --json, and over repeats against the median', () => {
    const r = report({servedDuringFault: 380}, {servedDuringFault: 100}, {finerTick: finer({servedDuringFault: 370})})
    const text = renderDrill(r, {color: false, width: 100})
    expect(text).toContain(
      "At a tenth of the tick (0.1 s) the simulator predicts served 370 rps, lost 2.0%, full service after fix 4 s, fewest in rotation 6: MOVED past its band on served during fault: the model's figures hang on its time step; against the real run it would agree.",
    )
    const json = drillJson(r)
    expect(json.finerTick).toMatchObject({tick: 0.1, card: {servedDuringFault: 370}, moved: ['servedDuringFault'], verdict: {kind: 'agree'}})
    const summary = summarizeRepeats([r, report({servedDuringFault: 390}, {servedDuringFault: 100}, {finerTick: finer({servedDuringFault: 370})})])
    expect(summary.verdict.kind).toBe('disagree')
    expect(summary.finerTick).toMatchObject({moved: ['servedDuringFault'], verdict: {kind: 'agree'}})
  })
})
