import {describe, expect, it} from 'vitest'
import type {SimulationModel} from '../../src/sim/config.js'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig} from '../../src/sim/scenario/load-scenario.js'
import {scenarioFrom} from '../helpers/sim.js'

// Clients retry once at once (no backoff), and honour Retry-After: 30. Every server refuses
// connections from 10 s to 100 s, so the load balancer answers each attempt with a fast 503 of its
// own, which carries no Retry-After.
const scenarioText = (model: SimulationModel, faulty: boolean) => `
name: retry-after
# A mechanism pinned at the mean: exact arrivals and service times (issue 47's randomness off).
randomness: none
duration: 120
model: ${model}
pools:
  - name: web
    servers: 10
    capacity: 100
demand:
  rps: 500
  types: {interactive: 0.5, sync: 0.5}
clients: {attempts: 2, timeout: 5, backoffBase: 0, backoffMax: 0, retryAfter: 30}
faults: ${faulty ? '[{kind: broken, servers: 10, mode: refuse, from: 10, to: 100}]' : '[]'}
setups:
  plain: {}
`

function fleet(model: SimulationModel, faulty = true): Fleet {
  const scenario = scenarioFrom(scenarioText(model, faulty))
  return new Fleet(fleetConfig(scenario, scenario.setups.plain))
}

describe("Retry-After: only the 503s that carry it make clients wait (queueing model; the seed's rule kept as model: seed)", () => {
  it("the load balancer's own 503 is retried after the clients' backoff, not after retryAfter", () => {
    const record = fleet('queueing').run()
    // Every attempt fails fast from 10 s: the next second brings the retries of the last.
    expect(record.offered[20]).toBeCloseTo(1000, 6)
    expect(record.offered[5]).toBeCloseTo(500, 6)
  })

  it('in the seed model every fast failure waits retryAfter', () => {
    const record = fleet('seed').run()
    expect(record.offered[20]).toBeCloseTo(500, 6)
    expect(record.offered[45]).toBeCloseTo(1000, 6)
  })

  it("a restriction's 503 makes clients wait the restriction's own Retry-After", () => {
    for (const [model, waits] of [
      ['queueing', 20],
      ['seed', 30],
    ] as const) {
      const f = fleet(model, false)
      f.setRestricted('sync', 100, 20)
      f.run()
      const {offered} = f.record
      // Sync's first attempts are turned away from 0 s; their retries arrive `waits` seconds later.
      expect(offered[waits - 2], model).toBeCloseTo(500, 6)
      expect(offered[waits + 2], model).toBeCloseTo(750, 6)
    }
  })

  it("a restriction's wait past the clients' longest is kept in full (the retry ring grows)", () => {
    const f = fleet('queueing', false)
    f.setRestricted('sync', 100, 95)
    f.run()
    expect(f.record.offered[93]).toBeCloseTo(500, 6)
    expect(f.record.offered[97]).toBeCloseTo(750, 6)
  })
})
