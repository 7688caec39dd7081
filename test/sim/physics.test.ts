import {describe, expect, it} from 'vitest'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {simulateSetups, simulationJson} from '../../src/sim/simulate.js'
import {Fleet} from '../../src/sim/fleet.js'
import {fullServiceSince} from '../../src/sim/summary.js'
import {atTheMean, fleetFor, mean, pointAt} from '../helpers/sim.js'

// Each mechanism below is pinned at the mean (atTheMean: nothing drawn): its figures are the
// deterministic model's, whatever randomness a shipped scenario runs with by default.

describe('the model is not hard-wired to collapse', () => {
  it('with 40% of servers broken at 50% utilisation, no setup cascades', () => {
    // 8 of 20 broken; 1,000 rps on 12 × 100 rps leaves the survivors at 83%.
    const {scenario} = loadScenario('outlook-2026', {broken: 8, demand: 1000})
    const report = simulateSetups(scenario, pickSetups(scenario, 'all'))
    for (const {name, summary, record} of report.setups) {
      // No working server is ever ejected: at least the 12 survivors stay in rotation...
      expect(summary.minInRotation, name).toBeGreaterThanOrEqual(12)
      // ...and the pool is at full service within one check interval of the fix.
      expect(summary.recoveredSecondsAfterFix, name).not.toBeNull()
      expect(summary.recoveredSecondsAfterFix!, name).toBeLessThanOrEqual(10)
      // Before the fault nothing is lost.
      expect(mean(record.served, 0, 60), name).toBeCloseTo(1000, 6)
    }
  })

  it('the same 40% broken at 75% utilisation does cascade without a guard', () => {
    const {scenario} = loadScenario('outlook-2026', {broken: 8, demand: 1500})
    const [run] = simulateSetups(scenario, pickSetups(scenario, ['no-guard'])).setups
    expect(run.summary.minInRotation).toBe(0)
  })
})

describe('retries multiply load', () => {
  const scenario = atTheMean('retry-storm')
  // The scenario's two setups differ only in the clients' retry budget, which each sets over the scenario's clients.
  const ratio = (setup: string): number => {
    const record = fleetFor(scenario, setup).run()
    // A steady window well inside the fault, after the first retries have arrived.
    return mean(record.offered, 200, 500) / mean(record.demand, 200, 500)
  }

  it('every request failing with 3 attempts offers about 3× demand', () => {
    expect(scenario.clients.attempts).toBe(3)
    const r = ratio('no-budget')
    expect(r).toBeGreaterThan(3 * 0.95)
    expect(r).toBeLessThan(3 * 1.05)
  })

  it('a 10% retry budget brings it to about 1.1×', () => {
    const r = ratio('budget-10')
    expect(r).toBeGreaterThan(1.1 * 0.95)
    expect(r).toBeLessThan(1.1 * 1.05)
  })

  it('before the fault, with nothing failing, there are no retries', () => {
    const record = fleetFor(scenario, 'no-budget').run()
    expect(mean(record.offered, 0, 30)).toBeCloseTo(1000, 6)
    expect(mean(record.retries, 0, 30)).toBe(0)
  })
})

describe('healthy until traffic reaches them', () => {
  const scenario = atTheMean('relapse')
  const all = Int32Array.from({length: 20}, (_, i) => i)

  /**
   * Collapse (no guard), drain and restart every server at 290 s, return them at 300 s. Without the
   * handshake and cold-cache costs, or with traffic parked from 250 s, the queueing model's pool is
   * back in rotation by 290 s (ejected servers drain their queues); the restart clears it all the same.
   */
  function collapseThenRestart(setup: string, beforeRestart: (f: Fleet) => void, tweak?: Parameters<typeof fleetFor>[2], collapsed = true): Fleet {
    const fleet = fleetFor(scenario, setup, tweak)
    fleet.runUntil(250)
    beforeRestart(fleet)
    fleet.runUntil(290)
    const pool = fleet.pools[0]
    if (collapsed) expect(pool.countInRotation()).toBe(0)
    pool.deregister(all)
    pool.restart(all, fleet.tick, 10)
    fleet.runUntil(300)
    pool.register(all, fleet.tick)
    return fleet
  }

  it('returning every server at full weight relapses: not at full service 120 s later', () => {
    const fleet = collapseThenRestart('no-guard', () => {})
    fleet.runUntil(420)
    const r = fleet.record
    expect(r.served[pointAt(r, 419)]).toBeLessThan(0.99 * r.demand[pointAt(r, 419)])
    expect(fleet.pools[0].countInRotation()).toBeLessThan(20)
    fleet.run()
    expect(fullServiceSince(r)).toBeNull()
  })

  it('the same return holds when new connections and cold caches cost nothing extra', () => {
    // The control: without the handshake and cold-cache physics the relapse disappears, so it is
    // those mechanisms, not the test's timing, that make returning at full traffic fail.
    const fleet = collapseThenRestart(
      'no-guard',
      () => {},
      (c) => {
        c.pools[0].handshakeCost = 1
        c.pools[0].coldFactor = 1
      },
      false,
    )
    fleet.runUntil(420)
    expect(fleet.record.served[pointAt(fleet.record, 419)]).toBeGreaterThanOrEqual(0.99 * fleet.record.demand[pointAt(fleet.record, 419)])
  })

  it('a staged DNS ramp of the same pool stays up', () => {
    const fleet = collapseThenRestart('no-guard', (f) => f.setWeights({mailbox: 0, sorry: 100}), undefined, false)
    let t = 300
    for (const w of [1, 5, 25, 50, 100]) {
      fleet.setWeights({mailbox: w, sorry: 100 - w})
      t += 60
      fleet.runUntil(t)
      expect(fleet.pools[0].countInRotation(), `at ${w}%`).toBe(20)
    }
    fleet.runUntil(t + 120)
    const r = fleet.record
    expect(r.served[pointAt(r, t + 119)]).toBeGreaterThanOrEqual(0.99 * r.demand[pointAt(r, t + 119)])
    fleet.run()
    const since = fullServiceSince(r)
    expect(since).not.toBeNull()
    expect(since!).toBeLessThanOrEqual(t + 120)
    // It never fell back: every server stayed in rotation from the return to the end.
    expect(Math.min(...r.inRotation.slice(pointAt(r, 300), r.ticks))).toBe(20)
  })
})

describe('thread-holding dependency (2024 CAFE)', () => {
  const scenario = atTheMean('cafe-2024')

  it('stalls servers as the peak arrives, and stalled servers stay down after the fix until restarted', () => {
    const fleet = fleetFor(scenario, 'no-guard')
    const pool = fleet.pools[0]
    const stalled = () => pool.stalled.reduce((a, b) => a + b, 0)
    fleet.runUntil(300)
    // Before the peak only the lookups themselves fail, and no server has stalled.
    expect(fleet.record.served[299]).toBeCloseTo(fleet.record.demand[299] * 0.9, 0)
    expect(stalled()).toBe(0)
    fleet.runUntil(1300)
    expect(stalled()).toBeGreaterThan(0)
    expect(pool.countInRotation()).toBe(0)
    // Restart every stalled server after the fix: the pool comes back.
    const ids = Int32Array.from({length: pool.size}, (_, i) => i)
    pool.deregister(ids)
    pool.restart(ids, fleet.tick, 10)
    fleet.runUntil(1320)
    pool.register(ids, fleet.tick)
    fleet.run()
    for (let i = 0; i < pool.size; i++) expect(pool.stalled[i]).toBe(0)
    expect(fullServiceSince(fleet.record)).not.toBeNull()
  })

  it('with release at-timeout, servers whose threads are all held wait and serve again as calls time out; after the fix the pool comes back with no restart', () => {
    const fleet = fleetFor(atTheMean('drill-thread-hold-at-timeout'), 'checks-only')
    const pool = fleet.pools[0]
    let everyThreadHeld = 0
    for (let t = 60; t <= 300; t += 1) {
      fleet.runUntil(t)
      for (let i = 0; i < pool.size; i++) {
        // Never stalled, and never more threads held than the server has.
        expect(pool.stalled[i]).toBe(0)
        expect(pool.heldThreads[i]).toBeLessThanOrEqual(pool.threads[i] + 1e-9)
        if (pool.heldThreads[i] >= pool.threads[i] - 1e-9) everyThreadHeld++
      }
    }
    // The lookups did take every thread of servers, again and again ...
    expect(everyThreadHeld).toBeGreaterThan(pool.size)
    fleet.run()
    // ... and with the dependency fixed at 300 s and its last calls timed out 20 s later, every
    // server is back in rotation and the pool at full service, no restart made.
    expect(pool.countInRotation()).toBe(pool.size)
    expect(fullServiceSince(fleet.record)).not.toBeNull()
    // The same pool and fault with release: restart stalls for good without a runbook's restarts.
    const starved = fleetFor(atTheMean('drill-thread-hold'), 'checks-only')
    starved.run()
    expect(starved.pools[0].stalled.reduce((a, b) => a + b, 0)).toBe(starved.pools[0].size)
    expect(fullServiceSince(starved.record)).toBeNull()
  })

  it('restricting the offending traffic type keeps servers from stalling', () => {
    const fleet = fleetFor(scenario, 'no-guard')
    fleet.setRestricted('decommissioned-lookup', 100)
    fleet.run()
    const pool = fleet.pools[0]
    for (let i = 0; i < pool.size; i++) expect(pool.stalled[i]).toBe(0)
    expect(Math.min(...fleet.record.inRotation)).toBe(30)
  })

  it('a partial restriction turns away its share of the type and lets the rest through to the servers', () => {
    const whole = fleetFor(scenario, 'no-guard')
    const half = fleetFor(scenario, 'no-guard')
    whole.setRestricted('decommissioned-lookup', 100)
    half.setRestricted('decommissioned-lookup', 50)
    expect(half.restrictedPercent('decommissioned-lookup')).toBe(50)
    whole.runUntil(600)
    half.runUntil(600)
    for (let i = 0; i < half.record.ticks; i++) {
      // Half of the type's 10% of demand turned away, every tick.
      expect(half.record.restrictedDemand[i]).toBeCloseTo(0.5 * 0.1 * half.record.demand[i], 6)
      expect(whole.record.restrictedDemand[i]).toBeCloseTo(0.1 * whole.record.demand[i], 6)
    }
    // What the load balancer turned away (retries too) is about half as much.
    const sum = (a: Float64Array) => a.slice(0, 600).reduce((x, y) => x + y, 0)
    expect(sum(half.record.restricted) / sum(whole.record.restricted)).toBeGreaterThan(0.4)
    expect(sum(half.record.restricted) / sum(whole.record.restricted)).toBeLessThan(0.6)
  })
})

describe('shared metadata outage (2022 SQL)', () => {
  it('open connections keep working while new ones fail, so service drains away, then returns paced', () => {
    const record = fleetFor(atTheMean('sql-2022'), 'no-guard').run()
    const at = (s: number) => record.served[pointAt(record, s)]
    expect(at(59)).toBeCloseTo(3000, 3)
    // A minute in, most connections are still open and working.
    expect(at(120)).toBeGreaterThan(0.4 * 3000)
    // Churn drains them: by the end of the outage little is left.
    expect(at(590)).toBeLessThan(0.1 * 3000)
    expect(at(590)).toBeLessThan(at(120))
    // After the caches return, service comes back.
    expect(fullServiceSince(record)).not.toBeNull()
  })
})

describe('determinism', () => {
  it('the same scenario and seed give byte-identical JSON', () => {
    for (const name of ['outlook-2026', 'cafe-2024', 'sql-2022', 'relapse']) {
      const scenario = atTheMean(name)
      const a = JSON.stringify(simulationJson(simulateSetups(scenario, pickSetups(scenario, 'all'))))
      const b = JSON.stringify(simulationJson(simulateSetups(scenario, pickSetups(scenario, 'all'))))
      expect(a).toBe(b)
    }
  })

  it('a different seed changes which servers break and so the run', () => {
    const run = (seed: number) => {
      const {scenario} = loadScenario('outlook-2026', {seed})
      const config = fleetConfig(scenario, pickSetups(scenario, ['cap-third'])[0].policy)
      config.pools[0].capacitySpread = 0.2
      return JSON.stringify(Array.from(new Fleet(config).run().served))
    }
    expect(run(1)).toBe(run(1))
    expect(run(1)).not.toBe(run(2))
  })
})
