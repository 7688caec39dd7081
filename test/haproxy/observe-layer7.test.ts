import {createServer, get, type Server} from 'node:http'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {serverStats, statNumber} from '../../src/haproxy/stats.js'
import {freePort, startHaproxy, until, type RunningHaproxy} from './helpers/haproxy.js'

// What HAProxy's `observe layer7` counts against a server, which the queueing model copies
// (src/sim/checks/haproxy-checks.ts, observeEnding): a late answer, sent after its client gave
// up, is a 200 and ends a run of errors; a request never answered counts when `timeout server`
// ends its session. The model once counted late answers as errors, and the collapse drill under
// observe layer7 found it kinder than HAProxy for it (docs/model.md).

/** A server whose /health answers at once and whose other requests wait `delayMs` (never, when null). */
async function upstream(delayMs: number | null): Promise<{port: number; server: Server}> {
  const server = createServer((req, res) => {
    if (req.url === '/health') return void res.end('ok\n')
    if (delayMs !== null) setTimeout(() => res.end('late\n'), delayMs)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {port: (server.address() as {port: number}).port, server}
}

/** Sends `count` requests one after another, each given up after `giveUpMs`. */
async function impatient(port: number, count: number, giveUpMs: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await new Promise<void>((resolve) => {
      const req = get({host: '127.0.0.1', port, path: '/work', agent: false}, (res) => res.resume().on('end', resolve))
      req.setTimeout(giveUpMs, () => req.destroy())
      req.on('error', () => resolve())
      req.on('close', () => resolve())
    })
}

let haproxy: RunningHaproxy
let api: RuntimeApi
const servers: Server[] = []
const ports = {late: 0, never: 0}

beforeAll(async () => {
  const late = await upstream(400)
  const never = await upstream(null)
  servers.push(late.server, never.server)
  ports.late = await freePort()
  ports.never = await freePort()
  // Checks an hour apart after the first, so only live traffic can take a server down.
  // The late server answers within its backend's timeout server (2 s); the other never does (300 ms).
  const backend = (name: string, port: number, timeoutServer: string) => `backend ${name}
  timeout server ${timeoutServer}
  option httpchk GET /health
  server s1 127.0.0.1:${port} check inter 1h observe layer7 error-limit 5 on-error mark-down`
  haproxy = await startHaproxy(
    (dir) => `global
  stats socket ${dir}/admin.sock mode 600 level admin
defaults
  mode http
  timeout connect 1s
  timeout client 10s
frontend late
  bind 127.0.0.1:${ports.late}
  default_backend late
frontend never
  bind 127.0.0.1:${ports.never}
  default_backend never
${backend('late', late.port, '2s')}
${backend('never', never.port, '300ms')}
`,
  )
  api = new RuntimeApi(haproxy.socket)
  // Before its first check (spread over the hour) a server is UP 1/3: up, and counting what it sees.
  const up = async (backend: string) => ((await serverStats(api, backend))[0]?.status ?? '').startsWith('UP')
  await until('both servers up', async () => (await up('late')) && (await up('never')))
})

afterAll(async () => {
  await haproxy?.stop()
  for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()))
})

describe('HAProxy observe layer7: what counts against a server', () => {
  it('a late answer, sent after its client gave up, is a 2xx and no error: ten in a row leave the server UP', async () => {
    await impatient(ports.late, 10, 100)
    // The server answers each 400 ms after it was asked; HAProxy has seen the tenth end by then.
    await until('the tenth late answer', async () => statNumber((await serverStats(api, 'late'))[0], 'hrsp_2xx', 'late') >= 10, 5_000)
    const row = (await serverStats(api, 'late'))[0]
    expect(row.status).toMatch(/^UP/)
    expect(statNumber(row, 'hanafail', 'late')).toBe(0)
    expect(statNumber(row, 'eresp', 'late')).toBe(0)
  })

  it('a request never answered is an error when timeout server ends it: five in a row take the server DOWN (on-error mark-down)', async () => {
    await impatient(ports.never, 5, 100)
    await until('the server marked down', async () => (await serverStats(api, 'never'))[0].status === 'DOWN', 5_000)
    const row = (await serverStats(api, 'never'))[0]
    expect(row.check_status).toBe('HANA')
    expect(statNumber(row, 'hanafail', 'never')).toBeGreaterThan(0)
    expect(statNumber(row, 'eresp', 'never')).toBe(5)
  })
})
