import {describe, expect, it} from 'vitest'
import type {SimulationModel} from '../../src/sim/config.js'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {scenarioFrom} from '../helpers/sim.js'

// One server, 100 rps, 10 of them lookups that hold a thread for 20 s from 10 s to 30 s: 200
// threads held at most, of 1,000, so the server never stalls and the held count is the rule's.
const scenario = (model: SimulationModel, threads: number) =>
  scenarioFrom(`
name: hold
# A mechanism pinned at the mean: exact arrivals and service times (issue 47's randomness off).
randomness: none
duration: 80
model: ${model}
pools:
  - {name: web, servers: 1, capacity: 500, threads: ${threads}}
demand:
  rps: 100
  types: {interactive: 0.9, lookup: 0.1}
faults:
  - {kind: thread-hold, type: lookup, holdSeconds: 20, from: 10, to: 30}
setups:
  plain: {}
`)

function run(model: SimulationModel, threads = 1000, until = 80): Fleet {
  const s = scenario(model, threads)
  const fleet = new Fleet(fleetConfig(s, s.setups.plain))
  fleet.runUntil(until)
  return fleet
}

const heldAt = (model: SimulationModel, seconds: number, threads?: number) => run(model, threads, seconds).pools[0].heldThreads[0]

describe('held threads: each held request keeps its thread for exactly holdSeconds (the drill fleet holds them so too)', () => {
  it('builds up linearly for holdSeconds, then holds steady, then drains to nothing holdSeconds after the fix', () => {
    expect(heldAt('queueing', 20)).toBeCloseTo(100, 6)
    expect(heldAt('queueing', 30)).toBeCloseTo(200, 6)
    // Taken between 10 s and 30 s, each released 20 s later: half are gone at 40 s, all by 50 s.
    expect(heldAt('queueing', 40)).toBeCloseTo(100, 6)
    expect(heldAt('queueing', 50)).toBe(0)
  })

  it('the seed model releases them at random: fewer held at the fix, some still held long after', () => {
    expect(heldAt('seed', 30)).toBeLessThan(0.7 * 200)
    expect(heldAt('seed', 50)).toBeGreaterThan(10)
  })

  it('a server stalls when held requests take every thread: at threads / rate, not later', () => {
    // 10 held a second against 150 threads: all taken after 15 s of the fault, at 25 s.
    const stalledBy = (seconds: number) => run('queueing', 150, seconds).pools[0].stalled[0]
    expect(stalledBy(24)).toBe(0)
    expect(stalledBy(26)).toBe(1)
    // It stays stalled after the fault and the holds are over, until it is restarted.
    expect(stalledBy(80)).toBe(1)
  })
})
