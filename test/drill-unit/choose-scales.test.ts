import {describe, expect, it} from 'vitest'
import {chooseScales, drillBudget} from '../../src/drill/scale.js'

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
