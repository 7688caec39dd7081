import {createServer} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HaproxyPool, healthOf} from '../../src/haproxy/pool.js'
import {HaproxyMetrics} from '../../src/haproxy/metrics.js'
import {HaproxyRules} from '../../src/haproxy/rules.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {HaproxyWeights} from '../../src/haproxy/weights.js'
import {WallClock} from '../../src/local/wall-clock.js'
import {freePort, get, startBackend, stopBackend, until, type Backend, type RunningHaproxy, startBlueGreen, type BlueGreen} from './helpers/haproxy.js'

// One HAProxy for the file: the frontend restricts by a runtime map, then splits between blue
// and green by another; blue's three servers are checked on /health every 200 ms.
let haproxy: RunningHaproxy
let port: number
/** The same Runtime API on TCP, as a second `stats socket`. */
let tcpPort: number
let api: RuntimeApi
const backends: Backend[] = []
let fleet: BlueGreen | undefined
const clock = new WallClock()

beforeAll(async () => {
  tcpPort = await freePort()
  fleet = await startBlueGreen({blue: ['b1', 'b2', 'b3'], green: 'g1', slowstartSeconds: 2, tcpPort})
  ;({haproxy, port} = fleet)
  // b1, b2, b3, g1: blue's in order, then green's.
  backends.push(...fleet.servers.values())
  api = new RuntimeApi(`unix:${haproxy.socket}`)
  const blue = new HaproxyPool(api, clock, 'web', 'blue')
  await until('blue servers up', async () => (await blue.targets()).every((t) => t.health === 'healthy'))
})

afterAll(async () => {
  await fleet?.stop()
})

describe('the runtime API client', () => {
  it('talks over the unix socket, and names a missing socket in one line', async () => {
    expect(await api.send('show info')).toMatch(/^Name: HAProxy/m)
    const missing = new RuntimeApi('/nonexistent/x.sock')
    await expect(missing.send('show info')).rejects.toThrow(
      /^haproxy runtime API at \/nonexistent\/x\.sock: no such socket \(is HAProxy running with `stats socket \/nonexistent\/x\.sock level admin`\?\)$/,
    )
  })

  it('talks over TCP too, with the same answers', async () => {
    const tcp = new RuntimeApi(`127.0.0.1:${tcpPort}`)
    expect(await tcp.send('show info')).toMatch(/^Name: HAProxy/m)
    const overTcp = await new HaproxyPool(tcp, clock, 'web', 'blue').targets()
    expect(overTcp).toEqual(await new HaproxyPool(api, clock, 'web', 'blue').targets())
    expect(new HaproxyPool(tcp, clock, 'web', 'blue').label).toBe(`haproxy backend blue (127.0.0.1:${tcpPort})`)
  })

  it('gives up on a listener that never answers at its deadline, naming the command', async () => {
    const silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    try {
      const api = new RuntimeApi(`127.0.0.1:${(silent.address() as {port: number}).port}`, 300)
      await expect(api.send('show info')).rejects.toThrow(/^haproxy runtime API at 127\.0\.0\.1:\d+: `show info` had no answer within 0\.3 s$/)
    } finally {
      silent.close()
    }
  })

  it('names a TCP address nobody listens on', async () => {
    const closed = new RuntimeApi(`127.0.0.1:${await freePort()}`)
    await expect(closed.send('show info')).rejects.toThrow(/^haproxy runtime API at 127\.0\.0\.1:\d+: connection refused/)
  })
})

describe('a backend as a target group', () => {
  it('reads servers with their addresses and health', async () => {
    const blue = new HaproxyPool(api, clock, 'web', 'blue')
    const targets = await blue.targets()
    expect(targets.map((t) => [t.id, t.health, t.ip, t.port])).toEqual(backends.slice(0, 3).map((b) => [b.name, 'healthy', '127.0.0.1', b.port]))
  })

  it('drains a server, waits for its open session to end, and returns it once its checks pass', async () => {
    const blue = new HaproxyPool(api, clock, 'web', 'blue')
    const [b1, b2, b3] = backends
    // Round robin over three servers: three slow requests hold one session open on each.
    const before = backends.map((b) => b.hits)
    const slow = [get(port, '/slow'), get(port, '/slow'), get(port, '/slow')]
    await until('a slow request on each blue server', async () => [b1, b2, b3].every((b, i) => b.hits === before[i] + 1))

    await blue.deregister(['b1'])
    expect((await blue.targets()).find((t) => t.id === 'b1')!.health).toBe('draining')
    // New requests go elsewhere while it drains.
    for (let i = 0; i < 6; i++) expect((await get(port, '/')).headers['x-backend']).not.toBe('b1')
    // The other servers' sessions ending does not count: b1 still has one.
    b2.releaseSlow()
    b3.releaseSlow()
    expect(await blue.waitDrained(['b1'], 1)).toBe(false)

    const drained = blue.waitDrained(['b1'], 20)
    let done = false
    void drained.then(() => (done = true))
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(done).toBe(false)
    b1.releaseSlow()
    await Promise.all(slow)
    expect(await drained).toBe(true)

    await blue.register(['b1'])
    expect(await blue.waitHealthy(['b1'], 20)).toBe(true)
    await until('b1 taking requests again', async () => (await get(port, '/')).headers['x-backend'] === 'b1')
  })

  it('sees a server fail its checks as unhealthy, and healthy again once they pass', async () => {
    const blue = new HaproxyPool(api, clock, 'web', 'blue')
    const b3 = backends[2]
    await stopBackend(b3)
    await until('b3 unhealthy', async () => (await blue.targets()).find((t) => t.id === 'b3')!.health === 'unhealthy')
    expect(await blue.waitHealthy(['b3'], 0.5)).toBe(false)
    backends[2] = await startBackend('b3', b3.port)
    fleet!.servers.set('b3', backends[2])
    expect(await blue.waitHealthy(['b3'], 20)).toBe(true)
  })

  it('refuses an unknown server or backend in one line and changes nothing', async () => {
    const blue = new HaproxyPool(api, clock, 'web', 'blue')
    const before = await blue.targets()
    await expect(blue.deregister(['b2', 'nope'])).rejects.toThrow(/^haproxy backend blue \(.*admin\.sock\) has no server nope; it has b1, b2, b3$/)
    expect(await blue.targets()).toEqual(before)
    const missing = new HaproxyPool(api, clock, 'web', 'purple')
    await expect(missing.targets()).rejects.toThrow(
      /^haproxy runtime API at .*admin\.sock: `show servers state purple` was refused for backend purple: Can't find backend\.$/,
    )
    await expect(missing.deregister(['b1'])).rejects.toThrow(/backend purple: Can't find backend\./)
    await expect(api.change('set server blue/zz state drain', 'server blue/zz')).rejects.toThrow(
      /^haproxy runtime API at .*: `set server blue\/zz state drain` was refused for server blue\/zz: No such server\.$/,
    )
  })

  it('says what HAProxy cannot do at runtime instead of faking it', async () => {
    const blue = new HaproxyPool(api, clock, 'web', 'blue')
    await expect(blue.slowStart()).rejects.toThrow(/cannot report a server's slow start at runtime/)
    expect(await new HaproxyPool(api, clock, 'web', 'blue', {slowStartSeconds: 2}).slowStart()).toBe(2)
    await expect(blue.setSlowStart(30)).rejects.toThrow(/cannot change slow start at runtime/)
    expect(await blue.failoverPercent()).toBeNull()
    await expect(blue.setFailoverPercent(50)).rejects.toThrow(/no routing failover/)
    await blue.setFailoverPercent(null)
  })
})

describe('restrictions as a runtime map', () => {
  it('answers 503 with Retry-After to the restricted type only, and lifts it', async () => {
    const rules = new HaproxyRules(api, join(haproxy.dir, 'restricted.map'))
    expect(await rules.list()).toEqual([])
    await rules.add({type: 'sync', paths: ['/sync/*', '/ews/sync'], headers: {}, retryAfterSeconds: 45})
    expect(await rules.list()).toEqual([{type: 'sync', paths: ['/sync/', '/ews/sync'], headers: {}, retryAfterSeconds: 45}])

    const restricted = await get(port, '/sync/folder')
    expect(restricted.status).toBe(503)
    expect(restricted.headers['retry-after']).toBe('45')
    expect(JSON.parse(restricted.body)).toMatchObject({type: 'sync'})
    expect((await get(port, '/ews/sync?x=1')).status).toBe(503)
    const other = await get(port, '/mail/inbox')
    expect(other.status).toBe(200)
    expect(other.headers['retry-after']).toBeUndefined()

    await rules.add({type: 'search', paths: ['/search'], headers: {}, retryAfterSeconds: 10})
    expect((await get(port, '/search?q=a')).headers['retry-after']).toBe('10')
    expect(await rules.remove('sync')).toBe(true)
    expect(await rules.remove('sync')).toBe(false)
    expect((await get(port, '/sync/folder')).status).toBe(200)
    expect((await get(port, '/search?q=a')).status).toBe(503)
    expect(await rules.remove('search')).toBe(true)
    expect((await get(port, '/search?q=a')).status).toBe(200)
  })

  it('refuses what a path-prefix map cannot express, and a missing map, changing nothing', async () => {
    const rules = new HaproxyRules(api, join(haproxy.dir, 'restricted.map'))
    await expect(rules.add({type: 'x', paths: ['/a/*/b'], headers: {}, retryAfterSeconds: 5})).rejects.toThrow(/the path "\/a\/\*\/b" is not a prefix/)
    await expect(rules.add({type: 'x', paths: [], headers: {'x-client': ['sync']}, retryAfterSeconds: 5})).rejects.toThrow(
      /HAProxy matches headers only where its config names them \(x-client\)/,
    )
    await rules.add({type: 'a', paths: ['/a'], headers: {}, retryAfterSeconds: 5})
    await expect(rules.add({type: 'b', paths: ['/b', '/a'], headers: {}, retryAfterSeconds: 5})).rejects.toThrow(/the path \/a is already restricted as a/)
    expect(await rules.list()).toEqual([{type: 'a', paths: ['/a'], headers: {}, retryAfterSeconds: 5}])
    expect((await get(port, '/b')).status).toBe(200)
    await rules.remove('a')
    const nowhere = new HaproxyRules(api, join(haproxy.dir, 'nope.map'))
    await expect(nowhere.list()).rejects.toThrow(/^haproxy runtime API at .*: `show map .*nope\.map` was refused: HAProxy has loaded no map .*nope\.map/)
  })
})

describe('a ramp between two backends as a runtime map', () => {
  it('moves the split in one atomic commit per step, and requests follow it', async () => {
    const ramp = new HaproxyWeights(api, join(haproxy.dir, 'ramp.map'))
    expect(await ramp.ttl()).toBe(0)
    expect(await ramp.readWeights()).toEqual({blue: 100, green: 0})

    // Every command the step sends: a prepare, the entries into the new version, one commit.
    const sent: string[] = []
    const send = api.send.bind(api)
    api.send = (command, signal) => (sent.push(command), send(command, signal))
    try {
      await ramp.applyWeights({blue: 70, green: 30})
    } finally {
      api.send = send
    }
    const changes = sent.filter((c) => !c.startsWith('show ') && !c.startsWith('add map @'))
    expect(changes.map((c) => c.replace(/ \S+ramp\.map/, ' ramp.map'))).toEqual(['prepare map ramp.map', 'commit map @1 ramp.map'])
    expect(await ramp.readWeights()).toEqual({blue: 70, green: 30})

    const count = async (n: number) => {
      let green = 0
      for (let i = 0; i < n; i++) if ((await get(port, '/')).headers['x-backend'] === 'g1') green++
      return green
    }
    // 300 requests at 30%: 90 expected, sd about 8; 55..125 is more than 4 sd either side.
    const at30 = await count(300)
    expect(at30).toBeGreaterThan(55)
    expect(at30).toBeLessThan(125)
    await ramp.applyWeights({blue: 0, green: 100})
    expect(await count(40)).toBe(40)
    await ramp.applyWeights({blue: 100, green: 0})
    expect(await count(40)).toBe(0)
  })

  it('refuses weights HAProxy cannot route by, changing nothing', async () => {
    const ramp = new HaproxyWeights(api, join(haproxy.dir, 'ramp.map'))
    await expect(ramp.applyWeights({blue: 50, purple: 50})).rejects.toThrow(/has no backend "purple"; it has blue, green/)
    await expect(ramp.applyWeights({blue: 50, green: 40})).rejects.toThrow(/add up to 90, not 100/)
    expect(await ramp.readWeights()).toEqual({blue: 100, green: 0})
  })
})

describe("metrics from HAProxy's counters", () => {
  it('reads request and error rates over a window by sampling, and healthy targets from server state', async () => {
    // HAProxy's counters are real; the time the samples are taken at is the test's, so each
    // window holds exactly the requests sent in it however slow the machine is.
    let burstWhileWaiting: () => Promise<void> = async () => {}
    const manual = {
      t: 1000,
      now: () => manual.t,
      async sleep(seconds: number) {
        manual.t += seconds
        await burstWhileWaiting()
      },
    }
    const blue = new HaproxyPool(api, manual, 'web', 'blue')
    const metrics = new HaproxyMetrics(api, manual, {web: 'blue', canary: 'green'}, new Map([['web', blue]]))
    const burst = async (ok: number, failing: number) => {
      for (let i = 0; i < ok; i++) expect((await get(port, '/')).status).toBe(200)
      for (let i = 0; i < failing; i++) expect((await get(port, '/fail')).status).toBe(500)
    }
    // While a read waits, the requests are sent once (it samples on the way, every quarter window).
    const once = (send: () => Promise<void>) => {
      let sent = false
      return async () => {
        if (!sent) await send()
        sent = true
      }
    }
    // The first read has no earlier sample: it samples, waits out the window, and samples again.
    burstWhileWaiting = once(() => burst(20, 5))
    expect((await metrics.read('request-rate', 10, 'web')).value).toBe(2.5)
    burstWhileWaiting = async () => {}
    // A gate's next verdict, an interval later, is answered from the samples taken on the way: no second wait.
    const before = manual.t
    manual.t += 1
    expect((await metrics.read('request-rate', 10, 'web')).value).not.toBeNull()
    expect(manual.t).toBe(before + 1)
    // Later reads use the sample a window back. A window with no requests is no data, never a zero error rate.
    manual.t += 10
    expect((await metrics.read('error-rate', 10, 'web')).value).toBeNull()
    await burst(5, 5)
    manual.t += 10
    // The reading says how many requests it was measured on: a gate's minRequests reads it.
    expect(await metrics.read('error-rate', 10, 'web')).toEqual({value: 50, requests: 10})
    // A sample far older than the window is not used: it would mix in traffic from before it.
    await burst(0, 4)
    manual.t += 100
    burstWhileWaiting = once(() => burst(4, 0))
    expect((await metrics.read('error-rate', 10, 'web')).value).toBe(0)
    burstWhileWaiting = async () => {}
    // The 503s of sluice's own restriction are answered in the frontend: not the backend's errors.
    const rules = new HaproxyRules(api, join(haproxy.dir, 'restricted.map'))
    await rules.add({type: 'sync', paths: ['/sync/'], headers: {}, retryAfterSeconds: 5})
    await burst(2, 0)
    for (let i = 0; i < 3; i++) expect((await get(port, '/sync/a')).status).toBe(503)
    await rules.remove('sync')
    manual.t += 10
    expect((await metrics.read('error-rate', 10, 'web')).value).toBe(0)

    expect((await metrics.read('healthy-targets', 60, 'web')).value).toBe(100)
    await expect(metrics.read('latency-p99', 60, 'web')).rejects.toThrow(/no latency percentiles/)
    await expect(metrics.read('error-rate', 60, 'nope')).rejects.toThrow(/no backend for pool nope; the runbook names web, canary/)
  })
})

describe('health from server state', () => {
  it('maps admin and operational state to sluice health', () => {
    const row = (op: number, admin: number, result = 3) => ({srv_op_state: String(op), srv_admin_state: String(admin), srv_check_result: String(result)})
    expect(healthOf(row(2, 0))).toBe('healthy')
    expect(healthOf(row(1, 0))).toBe('healthy')
    expect(healthOf(row(2, 0x08))).toBe('draining')
    expect(healthOf(row(0, 0x01))).toBe('unused')
    expect(healthOf(row(0, 0, 2))).toBe('unhealthy')
    expect(healthOf(row(0, 0, 0))).toBe('initial')
  })
})
