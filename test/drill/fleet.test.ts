import {afterEach, describe, expect, it} from 'vitest'
import {fleetLoopDelay, sendFleetCommand, startFleet, type FleetPoolConfig, type RunningFleet} from '../../src/drill/fleet.js'
import {startLoad} from '../../src/drill/load-generator.js'
import {OpenConnections} from '../../src/drill/server.js'
import {accepts, get, median, sleep} from './http.js'

/** One worker serving 20 requests a second: 50 ms a request, so a queue shows in a few hundred ms. */
const base: FleetPoolConfig = {
  name: 'web',
  servers: 1,
  capacity: 20,
  serviceTime: 0.05,
  threads: 8,
  queueLimit: 20,
  coldFactor: 1,
  warmupSeconds: 0,
  restartSeconds: 0.3,
  handshakeCost: 1,
}

let fleet: RunningFleet | null = null
afterEach(async () => {
  await fleet?.stop()
  fleet = null
})

async function one(overrides: Partial<FleetPoolConfig> = {}) {
  fleet = await startFleet({pools: [{...base, ...overrides}]})
  return fleet.pools[0].ports[0]
}

describe("the scenario's connection rule at a server", () => {
  /** Requests arriving `perWindow` a window for `windows` windows of 1 s, `answered` of each answered; how many were new. */
  const play = (c: OpenConnections, from: number, windows: number, perWindow: number, answered: number): number => {
    let fresh = 0
    for (let w = 0; w < windows; w++)
      for (let k = 0; k < perWindow; k++) {
        if (!c.ride(from + w + k / perWindow / 2, 1)) fresh++
        if (k < answered) c.answered()
      }
    return fresh
  }

  it('starts connected and, with every request answered, makes none new', () => {
    const c = new OpenConnections()
    expect(play(c, 0, 50, 4, 4)).toBe(0)
  })

  it('makes the share beyond the answer rate new: about half when half are answered, once the rates have settled', () => {
    const c = new OpenConnections()
    play(c, 0, 5, 4, 4)
    play(c, 5, 60, 4, 2)
    const fresh = play(c, 65, 20, 4, 2)
    expect(fresh).toBeGreaterThanOrEqual(0.45 * 80)
    expect(fresh).toBeLessThanOrEqual(0.55 * 80)
  })

  it('after a restart nothing is open: the first requests are all new, and fewer as answers return', () => {
    const c = new OpenConnections()
    play(c, 0, 10, 4, 4)
    c.closeAll()
    const first = play(c, 10, 2, 4, 4)
    play(c, 12, 40, 4, 4)
    const later = play(c, 52, 10, 4, 4)
    expect(first).toBeGreaterThanOrEqual(6)
    expect(later).toBe(0)
  })
})

describe('the loopback fleet', () => {
  it('queues past its capacity: answers come later and later, then clients time out', async () => {
    const port = await one()
    const alone = await get(port, '/t/a', 2000)
    expect(alone.status).toBe(200)
    const burst = await Promise.all(Array.from({length: 40}, () => get(port, '/t/a', 600)))
    const served = burst.filter((a) => a.status === 200)
    const timedOut = burst.filter((a) => a.status === 'timeout')
    // One worker at 50 ms a request serves about 12 in 600 ms; the rest wait and time out.
    expect(served.length).toBeGreaterThan(2)
    expect(served.length).toBeLessThan(30)
    expect(timedOut.length).toBeGreaterThan(10)
    // One worker answers no faster than one request per 50 ms, so the last answered waited behind all the others.
    expect(Math.max(...served.map((a) => a.ms))).toBeGreaterThanOrEqual(0.9 * 50 * (served.length - 1))
  })

  it('parks requests past the queue limit unanswered', async () => {
    const port = await one({queueLimit: 3, serviceTime: 2, capacity: 0.5})
    const pending = Array.from({length: 8}, () => get(port, '/t/a', 1500))
    await sleep(300)
    const state = fleet!.state().web[0]
    expect(state.inService).toBe(1)
    expect(state.queued).toBe(3)
    expect(state.parked).toBe(4)
    const answers = await Promise.all(pending)
    expect(answers.filter((a) => a.status === 'timeout').length).toBeGreaterThanOrEqual(4)
  })

  it('broken answers 500 to requests and health alike, and recovers when the switch is off', async () => {
    const port = await one()
    await fleet!.command({op: 'fault', pool: 'web', mode: 'broken'})
    expect((await get(port, '/t/a', 1000)).status).toBe(500)
    expect((await get(port, '/health', 1000)).status).toBe(500)
    await fleet!.command({op: 'fault', pool: 'web', mode: 'none'})
    expect((await get(port, '/t/a', 1000)).status).toBe(200)
    expect((await get(port, '/health', 1000)).status).toBe(200)
  })

  it('hang accepts connections and never answers, health included', async () => {
    const port = await one()
    await fleet!.command({op: 'fault', pool: 'web', mode: 'hang'})
    expect(await accepts(port)).toBe(true)
    expect((await get(port, '/t/a', 400)).status).toBe('timeout')
    expect((await get(port, '/health', 400)).status).toBe('timeout')
    await fleet!.command({op: 'fault', pool: 'web', mode: 'none'})
    expect((await get(port, '/health', 1000)).status).toBe(200)
  })

  it('refuse closes the listener and drops open connections, and listens on the same port again when lifted', async () => {
    const port = await one({serviceTime: 5, capacity: 0.2})
    const open = get(port, '/t/a', 3000)
    await sleep(100)
    await fleet!.command({op: 'fault', pool: 'web', mode: 'refuse'})
    expect((await open).status).toBe('reset')
    expect(await accepts(port)).toBe(false)
    expect((await get(port, '/health', 1000)).status).toBe('refused')
    await fleet!.command({op: 'fault', pool: 'web', mode: 'none'})
    expect(await accepts(port)).toBe(true)
  })

  it('held requests that take every thread stall the server, for every type and its health, until it is restarted', async () => {
    const port = await one({threads: 3})
    await fleet!.command({op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.5})
    const held = Array.from({length: 3}, () => get(port, '/t/search', 1500))
    await sleep(100)
    expect(fleet!.state().web[0]).toMatchObject({held: 3, stalled: true})
    // No thread left: other traffic and the health check wait.
    expect((await get(port, '/t/mail', 400)).status).toBe('timeout')
    expect((await get(port, '/health', 400)).status).toBe('timeout')
    // A stalled server answers nothing, not even the held calls when their dependency gives up,
    // and stays stalled after the fault is lifted and the holds are over.
    expect((await Promise.all(held)).map((a) => a.status)).toEqual(['timeout', 'timeout', 'timeout'])
    await fleet!.command({op: 'hold', pool: 'web', type: null})
    expect((await get(port, '/t/search', 500)).status).toBe('timeout')
    await fleet!.command({op: 'restart', pool: 'web'})
    await sleep(400)
    expect(fleet!.state().web[0].stalled).toBe(false)
    expect((await get(port, '/t/search', 1000)).status).toBe(200)
  })

  it('with release at-timeout, held requests that take every thread make the server wait, not stall: as calls time out it answers again, its health included, with no restart', async () => {
    const port = await one({threads: 3})
    await fleet!.command({op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.5, release: 'at-timeout'})
    const held = Array.from({length: 3}, () => get(port, '/t/search', 1500))
    await sleep(100)
    expect(fleet!.state().web[0]).toMatchObject({held: 3, stalled: false})
    // No thread left: other traffic and the health check wait in the queue ...
    const waiting = get(port, '/t/mail', 1500)
    const health = get(port, '/health', 1500)
    // ... and the held calls end at their timeout, failing; their threads come back.
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([500, 500, 500])
    expect((await waiting).status).toBe(200)
    expect((await health).status).toBe(200)
    await fleet!.command({op: 'hold', pool: 'web', type: null})
    expect((await get(port, '/t/search', 1000)).status).toBe(200)
    expect(fleet!.state().web[0].stalled).toBe(false)
  })

  it('a held-type request still queued when the dependency is fixed is served as any other, and the server goes on', async () => {
    const port = await one({threads: 3})
    await fleet!.command({op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.5, release: 'at-timeout'})
    const held = Array.from({length: 3}, () => get(port, '/t/search', 2000))
    await sleep(100)
    // A fourth search waits in the queue for a thread; the dependency is fixed meanwhile.
    const queued = get(port, '/t/search', 2000)
    await sleep(50)
    await fleet!.command({op: 'hold', pool: 'web', type: null})
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([500, 500, 500])
    expect((await queued).status).toBe(200)
    expect((await get(port, '/t/mail', 1000)).status).toBe(200)
    expect((await get(port, '/health', 1000)).status).toBe(200)
  })

  it('refuses a release it does not know', async () => {
    await one({threads: 3})
    await expect(fleet!.command({op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.5, release: 'never' as 'restart'})).rejects.toThrow(/release/)
  })

  it('a held request keeps its thread for exactly holdSeconds, then fails; with threads to spare the server serves on', async () => {
    const port = await one({threads: 3})
    await fleet!.command({op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.3})
    const held = await get(port, '/', 1000, {'x-sluice-type': 'search'})
    // The type is read from the header as well as the path.
    expect(held.status).toBe(500)
    expect(held.ms).toBeGreaterThanOrEqual(290)
    expect((await get(port, '/t/mail', 1000)).status).toBe(200)
    expect(fleet!.state().web[0].stalled).toBe(false)
  })

  it('restart refuses connections while down, then starts cold and warms with traffic', async () => {
    const port = await one({coldFactor: 0.2, warmupSeconds: 1, restartSeconds: 0.3})
    const warmBefore: number[] = []
    for (let i = 0; i < 5; i++) warmBefore.push((await get(port, '/t/a', 2000)).ms)
    await fleet!.command({op: 'restart', pool: 'web'})
    expect((await get(port, '/t/a', 1000)).status).toBe('refused')
    await sleep(400)
    const cold: number[] = []
    for (let i = 0; i < 3; i++) cold.push((await get(port, '/t/a', 2000)).ms)
    expect(fleet!.state().web[0].warmth).toBeLessThan(1)
    // A second and more of steady traffic warms it.
    const until = performance.now() + 1400
    while (performance.now() < until) await get(port, '/t/a', 2000)
    expect(fleet!.state().web[0].warmth).toBe(1)
    const warmAfter: number[] = []
    for (let i = 0; i < 5; i++) warmAfter.push((await get(port, '/t/a', 2000)).ms)
    // Cold: 250 ms a request at least, against 50 ms warm.
    expect(median(cold)).toBeGreaterThanOrEqual(0.9 * 250)
    expect(median(warmBefore)).toBeLessThan(median(cold) - 100)
    expect(median(warmAfter)).toBeLessThan(median(cold) - 100)
  })

  it('health waits behind queued work, so an overloaded server fails a check that times out', async () => {
    const port = await one({queueLimit: 100})
    const burst = Array.from({length: 30}, () => get(port, '/t/a', 3000))
    await sleep(50)
    expect((await get(port, '/health', 300)).status).toBe('timeout')
    await Promise.all(burst)
    expect((await get(port, '/health', 300)).status).toBe(200)
  })

  it('the admin port takes JSON commands and refuses bad ones with a reason, changing nothing', async () => {
    fleet = await startFleet({pools: [{...base, servers: 3}]})
    const [p0, p1, p2] = fleet.pools[0].ports
    await sendFleetCommand(fleet.admin, {op: 'fault', pool: 'web', servers: [1], mode: 'broken'})
    expect((await get(p0, '/t/a', 1000)).status).toBe(200)
    expect((await get(p1, '/t/a', 1000)).status).toBe(500)
    await expect(sendFleetCommand(fleet.admin, {op: 'fault', pool: 'web', servers: [0, 7], mode: 'hang'})).rejects.toThrow(
      /no server 7 in pool "web"; it has servers 0 to 2/,
    )
    await expect(sendFleetCommand(fleet.admin, {op: 'fault', pool: 'api', mode: 'hang'})).rejects.toThrow(/no pool named "api"/)
    await expect(sendFleetCommand(fleet.admin, {op: 'fault', pool: 'web', mode: 'melt' as never})).rejects.toThrow(
      /expected "mode" to be one of none, broken, hang, refuse/,
    )
    await expect(sendFleetCommand(fleet.admin, {op: 'hold', pool: 'web', type: 'a'})).rejects.toThrow(/holdSeconds/)
    // Nothing changed: server 0 was named in the refused command and still serves.
    expect((await get(p0, '/t/a', 1000)).status).toBe(200)
    expect((await get(p2, '/t/a', 1000)).status).toBe(200)
    const state = (await (await fetch(`http://127.0.0.1:${fleet.admin}/state`)).json()) as Record<string, Array<{fault: string}>>
    expect(state.web.map((s) => s.fault)).toEqual(['none', 'broken', 'none'])
  })

  it("a request on a client's new connection costs handshakeCost service times; one on an open connection costs one", async () => {
    const port = await one({handshakeCost: 4, connectionWindow: 0.3})
    // The run starts connected: 50 ms a request.
    const open = await get(port, '/t/a', 2000)
    expect(open.status).toBe(200)
    expect(open.ms).toBeLessThan(150)
    // A restart closes every connection: the next request pays the handshake, 200 ms.
    await fleet!.command({op: 'restart', pool: 'web'})
    await sleep(400)
    const fresh = await get(port, '/t/a', 2000)
    expect(fresh.status).toBe(200)
    expect(fresh.ms).toBeGreaterThanOrEqual(190)
  })

  it("an answer later than the clients' timeout keeps no connection open: after a burst answered late, requests come on new connections", async () => {
    // One worker at 50 ms a request; a burst of 20 is answered over a second. Through HAProxy the
    // server's socket stays open whoever waits, so the clients here wait, and only the server's
    // own rule (clientTimeout, 150 ms) says which answers their clients were still there for.
    const newAfterBurst = async (clientTimeout: number | undefined) => {
      const port = await one({handshakeCost: 4, connectionWindow: 0.2, ...(clientTimeout === undefined ? {} : {clientTimeout})})
      // A few windows of steady asking first: the first window is taken as the steady state.
      for (let k = 0; k < 6; k++) {
        expect((await get(port, '/t/a', 2000)).ms).toBeLessThan(150)
        await sleep(100)
      }
      await Promise.all(Array.from({length: 20}, () => get(port, '/t/a', 5000)))
      let fresh = 0
      for (let k = 0; k < 8; k++) if ((await get(port, '/t/a', 2000)).ms >= 190) fresh++
      await fleet!.stop()
      fleet = null
      return fresh
    }
    // Answered late, the burst's clients had gone: their asking again is on new connections.
    expect(await newAfterBurst(0.15)).toBeGreaterThanOrEqual(2)
    // Every answer counted (the rule before): the burst left every connection open.
    expect(await newAfterBurst(undefined)).toBe(0)
  })

  it('serves at its capacity while its event loop runs late: a late timer does not cost the next request its time', async () => {
    const port = await one({queueLimit: 100, threads: 100})
    const pending = Array.from({length: 80}, () => get(port, '/t/a', 10_000))
    await sleep(200)
    // The fleet runs in this process here: hold its loop 30 ms of every 40, as a starved machine
    // would, so every service timer fires up to 30 ms late. Losing that time would serve one
    // request per 50 + ~15 ms, about 15 a second of its 20.
    const busy = setInterval(() => {
      const until = performance.now() + 30
      while (performance.now() < until);
    }, 40)
    const from = {at: performance.now(), served: fleet!.state().web[0].served}
    await sleep(2000)
    const rate = ((fleet!.state().web[0].served - from.served) * 1000) / (performance.now() - from.at)
    clearInterval(busy)
    expect(rate).toBeGreaterThan(0.93 * 20)
    expect(rate).toBeLessThan(1.05 * 20)
    await fleet!.stop()
    await Promise.all(pending)
  })

  it('reports how late its event loop ran, which a busy loop in it shows', async () => {
    fleet = await startFleet({pools: [{...base, servers: 1}]})
    const before = await fleetLoopDelay(fleet.admin)
    // The fleet runs in this process here: hold its loop for 150 ms, as a starved machine would.
    await sleep(50)
    const until = performance.now() + 150
    while (performance.now() < until);
    await sleep(30)
    const after = await fleetLoopDelay(fleet.admin)
    expect(before.max).toBeLessThan(150)
    expect(after.max).toBeGreaterThanOrEqual(140)
    expect(after.p99).toBeGreaterThanOrEqual(0)
  })

  it('stop leaves no listener: every server port and the admin port refuse', async () => {
    fleet = await startFleet({
      pools: [
        {...base, servers: 3},
        {...base, name: 'api', servers: 2},
      ],
    })
    const ports = [...fleet.pools.flatMap((p) => p.ports), fleet.admin]
    await fleet.command({op: 'fault', pool: 'api', servers: [0], mode: 'hang'})
    const hung = get(fleet.pools[1].ports[0], '/t/a', 3000)
    await sleep(50)
    await fleet.stop()
    expect((await hung).status).toBe('reset')
    for (const port of ports) expect(await accepts(port)).toBe(false)
  })

  it('a server that cannot listen fails the start, naming the system error', async () => {
    const taken = await one()
    const other = {...base, name: 'api', servers: 2, ports: [0, taken]}
    await expect(startFleet({pools: [other]})).rejects.toThrow(/EADDRINUSE/)
  })
})

describe('the loopback fleet under sustained overload', () => {
  it('works on requests whose clients have given up, so goodput falls below what the server completes', async () => {
    const port = await one({queueLimit: 20})
    const record = await startLoad({
      target: {host: '127.0.0.1', port},
      curve: [[0, 40]],
      types: [{name: 'a', share: 1}],
      clients: {attempts: 1, timeout: 0.5, backoffBase: 0, backoffMax: 0, retryBudget: null, budgetWindow: 10, honourRetryAfter: false},
      duration: 3,
      bucketSeconds: 0.5,
      arrivals: 'even',
      seed: 1,
    }).done
    const total = (xs: number[]) => xs.reduce((a, b) => a + b, 0) * 0.5
    const completed = fleet!.state().web[0].served
    const goodput = total(record.series.served)
    // Twice its capacity: the queue outgrows the clients' patience within a second, and from then
    // on nearly every answer comes too late.
    expect(completed).toBeGreaterThan(30)
    expect(goodput).toBeLessThan(0.6 * completed)
    expect(total(record.series.timeouts)).toBeGreaterThan(total(record.series.demand) / 2)
    const [first, , , , , last] = record.series.served
    expect(last).toBeLessThan(first)
  })
})
