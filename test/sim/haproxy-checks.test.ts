import {describe, expect, it} from 'vitest'
import {noGuard, type HaproxyCheck, type PoolConfig} from '../../src/sim/config.js'
import {haproxySlowStartWeight, type HaproxyChecks} from '../../src/sim/checks/haproxy-checks.js'
import {noServiceDraws, ServerPool, type PoolTick} from '../../src/sim/pool.js'
import {Random} from '../../src/sim/random.js'

// HAProxy's check rules, each pinned on a tiny pool stepped by hand (1 s ticks, one traffic type).

const poolConfig = (servers: number): PoolConfig => ({
  name: 'web',
  kind: 'servers',
  servers,
  capacity: 100,
  capacitySpread: 0,
  serviceSpread: 0,
  slowMinority: null,
  balance: 'round-robin',
  collapse: 1,
  handshakeCost: 1,
  connectionChurn: 0,
  coldFactor: 1,
  warmupSeconds: 0,
  threads: 200,
  serviceTime: 0.1,
  restartSeconds: 30,
  queueSeconds: null,
})

/** A pool under the seed model's rules (an overloaded server is late at once), or with `queueing` the queueing model's (it carries its queue). */
function makePool(
  servers: number,
  rules: Partial<HaproxyCheck> & {inter?: number} = {},
  slowStart = 0,
  queueSeconds: number | null = null,
  queueing: {clientTimeout: number} | null = null,
): ServerPool {
  const {inter = 1, ...rest} = rules
  const haproxy: HaproxyCheck = {
    fastinter: inter,
    downinter: inter,
    fall: 3,
    rise: 2,
    observe: 'none',
    errorLimit: 10,
    onError: 'fastinter',
    timeoutServer: 50,
    ...rest,
  }
  return new ServerPool(
    {...poolConfig(servers), queueSeconds},
    {...noGuard, slowStart},
    {interval: inter, baseEjection: 30, maxEjection: 300, haproxy},
    1,
    new Random(1),
    1,
    queueing && {...queueing, service: noServiceDraws},
  )
}

const out = (): PoolTick => ({
  offered: 0,
  served: 0,
  failedFast: 0,
  failedSlow: 0,
  shed: 0,
  restricted: 0,
  servedFraction: 0,
  fastFraction: 0,
  inRotation: 0,
  ejected: 0,
  panic: false,
  utilization: 0,
})

/** Steps the pool through ticks from..to−1 at `rps`, returning the last tick's figures. */
function run(pool: ServerPool, from: number, to: number, rps: number): PoolTick {
  const o = out()
  for (let t = from; t < to; t++) pool.step(t, Float64Array.of(rps), new Float64Array(1), null, o)
  return o
}

/** Ticks stepped one at a time until `done` holds after a tick, counting the checks server `i` had. */
function ticksUntil(pool: ServerPool, from: number, rps: number, done: () => boolean, limit = 100): number {
  for (let t = from; t < from + limit; t++) {
    run(pool, t, t + 1, rps)
    if (done()) return t - from + 1
  }
  throw new Error('never happened')
}

/** Steps the pool `ticks` ticks at `rps`, checking every server stays in, and counts the checks that failed. */
function failedChecksStayingIn(pool: ServerPool, ticks: number, rps: number): number {
  let failed = 0
  const checks = pool.checks as HaproxyChecks
  for (let t = 0; t < ticks; t++) {
    const before = [...checks.health]
    run(pool, t, t + 1, rps)
    checks.health.forEach((h, i) => (failed += h < before[i] ? 1 : 0))
    expect(pool.countInRotation()).toBe(pool.size)
  }
  return failed
}

describe('HAProxy checks: fall and rise', () => {
  for (const [fall, rise] of [
    [3, 2],
    [1, 1],
    [5, 4],
  ]) {
    it(`fall ${fall}, rise ${rise}: exactly ${fall} failed checks take a server down and ${rise} good ones bring it back`, () => {
      const pool = makePool(2, {fall, rise})
      pool.breakServers([0], true, false)
      // Checks every tick (inter 1 s), the first at tick 0.
      expect(ticksUntil(pool, 0, 100, () => pool.ejected[0] === 1)).toBe(fall)
      expect(pool.countInRotation()).toBe(1)
      pool.remediate([0])
      expect(ticksUntil(pool, fall, 100, () => pool.ejected[0] === 0)).toBe(rise)
      expect(pool.countInRotation()).toBe(2)
    })
  }

  it('a good check between failures starts the count again: failures must be consecutive', () => {
    const pool = makePool(2, {fall: 3})
    pool.breakServers([0], true, false)
    run(pool, 0, 2, 100)
    pool.breakServers([0], false, false)
    run(pool, 2, 3, 100)
    pool.breakServers([0], true, false)
    run(pool, 3, 5, 100)
    expect(pool.ejected[0]).toBe(0)
    run(pool, 5, 6, 100)
    expect(pool.ejected[0]).toBe(1)
  })

  it('a failed check while rising starts the rise again', () => {
    const pool = makePool(2, {fall: 1, rise: 3})
    pool.breakServers([0], true, false)
    run(pool, 0, 1, 100)
    expect(pool.ejected[0]).toBe(1)
    pool.breakServers([0], false, false)
    run(pool, 1, 3, 100)
    pool.breakServers([0], true, false)
    run(pool, 3, 4, 100)
    pool.breakServers([0], false, false)
    run(pool, 4, 6, 100)
    expect(pool.ejected[0]).toBe(1)
    run(pool, 6, 7, 100)
    expect(pool.ejected[0]).toBe(0)
  })

  it('there is no cap and no ejection timer: every failing server goes down and stays down while it fails', () => {
    const pool = makePool(10, {fall: 2})
    pool.breakServers(
      Int32Array.from({length: 10}, (_, i) => i),
      true,
      false,
    )
    run(pool, 0, 200, 500)
    expect(pool.countInRotation()).toBe(0)
  })

  it('an overloaded server answers its checks late and goes down like a broken one', () => {
    const pool = makePool(2, {fall: 3})
    // 150 rps each on 100 rps servers: both answer late.
    expect(ticksUntil(pool, 0, 300, () => pool.countInRotation() === 0)).toBe(3)
  })

  it('in the queueing model, an overloaded server fails its checks once its queue holds more than the check timeout', () => {
    // 150 rps each on 100 rps servers: each queues 0.5 s of work a second, and a check waits behind
    // the queue (it costs no service time itself). With inter 1 s the queue is deeper than the
    // timeout after the third tick (1.5 s); that check times out a tick later, the next starts one
    // fastinter after it ends, and the third failure takes both down 7 ticks in (1.5 + 2 + 2 + 1 of
    // waiting: the first check of the pool counts its tick too).
    const pool = makePool(2, {fall: 3, inter: 1}, 0, null, {clientTimeout: 5})
    expect(ticksUntil(pool, 0, 300, () => pool.countInRotation() === 0)).toBe(8)
    // With inter 2 s the queue passes it after the fifth tick (2.5 s); each of fall = 3 failing
    // checks takes 2 s to time out and the next starts 2 s after it ends: down about 5 + 3 × 2 +
    // 2 × 2 = 15 s in, and up to 2 s more for the last check that passed, which waited 2 s in the
    // queue before its successor could start. Instant checks every 2 s would have taken it down
    // about 9 s in.
    const slower = makePool(2, {fall: 3, inter: 2}, 0, null, {clientTimeout: 5})
    const down = ticksUntil(slower, 0, 300, () => slower.countInRotation() === 0)
    expect(down).toBeGreaterThanOrEqual(14)
    expect(down).toBeLessThanOrEqual(19)
  })

  it('in the queueing model, a check of a hung server fails only when it times out, and the next starts an interval after it ends', () => {
    // HAProxy's check.c schedules a check's successor inter (fastinter, downinter) after the
    // check completes. A hung server answers nothing: each failed check costs its timeout
    // (inter, 2 s) and the interval after it, so fall = 3 failures take 2 + 2 + 2 + 2 + 2 = 10 s
    // from the first check after the fault; the server's check phase adds up to one interval.
    const downAfterBreak = (refuse: boolean) => {
      const pool = makePool(1, {fall: 3, inter: 2}, 0, null, {clientTimeout: 5})
      run(pool, 0, 10, 50)
      pool.breakServers([0], true, refuse)
      return ticksUntil(pool, 10, 50, () => pool.countInRotation() === 0)
    }
    const down = downAfterBreak(false)
    expect(down).toBeGreaterThanOrEqual(10)
    expect(down).toBeLessThanOrEqual(12)
    // A server that refuses its connections fails each check at once: down after fall checks an interval apart.
    const refused = downAfterBreak(true)
    expect(refused).toBeGreaterThanOrEqual(4)
    expect(refused).toBeLessThanOrEqual(6)
  })

  it('in the queueing model, a bounded queue that empties within the check timeout fails only the checks its full queue turns away', () => {
    // Queue 0.5 s + service 0.1 s < inter 2 s: the check waits at most 0.6 s. At 105 rps each of
    // 100 the full queue turns away 1 in 21: some checks fail, never 3 in a row.
    const mild = makePool(2, {inter: 2, fall: 3}, 0, 0.5, {clientTimeout: 5})
    const failed = failedChecksStayingIn(mild, 400, 210)
    expect(failed).toBeGreaterThan(0)
    expect(failed).toBeLessThan(0.15 * 400)
    // It serves its capacity, all in time (0.6 s under the clients' 5 s), and queues no more than its 0.5 s.
    const o = run(mild, 400, 401, 210)
    expect(o.served).toBeCloseTo(200, 6)
    expect(mild.backlog[0]).toBeCloseTo(50, 6)
  })

  it('in the queueing model, a queue deeper than the clients timeout serves its capacity, none of it in time', () => {
    // Unbounded, at 150% each: the queue passes 5 s of work at 10 s; from then on every request
    // taken waits past the clients' timeout and is answered after its client has gone. (What is
    // answered in time counts as served when the queue takes it, so early ticks count all 300.)
    const pool = makePool(2, {inter: 100, fall: 3}, 0, null, {clientTimeout: 5})
    expect(run(pool, 0, 3, 300).served).toBeCloseTo(300, 6)
    expect(run(pool, 3, 12, 300).served).toBe(0)
    expect(pool.backlog[0]).toBeGreaterThan(5 * 100)
    // Once nothing is asked, the queue drains at capacity and the server answers in time again.
    run(pool, 12, 40, 0)
    expect(pool.backlog[0]).toBe(0)
    expect(run(pool, 40, 41, 100).served).toBeCloseTo(100, 6)
  })

  it('with a bounded queue that empties within the check timeout, a busy server fails only the checks it turns away', () => {
    // Queue 0.5 s + service 0.1 s < inter 2 s. At 105 rps each of 100 a server turns away 1 in 21:
    // over 200 checks each, some fail, never 3 in a row.
    const mild = makePool(2, {inter: 2, fall: 3}, 0, 0.5)
    const failed = failedChecksStayingIn(mild, 400, 210)
    expect(failed).toBeGreaterThan(0)
    expect(failed).toBeLessThan(0.15 * 400)
    // At 300 rps each it turns away two in three: down within a few checks, and back once the pool
    // is empty and nothing is asked of it.
    const heavy = makePool(2, {inter: 2, fall: 3}, 0, 0.5)
    let downs = 0
    let ups = 0
    let was = 2
    for (let t = 0; t < 400; t++) {
      run(heavy, t, t + 1, 600)
      const now = heavy.countInRotation()
      if (now < was) downs++
      if (now > was) ups++
      was = now
    }
    expect(downs).toBeGreaterThan(1)
    expect(ups).toBeGreaterThan(1)
  })

  it('with a bounded queue as long as the check timeout, a busy server answers every check late, as with none', () => {
    const pool = makePool(2, {inter: 2, fall: 3}, 0, 2)
    expect(ticksUntil(pool, 0, 210, () => pool.countInRotation() === 0)).toBeLessThanOrEqual(3 * 2 + 2)
  })

  it('checks at inter while up, fastinter while going down or coming up, downinter while down', () => {
    const pool = makePool(2, {inter: 4, fastinter: 1, downinter: 10, fall: 3, rise: 2})
    const hap = pool.checks as HaproxyChecks
    pool.breakServers([0], true, false)
    // Server 0's first check is at tick 0 (a backend's first checks are spread over one inter),
    // then fastinter: ticks 1 and 2, and down after the third.
    run(pool, 0, 1, 100)
    expect(hap.nextCheck[0]).toBe(1)
    expect(ticksUntil(pool, 1, 100, () => pool.ejected[0] === 1)).toBe(2)
    // Down: next check after downinter.
    expect(hap.nextCheck[0]).toBe(2 + 10)
    pool.remediate([0])
    run(pool, 3, 12, 100)
    expect(pool.ejected[0]).toBe(1)
    run(pool, 12, 13, 100)
    // One good check of two: rising, so fastinter.
    expect(hap.nextCheck[0]).toBe(13)
    run(pool, 13, 14, 100)
    expect(pool.ejected[0]).toBe(0)
    // Up: back to inter.
    expect(hap.nextCheck[0]).toBe(13 + 4)
  })

  it('with every server down the pool answers 503 at once: no panic routing', () => {
    const pool = makePool(4, {fall: 1})
    pool.breakServers([0, 1, 2, 3], true, false)
    run(pool, 0, 1, 400)
    const o = run(pool, 1, 2, 400)
    expect(o.inRotation).toBe(0)
    expect(o.panic).toBe(false)
    expect(o.served).toBe(0)
    expect(o.failedFast).toBe(400)
    expect(o.failedSlow).toBe(0)
  })
})

describe('HAProxy checks: observe layer7, error-limit and on-error', () => {
  // Checks far apart (inter and fastinter 100 s) so that only the observed errors act; server 1's
  // first check is at tick 50, well after these runs. 20 rps: 10 requests a tick per server, all
  // failing on a broken server, so the error limit of 10 is reached once a tick.
  const observed = (onError: HaproxyCheck['onError'], rps = 20) => {
    const pool = makePool(2, {inter: 100, fall: 3, rise: 2, observe: 'layer7', errorLimit: 10, onError})
    run(pool, 0, 1, rps)
    pool.breakServers([1], true, false)
    return pool
  }

  it('mark-down: down at once', () => {
    const pool = observed('mark-down')
    expect(ticksUntil(pool, 1, 20, () => pool.ejected[1] === 1)).toBe(1)
  })

  it('sudden-death: the first time leaves the server one failed check from down; the second takes it down', () => {
    const pool = observed('sudden-death')
    expect(ticksUntil(pool, 1, 20, () => pool.ejected[1] === 1)).toBe(2)
  })

  it('fail-check: each time counts as one failed check, so fall (3) times take it down', () => {
    const pool = observed('fail-check')
    expect(ticksUntil(pool, 1, 20, () => pool.ejected[1] === 1)).toBe(3)
  })

  it('runs are counted in requests, not ticks: 20 failed requests in one tick are two runs of 10', () => {
    // 40 rps: 20 failed requests a tick, so the third run of 10 (fall) comes in the second tick.
    const pool = observed('fail-check', 40)
    expect(ticksUntil(pool, 1, 40, () => pool.ejected[1] === 1)).toBe(2)
  })

  it('fastinter: errors alone never take the server down; they bring its next check forward to fastinter', () => {
    const pool = makePool(2, {inter: 100, fastinter: 5, fall: 3, observe: 'layer7', errorLimit: 10, onError: 'fastinter'})
    run(pool, 0, 1, 40)
    pool.breakServers([1], true, false)
    run(pool, 1, 2, 40)
    expect((pool.checks as HaproxyChecks).nextCheck[1]).toBe(1 + 5)
    run(pool, 2, 6, 40)
    expect(pool.ejected[1]).toBe(0)
    // The checks at fastinter then take it down after fall failures: ticks 6, 11 and 16.
    expect(ticksUntil(pool, 6, 40, () => pool.ejected[1] === 1)).toBe(11)
  })

  it('in the queueing model a request a server never answers counts when its session ends, at timeout server; a refused one at once', () => {
    // Checks far apart (inter 100 s), so only live traffic acts; timeout server 8 s, ticks of 1 s.
    const hung = (refuse: boolean) => {
      const pool = makePool(2, {inter: 100, fall: 3, rise: 2, observe: 'layer7', errorLimit: 10, onError: 'mark-down', timeoutServer: 8}, 0, null, {
        clientTimeout: 5,
      })
      run(pool, 0, 1, 20)
      pool.breakServers([1], true, refuse)
      return ticksUntil(pool, 1, 20, () => pool.ejected[1] === 1)
    }
    // A hung server's requests sent from tick 1 end at tick 9: HAProxy has seen nothing fail before.
    expect(hung(false)).toBe(9)
    // A refused connection fails as it is made.
    expect(hung(true)).toBe(1)
  })

  it('in the queueing model a late answer is a success: an overloaded server whose answers come after its clients gave up is not marked down', () => {
    // HAProxy 2.6 on loopback, 40 requests answered after 2 s with their clients gone at 0.5 s:
    // hrsp_2xx 40, hanafail 0, the server UP. Two servers at 150 rps each on 100: the queue grows
    // 50 requests a second, past the clients' 5 s timeout after 10 s; unbounded, nothing is
    // parked, so every request is answered, late ones included. Checks far apart (inter 100 s).
    const overloaded = (queueSeconds: number | null, rps: number) => {
      const pool = makePool(2, {inter: 100, fall: 3, rise: 2, observe: 'layer7', errorLimit: 10, onError: 'mark-down', timeoutServer: 8}, 0, queueSeconds, {
        clientTimeout: 5,
      })
      const o = run(pool, 0, 40, rps)
      return {pool, o}
    }
    const late = overloaded(null, 300)
    // Most of what it answers is late by now: the clients see failures, HAProxy sees 200s.
    expect(late.o.served).toBeLessThan(150)
    expect(late.pool.countInRotation()).toBe(2)
    // Bounded at 3 s of work and asked five times what they serve, the queues park four requests
    // in five: never answered, those end at timeout server (8 s) as errors, in runs long enough
    // to mark the servers down (one parked in three would be too scattered to make a run of 10).
    const parked = overloaded(3, 1000)
    expect(parked.pool.countInRotation()).toBe(0)
  })

  it('the errors must be consecutive: fewer than the limit in a row on a broken server do nothing', () => {
    // 8 rps: 4 failed requests a tick, and a healthy tick between resets the run.
    const pool = makePool(2, {inter: 100, observe: 'layer7', errorLimit: 10, onError: 'mark-down'})
    run(pool, 0, 1, 8)
    pool.breakServers([1], true, false)
    run(pool, 1, 3, 8)
    pool.breakServers([1], false, false)
    run(pool, 3, 4, 8)
    pool.breakServers([1], true, false)
    run(pool, 4, 6, 8)
    expect(pool.ejected[1]).toBe(0)
    // A third failing tick in a row makes 12.
    run(pool, 6, 7, 8)
    expect(pool.ejected[1]).toBe(1)
  })

  it('a mildly overloaded server fails a share of requests too scattered to make a run of 10; a badly overloaded one does not', () => {
    // 107 rps on 100: 93 served, 14 failed of 107, the longest run about 2.
    const mild = makePool(2, {inter: 100, observe: 'layer7', errorLimit: 10, onError: 'mark-down'})
    run(mild, 0, 30, 214)
    expect(mild.countInRotation()).toBe(2)
    // 190 rps on 100: 10 served, 180 failed of 190 (q ≈ 0.95), the longest run far past 10.
    const bad = makePool(2, {inter: 100, observe: 'layer7', errorLimit: 10, onError: 'mark-down'})
    run(bad, 0, 1, 380)
    expect(bad.countInRotation()).toBe(0)
  })

  it('without observe, errors on live traffic do nothing', () => {
    const pool = makePool(2, {inter: 100, observe: 'none', errorLimit: 10, onError: 'mark-down'})
    run(pool, 0, 1, 40)
    pool.breakServers([1], true, false)
    run(pool, 1, 20, 40)
    expect(pool.ejected[1]).toBe(0)
  })
})

describe('HAProxy slowstart', () => {
  it('the weight starts at 1/16 and steps up by sixteenths to full at the end of the window', () => {
    expect(haproxySlowStartWeight(0, 16)).toBe(1 / 16)
    expect(haproxySlowStartWeight(1, 16)).toBe(2 / 16)
    expect(haproxySlowStartWeight(15, 16)).toBe(1)
    expect(haproxySlowStartWeight(7, 32)).toBe(4 / 16)
  })

  it('a server that comes back up takes the share of traffic its slowstart weight gives it', () => {
    const pool = makePool(2, {fall: 1, rise: 1}, 16)
    pool.breakServers([0], true, false)
    run(pool, 0, 1, 100)
    expect(pool.ejected[0]).toBe(1)
    pool.remediate([0])
    // The check at tick 1 brings it up; slowstart counts from there.
    run(pool, 1, 2, 100)
    expect(pool.ejected[0]).toBe(0)
    for (let elapsed = 1; elapsed <= 17; elapsed++) {
      run(pool, 1 + elapsed, 2 + elapsed, 100)
      // (16 × elapsed / 16 + 1) sixteenths, written out rather than asked of the function above.
      const w = elapsed < 16 ? (elapsed + 1) / 16 : 1
      // Both servers are under capacity, so each completes what it is sent: shares by weight.
      expect(pool.openConnections[0] / pool.openConnections[1]).toBeCloseTo(w, 12)
    }
  })

  it('a server going down during slowstart leaves it; coming back starts it again', () => {
    const pool = makePool(2, {fall: 1, rise: 1}, 16)
    pool.breakServers([0], true, false)
    run(pool, 0, 1, 100)
    pool.remediate([0])
    run(pool, 1, 6, 100)
    pool.breakServers([0], true, false)
    run(pool, 6, 7, 100)
    expect(pool.slowStartSince[0]).toBe(-1)
    pool.remediate([0])
    run(pool, 7, 8, 100)
    expect(pool.slowStartSince[0]).toBe(7)
  })
})
