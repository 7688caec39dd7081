import {describe, expect, it} from 'vitest'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {buildAxis} from '../../src/sweep/grid.js'
import {sweepParam} from '../../src/sweep/params.js'
import {converged, gridBrackets, maxBisectionRounds, midpoint, narrow, stalled, tippingSentence, transitionOf, type Bracket} from '../../src/sweep/tipping.js'

const {scenario} = loadScenario('outlook-2026')

/** Bisects a bracket against a known edge, as runSweep does one round at a time. */
function bisect(b: Bracket, axis: ReturnType<typeof buildAxis>, stuckAt: (v: number) => boolean): {bracket: Bracket; runs: number} {
  let runs = 0
  while (!converged(b, axis)) {
    const mid = midpoint(b, axis)
    b = narrow(b, mid, stuckAt(mid))
    runs++
  }
  return {bracket: b, runs}
}

describe('tipping points by bisection', () => {
  it('finds brackets where neighbouring grid points differ, in either direction', () => {
    expect(gridBrackets([0, 1, 2, 3, 4], [false, false, true, true, false])).toEqual([
      {lo: 1, hi: 2, loStuck: false},
      {lo: 3, hi: 4, loStuck: true},
    ])
  })

  it('narrows a decimal axis to 1/32 of its step, more finely than the grid', () => {
    const axis = buildAxis('demand=500..2000:16', scenario)
    const edge = 1234.5
    const {bracket, runs} = bisect({lo: 1200, hi: 1300, loStuck: false}, axis, (v) => v > edge)
    expect(runs).toBe(5)
    expect(bracket.lo).toBeLessThanOrEqual(edge)
    expect(bracket.hi).toBeGreaterThan(edge)
    expect(bracket.hi - bracket.lo).toBeLessThanOrEqual(100 / 32)
    expect(transitionOf(bracket)).toEqual({holds: bracket.lo, stuck: bracket.hi, into: true})
  })

  it('bisects without overflow near the largest doubles, and stops where the midpoint is no longer inside', () => {
    const axis = buildAxis('capacity=1..1000000000:4', scenario)
    const huge = {lo: 1e308, hi: 1.7e308, loStuck: false}
    expect(Number.isFinite(midpoint(huge, axis))).toBe(true)
    expect(midpoint(huge, axis)).toBeGreaterThan(huge.lo)
    expect(stalled(huge, axis)).toBe(false)
    // Neighbouring doubles: no midpoint between them, so bisection must stop rather than spin.
    const tight = {lo: 1e15, hi: 1e15 + 0.25, loStuck: false}
    expect(stalled(tight, axis)).toBe(true)
    expect(maxBisectionRounds).toBeLessThanOrEqual(64)
  })

  it('narrows a whole-number axis to neighbours, and needs no runs when the grid has every number', () => {
    const sparse = buildAxis('broken=0..20:5', scenario)
    expect(bisect({lo: 5, hi: 10, loStuck: false}, sparse, (v) => v >= 7).bracket).toEqual({lo: 6, hi: 7, loStuck: false})
    expect(bisect({lo: 5, hi: 6, loStuck: false}, buildAxis('broken=0..20', scenario), () => true).runs).toBe(0)
  })

  it('says where a setup tips, where it holds again, and what it holds up to when it never tips', () => {
    const x = buildAxis('broken=0..20', scenario)
    const demand = sweepParam('demand')!
    const line = {
      y: 1500,
      startsStuck: false,
      endsStuck: false,
      transitions: [
        {holds: 5, stuck: 6, into: true},
        {holds: 15, stuck: 14, into: false},
      ],
    }
    expect(tippingSentence('no-guard', line, x, demand, scenario)).toBe(
      'no-guard tips into a stuck pool when more than 5 of 20 servers break at 1,500 rps; from 15 of 20 broken it holds again.',
    )
    expect(tippingSentence('cap-shed-slow-start', {y: 1500, startsStuck: false, endsStuck: false, transitions: []}, x, demand, scenario)).toBe(
      'cap-shed-slow-start never tips into a stuck pool within the sweep at 1,500 rps: it holds up to 20 of 20 broken.',
    )
    expect(tippingSentence('s', {y: null, startsStuck: true, endsStuck: true, transitions: []}, x, null, scenario)).toBe(
      's is stuck across the whole sweep, from 0 of 20 broken to 20 of 20 broken.',
    )
    const servers = buildAxis('servers=10..40', scenario)
    expect(
      tippingSentence('s', {y: null, startsStuck: true, endsStuck: false, transitions: [{holds: 24, stuck: 23, into: false}]}, servers, null, scenario),
    ).toBe('s is stuck up to 23 servers and holds from 24 servers.')
  })
})
