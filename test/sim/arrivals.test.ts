import {describe, expect, it} from 'vitest'
import {Fleet} from '../../src/sim/fleet.js'
import {Random} from '../../src/sim/random.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {moments, scenarioFrom} from '../helpers/sim.js'

// Ten servers of 100 rps at half load, so that nothing fails and every arrival is offered once.
const fleet = (arrivals: string, seed: number, sampleScale = 1) => {
  const s = scenarioFrom(`
name: arrivals
duration: 600
seed: ${seed}
pools:
  - {name: web, servers: 10, capacity: 100, queueSeconds: 1}
demand: {rps: 500, arrivals: ${arrivals}, sampleScale: ${sampleScale}}
healthCheck: {kind: haproxy, inter: 2, fall: 3, rise: 2}
setups:
  plain: {}
`)
  return new Fleet(fleetConfig(s, s.setups.plain))
}

describe('arrivals', () => {
  it('a Poisson draw has its mean as mean and as variance, for a few requests a tick and for many', () => {
    for (const mean of [0.5, 4, 29, 31, 1500]) {
      const random = new Random(7)
      const n = 40_000
      const m = moments(() => random.poisson(mean), n)
      // Five standard errors of the mean; the variance within 5%.
      expect(Math.abs(m.mean - mean), `mean ${mean}`).toBeLessThan(5 * Math.sqrt(mean / n))
      expect(m.variance / mean, `mean ${mean}`).toBeGreaterThan(0.95)
      expect(m.variance / mean, `mean ${mean}`).toBeLessThan(1.05)
    }
    expect(new Random(1).poisson(0)).toBe(0)
  })

  it('poisson: each tick offers a seeded draw around the rate, its spread the square root of the mean; mean: the rate exactly, whatever the seed', () => {
    const offered = (arrivals: string, seed: number) => [...fleet(arrivals, seed).run().offered]
    // The scenario's tick (a twentieth of inter): a tick draws rate × dt requests, so the rate it
    // offers spreads by √(rate × dt) / dt.
    const dt = fleet('mean', 1).dt
    expect(dt).toBe(0.1)
    const spread = Math.sqrt(500 * dt) / dt
    const steady = offered('mean', 1)
    expect(steady.every((x) => x === 500)).toBe(true)
    expect(offered('mean', 2)).toEqual(steady)

    const drawn = offered('poisson', 1)
    const m = moments(
      (() => {
        let i = 0
        return () => drawn[i++]
      })(),
      drawn.length,
    )
    expect(Math.abs(m.mean - 500)).toBeLessThan((5 * spread) / Math.sqrt(drawn.length))
    expect(Math.sqrt(m.variance)).toBeGreaterThan(0.9 * spread)
    expect(Math.sqrt(m.variance)).toBeLessThan(1.1 * spread)
    expect(offered('poisson', 1)).toEqual(drawn)
    expect(offered('poisson', 2)).not.toEqual(drawn)
  })

  it('sampleScale draws at a share of the requests, as a drill sends them: the rate spreads by √(rate × dt × scale) / (dt × scale), the mean kept', () => {
    const scale = 0.125
    const record = fleet('poisson', 1, scale).run()
    const drawn = [...record.offered]
    // Demand is what arrived, as a drill's is what its load sent (nothing here fails or retries).
    expect([...record.demand]).toEqual(drawn)
    expect([...fleet('mean', 1, scale).run().demand].every((x) => x === 500)).toBe(true)
    const dt = 0.1
    const spread = Math.sqrt(500 * dt * scale) / (dt * scale)
    const m = moments(
      (() => {
        let i = 0
        return () => drawn[i++]
      })(),
      drawn.length,
    )
    expect(Math.abs(m.mean - 500)).toBeLessThan((5 * spread) / Math.sqrt(drawn.length))
    expect(Math.sqrt(m.variance)).toBeGreaterThan(0.9 * spread)
    expect(Math.sqrt(m.variance)).toBeLessThan(1.1 * spread)
    // Each draw is a whole count of the drill's requests.
    expect(drawn.every((x) => Number.isInteger(Math.round(x * dt * scale * 1e6) / 1e6))).toBe(true)
  })
})
