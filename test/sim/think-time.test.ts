import {describe, expect, it} from 'vitest'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {scenarioFrom} from '../helpers/sim.js'

/**
 * Demand doubles within a tenth of a second at 10 s; every server has room for it, handshakes
 * included. The new clients open connections; a client answered asks again one think time later
 * on its connection. So new connections are asked for until the first new clients' answers come
 * back as requests: one think time, whatever the tick.
 */
function secondsOfNewConnections(tick: number, thinkTime: number): number {
  const s = scenarioFrom(`
name: think
# A mechanism pinned at the mean: exact arrivals and service times (issue 47's randomness off).
randomness: none
duration: 30
tick: ${tick}
pools:
  - {name: web, servers: 4, capacity: 1000, handshakeCost: 4}
demand: {curve: [[0, 100], [10, 100], [10.1, 200], [30, 200]]}
clients: {thinkTime: ${thinkTime}}
setups:
  plain: {}
`)
  const fleet = new Fleet(fleetConfig(s, s.setups.plain))
  let seconds = 0
  while (fleet.tick < fleet.ticks) {
    fleet.step()
    if (fleet.tick * fleet.dt > 10 && fleet.pools[0].lastNewConnections > 1e-9) seconds += fleet.dt
  }
  return seconds
}

describe('connections ride a think time, not a tick', () => {
  it('new connections for one think time after demand jumps, at a tick of 1 s, 0.1 s and 0.02 s', () => {
    // One think time, to within the 0.1 s the jump takes and a tick; the rule before think time
    // gave about a tick (0.1 s, 0.02 s).
    for (const tick of [1, 0.1, 0.02]) {
      const seconds = secondsOfNewConnections(tick, 1)
      expect(seconds, `tick ${tick}`).toBeGreaterThanOrEqual(1 - 1e-9)
      expect(seconds, `tick ${tick}`).toBeLessThanOrEqual(1 + 0.1 + tick + 1e-9)
    }
    expect(secondsOfNewConnections(0.1, 3)).toBeGreaterThanOrEqual(3 - 1e-9)
    expect(secondsOfNewConnections(0.1, 3)).toBeLessThanOrEqual(3.2 + 1e-9)
  })
})
