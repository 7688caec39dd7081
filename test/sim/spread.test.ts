import {describe, expect, it} from 'vitest'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {scenarioFrom} from '../helpers/sim.js'

// Ten servers of 100 rps; which differ, and how the load balancer spreads the load over them.
const fleet = (pool: string, rps: number, seed = 1) => {
  const s = scenarioFrom(`
name: spread
# A mechanism pinned at the mean: exact arrivals and service times (issue 47's randomness off).
randomness: none
duration: 60
seed: ${seed}
pools:
  - {name: web, servers: 10, capacity: 100, queueSeconds: 1, ${pool}}
demand: {rps: ${rps}}
healthCheck: {kind: haproxy, inter: 2, fall: 3, rise: 2}
setups:
  plain: {}
`)
  return new Fleet(fleetConfig(s, s.setups.plain))
}

const lostShare = (f: Fleet) => {
  const r = f.run()
  let asked = 0
  let served = 0
  for (let t = 10; t < 60; t++) {
    asked += r.demand[t]
    served += r.served[t]
  }
  return 1 - served / asked
}

describe('servers that differ and how the balancer picks', () => {
  it('a slow minority: that share of the servers, drawn by the seed, completes that factor of the capacity', () => {
    const slowOnes = (seed: number) => {
      const f = fleet('slowMinority: {share: 0.2, factor: 0.5}', 500, seed)
      return [...f.pools[0].capacity].flatMap((c, i) => (c === 50 ? [i] : []))
    }
    expect(slowOnes(1)).toHaveLength(2)
    expect([...fleet('slowMinority: {share: 0.2, factor: 0.5}', 500, 1).pools[0].capacity].filter((c) => c === 100)).toHaveLength(8)
    const draws = new Set([1, 2, 3, 4, 5].map((seed) => slowOnes(seed).join(',')))
    expect(draws.size).toBeGreaterThan(1)
  })

  it('round-robin overloads the slow servers at 78% of the pool; least-connections gives them their share and loses nothing', () => {
    // 700 rps on 900 rps of capacity: 70 each by round-robin, over the slow servers' 50.
    const rr = lostShare(fleet('slowMinority: {share: 0.2, factor: 0.5}', 700))
    const lc = lostShare(fleet('slowMinority: {share: 0.2, factor: 0.5}, balance: least-connections', 700))
    expect(rr).toBeGreaterThan(0.02)
    expect(lc).toBeLessThan(1e-9)
  })

  it('random picks wobble: at 95% of capacity some servers get more than they can do on some ticks and queue, and the seed decides which', () => {
    const queued = (balance: string, seed: number) => {
      const f = fleet(`balance: ${balance}`, 950, seed)
      f.runUntil(30)
      return [...f.pools[0].backlog]
    }
    expect(queued('round-robin', 1).every((q) => q === 0)).toBe(true)
    const draws = [1, 2, 3].map((seed) => queued('random', seed))
    for (const q of draws) expect(q.some((x) => x > 0)).toBe(true)
    expect(new Set(draws.map((q) => q.join(','))).size).toBe(3)
  })
})
