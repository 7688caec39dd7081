import {describe, expect, it} from 'vitest'
import {builtin, fleetFor} from '../helpers/sim.js'

// "Servers in rotation" is what a chart puts next to served: the servers that took the second's
// traffic, i.e. those in rotation before that second's health check ejects any.
describe('servers in rotation are the ones that took the tick’s traffic', () => {
  const scenario = builtin('outlook-2026')

  for (const setup of ['no-guard', 'panic-50']) {
    it(`${setup}: no tick serves requests with no server in rotation`, () => {
      const fleet = fleetFor(scenario, setup)
      const record = fleet.run()
      const [pool] = record.pools
      const contradictions: number[] = []
      for (let i = 0; i < record.ticks; i++) {
        if (record.served[i] > 0 && record.inRotation[i] === 0) contradictions.push(record.t[i])
        if (pool.served[i] > 0 && pool.inRotation[i] === 0) contradictions.push(record.t[i])
      }
      expect(contradictions).toEqual([])
    })
  }

  it('no-guard: a check that ejects servers shows them in rotation that second and out the next', () => {
    const fleet = fleetFor(scenario, 'no-guard')
    const pool = fleet.pools[0]
    // Up to the first check after the fault (at 60 s), which ejects the broken servers.
    fleet.runUntil(61)
    const ejected = pool.size - pool.countInRotation()
    expect(ejected).toBeGreaterThan(0)
    fleet.runUntil(62)
    expect(fleet.record.inRotation[60]).toBe(pool.size)
    expect(fleet.record.inRotation[61]).toBe(pool.size - ejected)
  })
})
