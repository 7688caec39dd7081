import {describe, expect, it} from 'vitest'
import {chooseScales, drillBudget, queuedAsDrilled, servedAsDrilled} from '../../src/drill/scale.js'
import {loadDrillTarget} from '../../src/wiring/drill-target.js'
import {predict} from '../../src/wiring/drill.js'

describe('chooseScales', () => {
  it('picks the largest round scale that fits the budget', () => {
    // 600 s × 0.25 = 150 s; 1,500 rps × 0.1 = 150 rps (× 0.2 would be 300).
    expect(chooseScales(600, 1500)).toEqual({timeScale: 0.25, rateScale: 0.1})
    expect(chooseScales(300, 400)).toEqual({timeScale: 0.5, rateScale: 0.5})
  })

  it('shrinks nothing that already fits, and fits exactly at the budget', () => {
    expect(chooseScales(drillBudget.wallSeconds, drillBudget.wallRps)).toEqual({timeScale: 1, rateScale: 1})
    expect(chooseScales(drillBudget.wallSeconds + 1, drillBudget.wallRps + 1)).toEqual({timeScale: 0.5, rateScale: 0.5})
  })

  it('respects a budget of its own', () => {
    expect(chooseScales(600, 1500, {wallSeconds: 60, wallRps: 1000})).toEqual({timeScale: 0.1, rateScale: 0.5})
    expect(chooseScales(600, 1500, {wallSeconds: 600, wallRps: 1500})).toEqual({timeScale: 1, rateScale: 1})
  })

  it('stops at the smallest scale it knows', () => {
    expect(chooseScales(1e9, 1e9)).toEqual({timeScale: 0.001, rateScale: 0.001})
  })
})

describe('the drill sizes itself on the prediction', () => {
  it('a 300 s scenario at a 0.1 s tick lasts 300 s, not a hair more, so it runs at the time scale a 300 s one fits', async () => {
    // 3,000 ticks of 0.1 s end at 299.9 + 0.1, which floats to 300.00000000000006.
    const target = queuedAsDrilled(loadDrillTarget('drill-retry-storm', 'no-budget'), undefined)
    expect(target.scenario.tick).toBe(0.1)
    const {seconds} = await predict(target)
    expect(seconds).toBe(300)
    expect(chooseScales(seconds, 600).timeScale).toBe(0.5)
  })

  it('predicts the fleet at its scale: a request served in real time takes serviceTime / timeScale of the scenario', async () => {
    const target = queuedAsDrilled(loadDrillTarget('drill-retry-storm', 'no-budget'), undefined)
    const at = (timeScale: number) => servedAsDrilled(target, timeScale).scenario.pools.map((p) => p.serviceTime)
    expect(target.scenario.pools.map((p) => p.serviceTime)).toEqual([0.1])
    expect(at(0.5)).toEqual([0.2])
    expect(at(0.25)).toEqual([0.4])
    // The scenario itself is left as it was.
    expect(target.scenario.pools.map((p) => p.serviceTime)).toEqual([0.1])
    // A slower service leaves less of the clients' 2 s for the queue: fewer answers in time.
    const served = async (timeScale: number) => (await predict(servedAsDrilled(target, timeScale))).record.figures.served
    expect(await served(0.25)).toBeLessThanOrEqual(await served(0.5))
  })
})
