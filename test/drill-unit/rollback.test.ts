import {describe, expect, it} from 'vitest'
import {rollbackFigures} from '../../src/drill/rollback-figures.js'
import {cutAt} from '../../src/drill/timeline.js'
import {predict} from '../../src/wiring/drill.js'
import {loadDrillTarget} from '../../src/wiring/drill-target.js'
import {stepsBack, stepsText} from '../helpers/way-back.js'

// The prediction side of `sluice drill drill-cold-return --rollback now|ramped`: the runbook moves
// everything to green and restarts blue; the rollback puts 420 rps back onto blue's 240 rps of cold
// capacity, at once or a quarter of its 600 rps of warm capacity at a time.
async function predicted(how: 'now' | 'ramped') {
  const target = {...loadDrillTarget('drill-cold-return', undefined), rollback: how}
  const p = await predict(target)
  // Read to the rehearsal's end and settle, as a drill whose real run ends with it compares them.
  return {p, figures: rollbackFigures(cutAt(p.timeline, p.seconds), {...p.rollback!, how}, 10)}
}

describe('a drill that rolls its runbook back, predicted', () => {
  it('at once: one change, no gate, and the cold pool loses requests', async () => {
    const {p, figures} = await predicted('now')
    expect(p.rollback!.plan).toEqual([expect.stringMatching(/back to blue=100 green=0 at once \(--now\)$/)])
    expect(p.rollback!.verdicts).toEqual([])
    expect(p.rollback!.endedAt).toBe(p.rollback!.startedAt)
    expect(figures.peakLossPercent).toBeGreaterThan(20)
    expect(figures.lostPercent).toBeGreaterThan(1)
  })

  it('in steps sized by blue\u2019s capacity, each behind the gate moved to blue: no second loses what the instant one does', async () => {
    const [now, ramped] = [await predicted('now'), await predicted('ramped')]
    const steps = stepsBack(ramped.p.rollback!.plan[0], 100)
    expect(steps).toHaveLength(3)
    expect(ramped.p.rollback!.plan[0]).toContain(
      `${stepsText(steps)}, each baked 30 s behind the gate of step 1: error-rate ≤ 2% over 20 s (blue); traffic goes onto blue: blue has 6 healthy targets × 100 rps = 600 rps against`,
    )
    expect(new Set(ramped.p.rollback!.verdicts.map((v) => v.context))).toEqual(new Set(steps.slice(0, 2).map((p) => `way back: blue ${p}%`)))
    expect(ramped.p.rollback!.outcome).toBe('done')
    // The bakes on the way back: two of 30 s.
    expect(ramped.p.rollback!.endedAt - ramped.p.rollback!.startedAt).toBeCloseTo(60, 0)
    expect(ramped.figures.lostPercent).toBeLessThan(now.figures.lostPercent / 4)
    expect(ramped.figures.peakLossPercent).toBeLessThan(now.figures.peakLossPercent / 4)
  })
})
