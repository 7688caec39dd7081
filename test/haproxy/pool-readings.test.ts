import {existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {createServer as createNetServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HaproxyPoolReadings} from '../../src/haproxy/pool-readings.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {serverStats} from '../../src/haproxy/stats.js'
import {isolatedEnv} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {capturedBackendRow, capturedServerRow, showStat, statRow} from '../helpers/haproxy-show-stat.js'
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

/**
 * A Runtime API on loopback (HOST:PORT, as `--haproxy` takes it) that answers `show stat` for a
 * backend `app` of eight servers, the BACKEND row's cells from `backend(n)` at the n-th time it is
 * asked: HAProxy's own columns, with the counters a test makes impossible.
 */
async function fakeRuntime(backend: (n: number) => Record<string, string | number>): Promise<{address: string; close: () => Promise<void>}> {
  let asked = 0
  const servers = Array.from({length: 8}, (_, i) => statRow(capturedServerRow, {svname: `s${i + 1}`, status: 'UP', check_fall: 2, check_rise: 3}))
  const server = createNetServer((socket) => {
    let text = ''
    socket.on('data', (chunk) => {
      text += String(chunk)
      if (!text.includes('\n')) return
      const command = text.trim()
      if (/^show stat (app|-1) 2 -1$/.test(command)) socket.end(showStat([statRow(capturedBackendRow, backend(asked++))]))
      else if (/^show stat (app|-1) 4 -1$/.test(command)) socket.end(showStat([statRow(capturedBackendRow, {}), ...servers]))
      else socket.end('Unknown command.\n')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    address: `127.0.0.1:${(server.address() as {port: number}).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('impossible show stat readings, from a Runtime API that answers them: exit 1 naming the field and the value, no verdict, no scenario', () => {
  const env = isolatedEnv('haproxy-impossible')
  const dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-impossible-'))

  const assess = async (backend: (n: number) => Record<string, string | number>) => {
    const runtime = await fakeRuntime(backend)
    try {
      const out = await sluice(['assess', '--scenario', 'outlook-2026', '--haproxy', runtime.address, '--backend', 'app', '--quick', '--json'], {env})
      return {
        ...out,
        source: `HAProxy at ${runtime.address}: backend app (Runtime API show stat)`,
        json: JSON.parse(out.stdout) as {error?: {message: string}; region?: string},
      }
    } finally {
      await runtime.close()
    }
  }

  it('a counter of −357, or of 1e27, is no counter HAProxy keeps (before: judged as a rate)', async () => {
    for (const stot of ['-357', '1000000000000000000000000000', '12.5', 'many']) {
      const out = await assess(() => ({stot, hrsp_2xx: 10}))
      expect(out.code, stot).toBe(1)
      expect(out.json.region).toBeUndefined()
      expect(out.json.error?.message).toBe(
        `${out.source}: show stat field stot of the BACKEND row read "${stot}"; expected a whole number, 0 to 2^53. An impossible reading: nothing is judged on it`,
      )
    }
  })

  it('counters that grow faster than eight servers could be sent are refused, as the demand they make', async () => {
    const out = await assess((n) => ({stot: n === 0 ? 0 : 9e15, hrsp_2xx: n === 0 ? 0 : 9e15}))
    expect(out.code, out.stderr).toBe(1)
    expect(out.json.region).toBeUndefined()
    expect(out.json.error?.message).toMatch(
      new RegExp(
        `^${out.source.replace(/[.()]/g, '\\$&')}: show stat field stot of the BACKEND row, over [\\d.]+ s read 17\\d{14}(\\.\\d+)?; expected requests a second, 0 to 8e\\+7 \\(1e\\+7 a server for 8 servers, orders of magnitude past what any pool carries\\)`,
      ),
    )
  })

  it('calibrate writes no scenario from a field that is not a number', async () => {
    const runtime = await fakeRuntime((n) => ({stot: 10 * n, hrsp_2xx: n < 3 ? 10 * n : 'lots', act: 8}))
    const config = join(dir, 'haproxy.cfg')
    writeFileSync(
      config,
      'backend app\n  default-server inter 2s fall 3 rise 2\n  timeout server 30s\n' +
        Array.from({length: 8}, (_, i) => `  server s${i + 1} 127.0.0.1:${9000 + i}\n`).join(''),
    )
    const out = join(dir, 'app.yaml')
    try {
      const run = await sluice(['calibrate', '--haproxy', runtime.address, '--backend', 'app', '--haproxy-config', config, '--window', '10', '--out', out], {
        env,
      })
      expect(run.code, run.stderr).toBe(1)
      expect(run.stderr).toContain(
        `Error: HAProxy at ${runtime.address}: backend app (Runtime API show stat): show stat field hrsp_2xx of the BACKEND row read "lots"; expected a whole number, 0 to 2^53`,
      )
      expect(existsSync(out)).toBe(false)
    } finally {
      await runtime.close()
    }
  })
})

describe('a live gate on Prometheus, through this HAProxy: a server that echoes the Authorization header', () => {
  const token = 'SEKRET-live-gate-5d2e'
  const env = isolatedEnv('haproxy-gate-secret')
  const dir = mkdtempSync(join(tmpdir(), 'sluice-gate-secret-'))
  let echo: Server
  let echoUrl = ''

  beforeAll(async () => {
    // A Prometheus behind an auth proxy that says which credentials it refused, as some do.
    echo = createServer((req, res) => {
      res.statusCode = 401
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({status: 'error', errorType: 'unauthorized', error: `refused Authorization: ${req.headers.authorization}`}))
    })
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve))
    echoUrl = `http://127.0.0.1:${(echo.address() as {port: number}).port}`
  })
  afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())))

  it('fails the gate with the header REDACTED: nothing in run --json, the journal, journal --json or watch --json holds it', async () => {
    const runbook = join(dir, 'gate.yaml')
    writeFileSync(
      runbook,
      `name: prometheus-gate
description: One gate on Prometheus.
targets:
  haproxy:
    socket: ${haproxy.socket}
    backends:
      web: web
  metrics:
    source: prometheus
    url: ${echoUrl}
    authorizationEnv: SLUICE_TEST_GATE_TOKEN
    queries:
      error-rate: 'errors{pool="$pool"}'
steps:
  - action: check
    name: Is web well
    gate: {metric: error-rate, threshold: 1, pool: web, window: 10}
`,
    )
    const withToken = {...env, SLUICE_TEST_GATE_TOKEN: `Bearer ${token}`}
    const run = await sluice(['run', runbook, '--yes', '--json'], {env: withToken})
    expect(run.code, run.stderr).toBe(1)
    const result = JSON.parse(run.stdout) as {runId: string; message: string}
    expect(result.message).toContain(`Prometheus ${echoUrl}: query for error-rate answered HTTP 401: unauthorized: refused Authorization: REDACTED`)
    const outputs = [
      run,
      await sluice(['journal', result.runId], {env: withToken}),
      await sluice(['journal', result.runId, '--json'], {env: withToken}),
      await sluice(['watch', result.runId, '--json'], {env: withToken}),
    ]
    for (const out of outputs) expect(out.stdout + out.stderr).not.toContain(token)
    expect(outputs[1].stdout).toContain('REDACTED')
    const files = readdirSync(env.SLUICE_STATE, {recursive: true, encoding: 'utf8'})
      .map((f) => join(env.SLUICE_STATE, f))
      .filter((f) => statSync(f).isFile())
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) expect(readFileSync(file, 'utf8'), file).not.toContain(token)
  })
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
