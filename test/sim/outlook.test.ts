import {describe, expect, it} from 'vitest'
import {simulateSetups} from '../../src/sim/simulate.js'
import {pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {builtin} from '../helpers/sim.js'

// The seed's four load-balancer setups on the seed's numbers (shared/seeds, Outlook write-up).
describe('outlook-2026: the seed scenario', () => {
  const scenario = builtin('outlook-2026')
  const report = simulateSetups(scenario, pickSetups(scenario, 'all'))
  const setup = (name: string) => report.setups.find((s) => s.name === name)!
  const demand = 1500
  const interval = scenario.healthCheck.interval
  const faultAt = 60

  it('uses the seed numbers', () => {
    expect(scenario.pools[0]).toMatchObject({servers: 20, capacity: 100})
    expect(scenario.demand.rps).toBe(demand)
    expect(scenario.faults[0]).toMatchObject({kind: 'broken', servers: 6, from: 60, to: 240})
    expect(scenario.healthCheck).toEqual({interval: 10, baseEjection: 30, maxEjection: 300})
    expect(scenario.duration).toBe(600)
    expect(Object.keys(scenario.setups)).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
  })

  it('no-guard: the pool is empty within one check interval of the fault, serves under 20% and never recovers', () => {
    const {record, summary} = setup('no-guard')
    const emptyAt = record.t.findIndex((t, i) => t >= faultAt && record.inRotation[i] === 0)
    expect(emptyAt).toBeGreaterThanOrEqual(faultAt)
    // The check that empties it runs within one interval; the record counts the servers that took
    // each second's traffic, so the empty pool shows from the second after that check.
    expect(record.t[emptyAt] - faultAt).toBeLessThanOrEqual(interval + scenario.tick)
    expect(summary.meanServedDuringFault!).toBeLessThan(0.2 * demand)
    expect(summary.recoveredSecondsAfterFix).toBeNull()
    expect(summary.minInRotation).toBe(0)
  })

  it('cap-third: serves more than three times what no-guard serves during the fault', () => {
    expect(setup('cap-third').summary.meanServedDuringFault!).toBeGreaterThan(3 * setup('no-guard').summary.meanServedDuringFault!)
    // The cap holds: never more than 6 of 20 out.
    expect(setup('cap-third').summary.minInRotation).toBe(14)
  })

  it('panic-50: back at full service within one check interval of the fix', () => {
    const recovered = setup('panic-50').summary.recoveredSecondsAfterFix
    expect(recovered).not.toBeNull()
    expect(recovered!).toBeLessThanOrEqual(interval)
  })

  it('cap-shed-slow-start: serves at least 90% of the surviving capacity and is back within 15 s', () => {
    const surviving = (20 - 6) * 100
    const {summary} = setup('cap-shed-slow-start')
    expect(summary.meanServedDuringFault!).toBeGreaterThanOrEqual(0.9 * surviving)
    expect(summary.recoveredSecondsAfterFix).not.toBeNull()
    expect(summary.recoveredSecondsAfterFix!).toBeLessThanOrEqual(15)
  })

  it('ranks the setups as the seed does by requests lost', () => {
    const lost = (name: string) => setup(name).summary.lostPercent
    expect(lost('cap-shed-slow-start')).toBeLessThan(lost('panic-50'))
    expect(lost('panic-50')).toBeLessThan(lost('no-guard'))
    expect(lost('cap-third')).toBeLessThan(lost('no-guard'))
  })
})
