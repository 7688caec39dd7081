import {createServer, type Server} from 'node:http'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HaproxyPoolReadings} from '../../src/haproxy/pool-readings.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {serverStats} from '../../src/haproxy/stats.js'
import {freePort, get, startHaproxy, until, type RunningHaproxy} from './helpers/haproxy.js'

/** A server on loopback whose health check answers 500 once it is made sick; /fail answers 500. */
interface Upstream {
  port: number
  sick: boolean
  server: Server
}

async function startUpstream(): Promise<Upstream> {
  const upstream: Upstream = {port: 0, sick: false, server: createServer()}
  upstream.server.on('request', (req, res) => {
    if (req.url === '/health') res.statusCode = upstream.sick ? 500 : 200
    else if (req.url === '/fail') res.statusCode = 500
    res.end('ok\n')
  })
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve))
  upstream.port = (upstream.server.address() as {port: number}).port
  return upstream
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let haproxy: RunningHaproxy
let port: number
let api: RuntimeApi
const upstreams: Upstream[] = []

// The frontend has the backend's name, a common setup: `show stat web …` then answers no rows at
// all (HAProxy 2.6), and every reading here goes through src/haproxy/stats.ts's way round it.
beforeAll(async () => {
  for (let i = 0; i < 3; i++) upstreams.push(await startUpstream())
  port = await freePort()
  haproxy = await startHaproxy(
    (dir) => `global
  stats socket ${dir}/admin.sock mode 600 level admin
defaults
  mode http
  timeout connect 1s
  timeout client 10s
  timeout server 5s
  timeout check 300ms
frontend web
  bind 127.0.0.1:${port}
  default_backend web
backend web
  option httpchk GET /health
  default-server check inter 500ms fastinter 250ms downinter 1s fall 2 rise 3 slowstart 4s observe layer7 error-limit 5 on-error mark-down
${upstreams.map((u, i) => `  server s${i + 1} 127.0.0.1:${u.port}`).join('\n')}
`,
  )
  api = new RuntimeApi(haproxy.socket)
  await until('all three servers up', async () => (await serverStats(api, 'web')).every((s) => s.status === 'UP'))
})

afterAll(async () => {
  await haproxy?.stop()
  for (const u of upstreams) await new Promise<void>((resolve) => u.server.close(() => resolve()))
})

describe('HAProxy pool readings from a real HAProxy', () => {
  it("reads its settings, the configuration found from the running process's command line", async () => {
    const readings = new HaproxyPoolReadings(api, 'web')
    const settings = await readings.settings()
    expect(settings).toMatchObject({
      label: 'HAProxy backend web',
      family: 'haproxy',
      servers: 3,
      healthy: 3,
      interval: 0.5,
      checkTimeout: 0.3,
      fall: 2,
      rise: 3,
      slowStart: 4,
      drainDelay: 0,
      failoverPercent: null,
    })
    expect(settings.haproxy).toEqual({
      fastinter: 0.25,
      downinter: 1,
      observe: 'layer7',
      errorLimit: 5,
      onError: 'mark-down',
      timeoutServer: 5,
      from: `${join(haproxy.dir, 'haproxy.cfg')}:12 (backend web)`,
    })
    expect(readings.notes).toEqual([])
  })

  it('samples a 6 s window into 2 s periods that count the requests sent in each, with every server active', async () => {
    const readings = new HaproxyPoolReadings(api, 'web')
    const start = Date.now() + 300
    const window = readings.history(new Date(start), new Date(start + 6000), 2)
    // Each burst half a second into a period, well away from the 1 s samples on either side.
    const sent = [4, 9, 14]
    for (const [i, count] of sent.entries()) {
      await pause(start + i * 2000 + 500 - Date.now())
      for (let k = 0; k < count; k++) expect((await get(port, '/')).status).toBe(200)
    }
    const periods = await window
    expect(periods.map((p) => p.requests)).toEqual(sent)
    expect(periods.map((p) => p.at)).toEqual([0, 2, 4].map((s) => start / 1000 + s))
    expect(periods.map((p) => [p.errors, p.healthy])).toEqual([
      [0, 3],
      [0, 3],
      [0, 3],
    ])
    for (const p of periods) expect(p.latency).toBeGreaterThanOrEqual(0)
  })

  it('sees a server failing its checks as out of rotation now, and the demand and errors of the last seconds', async () => {
    upstreams[2].sick = true
    await until('s3 down', async () => (await serverStats(api, 'web')).find((s) => s.svname === 's3')?.status === 'DOWN')
    const readings = new HaproxyPoolReadings(api, 'web', {nowSeconds: 2})
    const reading = readings.now()
    await pause(500)
    for (let k = 0; k < 9; k++) await get(port, '/')
    expect((await get(port, '/fail')).status).toBe(500)
    const now = await reading
    expect(now).toMatchObject({servers: 3, healthy: 2, errorRate: 0.1})
    // Ten requests over the two seconds between the readings (a little more, for the reads themselves).
    expect(now.demand).toBeGreaterThan(10 / 2.5)
    expect(now.demand).toBeLessThanOrEqual(10 / 2)
  })

  it('stops when HAProxy goes away mid-window, keeping the periods read and saying when', async () => {
    const readings = new HaproxyPoolReadings(api, 'web')
    const start = Date.now() + 100
    const window = readings.history(new Date(start), new Date(start + 5000), 1)
    await pause(start + 500 - Date.now())
    for (let k = 0; k < 5; k++) await get(port, '/')
    await pause(start + 2500 - Date.now())
    await haproxy.stop()
    const periods = await window
    expect(periods.map((p) => p.requests)).toEqual([5])
    expect(readings.notes).toHaveLength(1)
    expect(readings.notes[0]).toMatch(
      /^sampling backend web stopped at \S+ because HAProxy stopped answering \(.*(no such socket|connection refused).*\); 2 s of the 5 s window was read \(2 whole periods\)$/,
    )
  })
})
