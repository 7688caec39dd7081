import {describe, expect, it} from 'vitest'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {fleetForStep} from '../../src/wiring/step-fleet.js'

const outlook = loadScenario('outlook-2026').scenario
const twoRegions = loadScenario('two-regions').scenario

describe('the rehearsal fleet a single action from flags gets', () => {
  it('is the scenario itself when it has what the flags name', () => {
    const pool = outlook.pools[0].name
    expect(fleetForStep(outlook, {pools: [pool]})).toEqual({scenario: outlook, made: []})
    const [a, b] = twoRegions.pools.map((p) => p.name)
    expect(fleetForStep(twoRegions, {set: a, pools: [b]}).made).toEqual([])
  })

  it("renames the one pool, and its faults with it; parks a ramp's traffic on a sorry pool with no servers", () => {
    const {scenario, made} = fleetForStep(outlook, {set: 'web'})
    expect(scenario.pools.map((p) => [p.name, p.kind, p.servers])).toEqual([
      ['web', 'servers', 20],
      ['maintenance', 'sorry', undefined],
    ])
    expect(scenario.dns.weights).toEqual({web: 0, maintenance: 100})
    // outlook-2026's broken servers name no pool, so they stay on the first: web.
    expect(scenario.faults).toEqual(outlook.faults)
    expect(made).toHaveLength(2)
  })

  it('adds a traffic type as a fifth of demand, the rest scaled to fit, and turns it away from the start for a lift', () => {
    const {scenario} = fleetForStep(outlook, {type: 'sync', restricted: true})
    expect(scenario.demand.types).toEqual({all: 0.8, sync: 0.2})
    expect(scenario.restrictions).toEqual([{type: 'sync', share: 100, retryAfter: 120, from: 0}])
    expect(fleetForStep(outlook, {type: 'sync'}).scenario.restrictions).toEqual([])
  })

  it('adds a pool beside several it has, as a copy of the first', () => {
    const {scenario, made} = fleetForStep(twoRegions, {pools: ['third']})
    expect(scenario.pools.map((p) => p.name)).toEqual([...twoRegions.pools.map((p) => p.name), 'third'])
    expect(made[0]).toMatch(/^pools third added, each as /)
  })
})
