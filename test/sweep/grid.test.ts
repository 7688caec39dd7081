import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {axisValues, buildAxes, buildAxis, parseSweepFlag} from '../../src/sweep/grid.js'
import {sweepParam} from '../../src/sweep/params.js'

const {scenario} = loadScenario('outlook-2026')

function message(fn: () => unknown): string {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    return (error as Error).message
  }
  throw new Error('expected an InputError')
}

describe('--sweep PARAM=FROM..TO[:STEPS]', () => {
  it('gives whole-number parameters every whole number when they fit, others 21 points', () => {
    expect(buildAxis('broken=0..20', scenario).values).toEqual(Array.from({length: 21}, (_, i) => i))
    const demand = buildAxis('demand=500..2000', scenario).values
    expect(demand).toHaveLength(21)
    expect(demand[0]).toBe(500)
    expect(demand[1]).toBe(575)
    expect(demand.at(-1)).toBe(2000)
  })

  it('takes STEPS, decimals and whole numbers spread evenly', () => {
    expect(buildAxis('demand=500..2000:16', scenario).values).toEqual(Array.from({length: 16}, (_, i) => 500 + 100 * i))
    expect(buildAxis('slowStart=0..1.5:4', scenario).values).toEqual([0, 0.5, 1, 1.5])
    expect(buildAxis('check-interval=0.1..0.3:3', {...scenario, tick: 0.1}).values).toEqual([0.1, 0.2, 0.3])
    expect(axisValues(0, 100, 41, true)).toHaveLength(41)
    expect(new Set(axisValues(0, 100, 41, true)).size).toBe(41)
  })

  it('names the flag and says what is wrong with a bad range', () => {
    expect(message(() => parseSweepFlag('demand=2000..500'))).toBe(
      '--sweep demand=2000..500: expected FROM below TO (a range from low to high), got 2,000..500',
    )
    expect(message(() => parseSweepFlag('demand=500'))).toMatch(/^--sweep demand=500: expected PARAM=FROM\.\.TO\[:STEPS\]/)
    expect(message(() => parseSweepFlag('demand=a..5'))).toBe('--sweep demand=a..5: expected a number for FROM but received: a')
    expect(message(() => parseSweepFlag('broken=0..2.5'))).toMatch(/whole number for TO/)
    expect(message(() => parseSweepFlag('broken=0..5:9'))).toMatch(/at most 6 steps from 0 to 5, got 9/)
    expect(message(() => parseSweepFlag('demand=0..5:1'))).toMatch(/STEPS to be a whole number from 2 to 201/)
  })

  it('refuses to sweep an ejection time on a scenario with HAProxy checks, which have none', () => {
    const haproxy = loadScenario('outlook-2026-haproxy').scenario
    expect(message(() => buildAxes(['base-ejection=10..60', 'demand=500..2000'], haproxy, 2))).toMatch(
      /^--sweep base-ejection=10\.\.60: scenario outlook-2026-haproxy has HAProxy's health checks, .*sweep check-interval/,
    )
    expect(buildAxes(['check-interval=1..10', 'demand=500..2000'], haproxy, 2)).toHaveLength(2)
    expect(buildAxes(['base-ejection=10..60'], scenario, 4)).toHaveLength(1)
  })

  it('suggests the parameter meant', () => {
    expect(message(() => parseSweepFlag('demnd=0..5'))).toMatch(
      /^--sweep demnd=0\.\.5: unknown parameter "demnd"; did you mean demand\? Parameters: broken, demand, /,
    )
    expect(message(() => parseSweepFlag('maxEjectionPct=0..50'))).toMatch(/did you mean maxEjectionPercent\?/)
  })

  it('checks both ends against the scenario', () => {
    expect(message(() => buildAxis('fault-duration=10..600', scenario))).toBe(
      '--sweep fault-duration=10..600: the fix would come at 660 s, not before the end of the run (600 s), got 600',
    )
    expect(message(() => buildAxis('maxEjectionPercent=0..150', scenario))).toMatch(/^--sweep maxEjectionPercent=0\.\.150: .*100.*got 150$/)
    expect(message(() => buildAxis('servers=0..10', scenario))).toMatch(/expected at least 1 server, got 0/)
  })

  it('refuses a parameter swept twice, a third axis and a sweep too big to finish', () => {
    expect(message(() => buildAxes(['broken=0..5', 'broken=0..9'], scenario, 4))).toMatch(/broken is already swept by --sweep broken=0\.\.5/)
    expect(message(() => buildAxes(['broken=0..5', 'demand=1..9', 'servers=1..9'], scenario, 4))).toMatch(/^--sweep: at most two/)
    expect(message(() => buildAxes(['servers=1000..100000:200', 'demand=1..9:200'], scenario, 4))).toMatch(/server-ticks; fewer steps or a smaller scenario$/)
  })

  it('refuses a scenario whose fault is not fixed before the end of the run: stuck would mean nothing', () => {
    const late = {...scenario, faults: [{...scenario.faults[0], to: 600}]}
    expect(message(() => buildAxes(['demand=500..2000'], late, 4))).toMatch(
      /^--sweep: scenario outlook-2026 has a fault until 600 s, not fixed before the end of the run \(600 s\)/,
    )
    expect(buildAxes(['fault-duration=10..300'], late, 4)).toHaveLength(1)
  })

  it('applies a value to a copy, leaving the loaded scenario as it was', () => {
    const before = JSON.stringify(scenario)
    const cell = sweepParam('broken')!.apply({scenario, policy: scenario.setups['no-guard']}, 9)
    const demand = sweepParam('demand')!.apply(cell, 700)
    expect(demand.scenario.faults[0]).toMatchObject({kind: 'broken', servers: 9})
    expect(demand.scenario.demand.rps).toBe(700)
    const ejection = sweepParam('maxEjectionPercent')!.apply(demand, 40)
    expect(ejection.policy.maxEjectionPercent).toBe(40)
    expect(JSON.stringify(scenario)).toBe(before)
  })
})
