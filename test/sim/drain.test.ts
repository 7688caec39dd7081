import {describe, expect, it} from 'vitest'
import {pickSetups} from '../../src/sim/scenario/load-scenario.js'
import type {Scenario} from '../../src/sim/scenario/schema.js'
import {SimTargetGroup} from '../../src/sim/adapters/target-group.js'
import {VirtualClock} from '../../src/sim/clock.js'
import {ScenarioRun} from '../../src/sim/scenario-run.js'
import type {HaproxyChecks} from '../../src/sim/checks/haproxy-checks.js'
import {builtin} from '../helpers/sim.js'

// How long a drain takes in rehearsal: until the balancer has no session open on the servers, as
// HAProxy's drain (scur) and the drill's real HAProxy wait.

async function drainAt(scenario: Scenario, at: number, ids: string[]) {
  const run = new ScenarioRun(scenario, pickSetups(scenario, 'all')[0].policy)
  const pool = run.fleet.pools[0]
  const clock = new VirtualClock(run.fleet)
  const group = new SimTargetGroup(pool.config.name, pool, run.fleet, clock)
  await clock.sleep(at)
  const start = clock.now()
  const downBefore = Array.from(pool.ejected)
  await group.deregister(ids)
  const drained = await group.waitDrained(ids, 300)
  return {seconds: clock.now() - start, drained, pool, start, downBefore}
}

describe('a drain in rehearsal', () => {
  const stalled = builtin('drill-thread-hold')
  const batch = ['cafe-0', 'cafe-1', 'cafe-2', 'cafe-3', 'cafe-4']

  it('behind HAProxy, waits out the sessions a stalled server will never answer: timeout server after it went DOWN', async () => {
    const {seconds, drained, pool, start, downBefore} = await drainAt(stalled, 120, batch)
    expect(drained).toBe(true)
    const checks = pool.checks as HaproxyChecks
    const timeoutServer = stalled.healthCheck.haproxy!.timeoutServer
    expect(timeoutServer).toBe(50)
    // Every server of the batch stalled and went DOWN; HAProxy sent it nothing after.
    const downAt = [0, 1, 2, 3, 4].map((i) => {
      expect(downBefore[i]).toBe(1)
      return checks.downSince[i] * pool.dt
    })
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeCloseTo(Math.max(...downAt) + timeoutServer - start, 6)
  })

  it('with a shorter timeout server the same drain ends sooner; the scenario sets what the drill configures', async () => {
    const short = {...stalled, healthCheck: {...stalled.healthCheck, haproxy: {...stalled.healthCheck.haproxy!, timeoutServer: 20}}}
    const long = await drainAt(stalled, 120, batch)
    const {seconds} = await drainAt(short, 120, batch)
    expect(seconds).toBeCloseTo(Math.max(0, long.seconds - 30), 6)
  })

  it('of servers that answer, ends when their queues are answered: at once on a pool with headroom', async () => {
    const {seconds, drained} = await drainAt(builtin('drill-headroom'), 30, ['web-0', 'web-1'])
    expect(drained).toBe(true)
    expect(seconds).toBeLessThan(0.5)
  })

  it('gives up at the step timeout and says so', async () => {
    const run = new ScenarioRun(stalled, pickSetups(stalled, 'all')[0].policy)
    const pool = run.fleet.pools[0]
    const clock = new VirtualClock(run.fleet)
    const group = new SimTargetGroup('cafe', pool, run.fleet, clock)
    await clock.sleep(120)
    await group.deregister(batch)
    const start = clock.now()
    expect(await group.waitDrained(batch, 1)).toBe(false)
    expect(clock.now() - start).toBeCloseTo(1, 6)
  })

  it("behind Envoy's checks, at once, as before", async () => {
    const envoy = builtin('outlook-recovery')
    const {seconds, drained} = await drainAt(envoy, 200, ['mailbox-0'])
    expect(drained).toBe(true)
    expect(seconds).toBe(0)
  })
})
