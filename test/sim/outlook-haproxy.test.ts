import {describe, expect, it} from 'vitest'
import {simulateSetups} from '../../src/sim/simulate.js'
import {fleetConfig, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {atTheMean, builtin} from '../helpers/sim.js'
import {SimTargetGroup} from '../../src/sim/adapters/target-group.js'
import {VirtualClock} from '../../src/sim/clock.js'
import {ScenarioRun} from '../../src/sim/scenario-run.js'

// outlook-2026's numbers behind HAProxy's checks (inter 2 s, fall 3, rise 2): the collapse case
// of the drill (issue 12), as the simulator predicts it.
describe('outlook-2026-haproxy', () => {
  // Its figures here and in docs/model.md are the mean model's: nothing drawn.
  const scenario = atTheMean('outlook-2026-haproxy')
  const report = simulateSetups(scenario, pickSetups(scenario, 'all'))
  const setup = (name: string) => report.setups.find((s) => s.name === name)!
  const {fall, rise} = fleetConfig(scenario, pickSetups(scenario, ['no-guard'])[0].policy).healthCheck.haproxy!
  const inter = scenario.healthCheck.interval
  const faultAt = 60
  const fixAt = 240
  const survivors = 20 - 6
  const firstEmpty = (name: string) => {
    const {record} = setup(name)
    return record.t[record.t.findIndex((t, i) => t >= faultAt && record.inRotation[i] === 0)]
  }
  /** The most servers in rotation in any second after the pool first emptied and before the fix. */
  const mostBackDuringFault = (name: string) => {
    const {record} = setup(name)
    let most = 0
    record.t.forEach((t, i) => {
      if (t > firstEmpty(name) && t < fixAt) most = Math.max(most, record.inRotation[i])
    })
    return most
  }

  it('has the outlook-2026 numbers and HAProxy checks', () => {
    const envoy = builtin('outlook-2026')
    expect(scenario.pools).toEqual(envoy.pools)
    expect(scenario.demand).toEqual(envoy.demand)
    expect(scenario.faults).toEqual(envoy.faults)
    expect(scenario.clients).toEqual(envoy.clients)
    expect({inter, fall, rise}).toEqual({inter: 2, fall: 3, rise: 2})
    expect(Object.keys(scenario.setups)).toEqual(['no-guard', 'observe-layer7'])
  })

  it('no-guard cascades once the survivors queues fill: the broken servers go down after fall checks, the survivors half a minute later, and the pool is empty', () => {
    // The broken servers hang: each of their fall checks times out at inter and the next starts an
    // interval after it, so they are DOWN 10–12 s in. Then each survivor at 107% queues 7 rps of
    // work; a check waits behind the queue and times out once it holds more than 2 s of work,
    // about 29 s later, and fall more timeouts and intervals take it down. The collapse drill
    // (sluice drill outlook-2026-haproxy, its queue 10 s) emptied its pool 36–40 s after the
    // fault, its seeded arrivals running 7.5% over the mean in the window that decides it.
    const empty = firstEmpty('no-guard') - faultAt
    expect(empty).toBeGreaterThanOrEqual(45)
    expect(empty).toBeLessThanOrEqual(60)
    expect(setup('no-guard').summary.minInRotation).toBe(0)
    // Well under what the survivors could serve had they stayed in.
    expect(setup('no-guard').summary.meanServedDuringFault!).toBeLessThan(0.75 * survivors * 100)
  })

  it('no-guard flaps rather than stays empty: with no growing ejection the survivors rise again and are overloaded again', () => {
    // Their checks pass as their queues drain, one check phase at a time: nearly all are back before the next fall.
    expect(mostBackDuringFault('no-guard')).toBeGreaterThanOrEqual(survivors - 2)
    expect(setup('no-guard').summary.meanServedDuringFault!).toBeGreaterThan(0)
  })

  it('observe-layer7 empties the pool when the checks do: an overloaded survivor answers late, and a late answer is a 200 to HAProxy', () => {
    // The survivors' queues are unbounded here, so nothing is parked unanswered and no request
    // ends at timeout server: live traffic never counts against them, and their checks take them
    // out as with checks only. (The model counted late answers as errors until the collapse
    // drill under observe layer7 found it kinder than HAProxy: every survivor marked down in one
    // second, the pool empty, and back with drained queues; HAProxy measured counts them as 2xx.)
    expect(firstEmpty('observe-layer7')).toBe(firstEmpty('no-guard'))
    expect(setup('observe-layer7').summary.meanServedDuringFault).toBeCloseTo(setup('no-guard').summary.meanServedDuringFault!, 6)
  })

  it('both recover once the fault is fixed, the servers back one check phase at a time onto the whole load', () => {
    // The survivors' queues were full when they went DOWN: each comes back after its queue drains
    // below a check's timeout and rise checks pass, onto the whole load (54 s measured).
    for (const name of ['no-guard', 'observe-layer7']) {
      const recovered = setup(name).summary.recoveredSecondsAfterFix
      expect(recovered).not.toBeNull()
      expect(recovered!).toBeGreaterThan((rise + 1) * inter)
      expect(recovered!).toBeLessThan(60)
    }
  })

  it("unlike Envoy's ejection on the same numbers, which also empties the pool but does not recover in the run", () => {
    const envoy = builtin('outlook-2026')
    const envoyNoGuard = simulateSetups(envoy, pickSetups(envoy, ['no-guard'])).setups[0].summary
    expect(envoyNoGuard.minInRotation).toBe(0)
    expect(envoyNoGuard.recoveredSecondsAfterFix).toBeNull()
  })
})

// The same numbers with each server's queue bounded (pools[].queueSeconds). Whether the survivors
// cascade depends on whether a full queue still answers a check within its timeout (inter, 2 s),
// and how much they serve on whether it answers requests before their clients give up (5 s).
describe('outlook-2026-haproxy with bounded server queues', () => {
  const base = atTheMean('outlook-2026-haproxy')
  const withQueue = (queueSeconds: number | undefined) => {
    const scenario = {...base, pools: base.pools.map((p) => ({...p, queueSeconds}))}
    return simulateSetups(scenario, pickSetups(scenario, ['no-guard'])).setups[0]
  }
  const unbounded = withQueue(undefined)
  const survivors = 20 - 6

  it('a queue shorter than the check timeout: the busy survivors answer checks in time and stay in, serving their capacity', () => {
    // 1 s of queue and 0.1 s of service < 2 s. Each survivor is asked 1,500 / 14 ≈ 107 rps of its
    // 100: it turns away about 7% and fails about as many checks, too few to fail 3 in a row often.
    const {summary} = withQueue(1)
    expect(summary.minInRotation).toBeGreaterThanOrEqual(survivors - 2)
    expect(summary.meanServedDuringFault!).toBeGreaterThan(0.9 * survivors * 100)
    expect(summary.meanServedDuringFault!).toBeLessThanOrEqual(survivors * 100)
  })

  it('a queue as long as the check timeout: a check behind a full queue is answered just in time, so only the checks it turns away fail', () => {
    // The check costs no service time itself (as the drill's servers answer it), so 2 s of queue
    // answers a 2 s check in time; about 7% are turned away, too few to fail 3 in a row often.
    const {summary} = withQueue(2)
    expect(summary.minInRotation).toBeGreaterThanOrEqual(survivors - 2)
  })

  it('a queue longer than the check timeout: checks time out and the pool cascades, but what is served is not wasted', () => {
    const {summary} = withQueue(3)
    expect(summary.minInRotation).toBe(0)
    // No answers to clients that have gone (3 s < 5 s): more served than with the unbounded queue's collapse.
    expect(summary.meanServedDuringFault!).toBeGreaterThan(unbounded.summary.meanServedDuringFault!)
  })

  it('a queue that outlasts the clients: the same run as an unbounded one until the pool empties; then it has less to drain, so its servers pass their checks sooner', () => {
    const deep = withQueue(8)
    const emptied = unbounded.record.inRotation.findIndex((n) => n === 0)
    expect(emptied).toBeGreaterThan(0)
    expect(Array.from(deep.record.served.slice(0, emptied))).toEqual(Array.from(unbounded.record.served.slice(0, emptied)))
    expect(Array.from(deep.record.inRotation.slice(0, emptied))).toEqual(Array.from(unbounded.record.inRotation.slice(0, emptied)))
    // A DOWN server drains its queue before a check can pass; the bounded one holds at most 8 s of work.
    expect(deep.summary.recoveredSecondsAfterFix!).toBeLessThan(unbounded.summary.recoveredSecondsAfterFix!)
    expect(deep.summary.meanServedDuringFault!).toBeGreaterThan(unbounded.summary.meanServedDuringFault!)
  })
})

describe('a simulated HAProxy backend as a target group', () => {
  // A rehearsal against HAProxy's checks refuses what HAProxy cannot change at runtime, as the
  // live HAProxy adapter does, instead of rehearsing a step that would fail live.
  const group = (name: string) => {
    const scenario = builtin(name)
    const run = new ScenarioRun(scenario, pickSetups(scenario, 'all')[0].policy)
    return new SimTargetGroup('mailbox', run.fleet.pools[0], run.fleet, new VirtualClock(run.fleet))
  }

  it('refuses a panic threshold and a new slow start; the Envoy-style pool takes both', async () => {
    const haproxy = group('outlook-2026-haproxy')
    await expect(haproxy.setFailoverPercent(50)).rejects.toThrow(/HAProxy has no routing failover \(panic threshold\) to set to 50%/)
    await expect(haproxy.setSlowStart(120)).rejects.toThrow(/HAProxy cannot change slow start at runtime/)
    expect(await haproxy.failoverPercent()).toBeNull()
    await haproxy.setFailoverPercent(null)
    const envoy = group('outlook-2026')
    await envoy.setFailoverPercent(50)
    expect(await envoy.failoverPercent()).toBe(50)
    await envoy.setSlowStart(120)
    expect(await envoy.slowStart()).toBe(120)
  })
})
