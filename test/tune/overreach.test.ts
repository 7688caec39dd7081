import {describe, expect, it} from 'vitest'
import type {WeightChange} from '../../src/report/rehearsal.js'
import {overreaches, overreachText, stepLoads} from '../../src/tune/overreach.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

// What a ramp's change asks of the pool it moves traffic onto, from first principles: the pool's
// share of the demand then, plus the handshakes of what moved (each new connection's first request
// costs handshakeCost requests of work), all at once behind a load balancer or spread over a TTL.

const haproxy = loadScenario('outlook-recovery-haproxy').scenario
const sets = {mailbox: 'mailbox', maintenance: 'maintenance'}
/** A change of the runbook's step 5 from `from`% to `to`% on mailbox, 1,200 rps split, the pool serving `capacity` then. */
const change = (from: number, to: number, capacity: number): WeightChange => ({
  at: 400,
  weights: {mailbox: to, maintenance: 100 - to},
  taken: {step: 4, before: {mailbox: from, maintenance: 100 - from}, capacityRps: {mailbox: capacity}, demandRps: 1200},
})

describe('tune: what a step asks of the pool it moves traffic onto', () => {
  it('at once (TTL 0), the moved share costs handshakeCost each: 30% of 1,200 rps onto a cold pool is 1,440 rps of work', () => {
    expect(haproxy.dns.ttl).toBe(0)
    expect(haproxy.pools[0].handshakeCost).toBe(4)
    const [load] = stepLoads([change(0, 30, 1000)], sets, haproxy)
    expect(load).toMatchObject({step: 4, pool: 'mailbox', points: 30, movedRps: 360, capacityRps: 1000, warmRps: 2000, handshakeCost: 4})
    expect(load.workRps).toBeCloseTo(1440, 9)
    expect(overreaches(load)).toBe(true)
    expect(overreachText(load)).toBe(
      "step 5: +30 points, 360 rps onto mailbox, its new connections at 4× a request's work: 1,440 rps of work against 1,000 rps served then by its servers in rotation, 2,000 rps when warm, more than the pool could take",
    )
    // 20% is 240 rps, 960 of work: within the thousand.
    expect(overreaches(stepLoads([change(0, 20, 1000)], sets, haproxy)[0])).toBe(false)
    // From 20% to 40% the 240 rps already there ride their connections: 240 + 4 × 240 = 1,200.
    expect(stepLoads([change(20, 40, 1000)], sets, haproxy)[0].workRps).toBeCloseTo(1200, 9)
  })

  it('over a TTL the handshakes spread: a thirtieth of them in any one second with a 1 s think time', () => {
    const dns = {...haproxy, dns: {...haproxy.dns, ttl: 30}}
    // 600 rps there in the end, and 3 × 600 / 30 = 60 of handshakes on top.
    expect(stepLoads([change(0, 50, 1000)], sets, dns)[0].workRps).toBeCloseTo(660, 9)
  })

  it('a pool losing share, a sorry pool, and a rollback change (no step taken) ask nothing', () => {
    expect(stepLoads([change(50, 40, 1000)], sets, haproxy)).toEqual([])
    const parked: WeightChange = {
      at: 1,
      weights: {mailbox: 0, maintenance: 100},
      taken: {step: 2, before: {mailbox: 100, maintenance: 0}, capacityRps: {mailbox: 1000}, demandRps: 1200},
    }
    expect(stepLoads([parked], sets, haproxy)).toEqual([])
    expect(stepLoads([{at: 1, weights: {mailbox: 100, maintenance: 0}}], sets, haproxy)).toEqual([])
  })
})
