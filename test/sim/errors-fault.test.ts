import {describe, expect, it} from 'vitest'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {dispersion} from '../../src/judge/counts.js'
import {scenarioFrom} from '../helpers/sim.js'

// Two pools at half the demand each, with room to spare; green answers 2% of what it serves with
// an error from 20 s to 80 s. The servers stay up: only the answers err.
const scenario = (randomness: 'none' | 'drawn', clients = '') =>
  scenarioFrom(`
name: erring
randomness: ${randomness}
duration: 100
pools:
  - {name: blue, servers: 4, capacity: 100}
  - {name: green, servers: 4, capacity: 100}
demand: {rps: 400}
dns: {ttl: 0, weights: {blue: 50, green: 50}}
${clients}
faults:
  - {kind: errors, pool: green, percent: 2, from: 20, to: 80}
setups:
  plain: {}
`)

function run(randomness: 'none' | 'drawn', clients = ''): Fleet {
  const s = scenario(randomness, clients)
  const fleet = new Fleet(fleetConfig(s, s.setups.plain))
  fleet.runUntil(100)
  return fleet
}

/** A pool's requests and errors over whole seconds [from, to). */
function counts(fleet: Fleet, pool: number, from: number, to: number): {requests: number; errors: number} {
  const series = fleet.record.pools[pool]
  let requests = 0
  let errors = 0
  for (let i = 0; i < fleet.record.ticks; i++) {
    const t = fleet.record.t[i]
    if (t < from || t >= to) continue
    requests += series.offered[i] * fleet.record.stride * (fleet.record.t[1] - fleet.record.t[0])
    errors += series.failed[i] * fleet.record.stride * (fleet.record.t[1] - fleet.record.t[0])
  }
  return {requests, errors}
}

describe('a fault of kind errors: a pool answers a share of what it serves with an error', () => {
  it('at the mean, exactly the share of the pool it names, only while it lasts, and no server leaves rotation', () => {
    const fleet = run('none')
    const during = counts(fleet, 1, 20, 80)
    expect(during.errors / during.requests).toBeCloseTo(0.02, 9)
    expect(counts(fleet, 1, 0, 20).errors).toBe(0)
    expect(counts(fleet, 1, 80, 100).errors).toBe(0)
    expect(counts(fleet, 0, 0, 100).errors).toBe(0)
    expect(Math.min(...fleet.record.pools[1].inRotation.subarray(0, fleet.record.ticks))).toBe(4)
  })

  it('clients retry the errors as any fast failure, through DNS again: with two attempts each pool is asked half of 2% more', () => {
    const fleet = run('none', 'clients: {attempts: 2, backoffBase: 0.1, backoffMax: 1}')
    for (const pool of [0, 1]) expect(counts(fleet, pool, 40, 80).requests / 40 / (counts(fleet, pool, 10, 20).requests / 10)).toBeCloseTo(1.01, 3)
    const during = counts(fleet, 1, 40, 80)
    // A retry errs as often as a first attempt; the clients' second attempts fail only 2% × 2%.
    expect(during.errors / during.requests).toBeCloseTo(0.02, 6)
  })

  it('with drawn arrivals, how many err is drawn: near the share over the fault, each ten seconds varying as a binomial', () => {
    const fleet = run('drawn')
    const windows = Array.from({length: 6}, (_, k) => counts(fleet, 1, 20 + 10 * k, 30 + 10 * k))
    const all = {requests: windows.reduce((a, w) => a + w.requests, 0), errors: windows.reduce((a, w) => a + w.errors, 0)}
    // 12,000 requests at 2%: 240 ± 15.3 errors; five standard deviations either side.
    expect(all.errors).toBeGreaterThan(240 - 5 * 15.3)
    expect(all.errors).toBeLessThan(240 + 5 * 15.3)
    // Not the share every time: the windows' rates differ, as a binomial's do, and no more.
    expect(new Set(windows.map((w) => (w.errors / w.requests).toFixed(6))).size).toBe(windows.length)
    expect(dispersion(windows.map((w) => ({requests: Math.round(w.requests), errors: Math.round(w.errors)})))).toBeLessThan(4)
  })
})
