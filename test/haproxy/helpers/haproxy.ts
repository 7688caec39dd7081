import {createServer, request, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import {createServer as createNetServer} from 'node:net'
import {join} from 'node:path'
import {findHaproxy, installHaproxy, startHaproxy as start, type RunningHaproxy} from '../../../src/haproxy/process.js'
import {restrictionConfig} from '../../../src/haproxy/rules.js'
import {rampConfig} from '../../../src/haproxy/weights.js'

/** A port the kernel just handed out and took back, for HAProxy's frontend. */
export async function freePort(): Promise<number> {
  const server = createNetServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

export interface Backend {
  port: number
  name: string
  /** Requests to /slow are held open until this is called. */
  releaseSlow(): void
  /** Requests seen, health checks not counted. */
  hits: number
  /** When set, every request but /health answers 500. */
  broken: boolean
  server: Server
}

/**
 * A tiny backend on loopback (on `port`, or an ephemeral one): /health answers 200, /slow waits for
 * releaseSlow(), /fail answers 500, anything else 200, each with an x-backend header naming it.
 */
export async function startBackend(name: string, port = 0): Promise<Backend> {
  const held: ServerResponse[] = []
  const backend: Backend = {
    port: 0,
    name,
    hits: 0,
    broken: false,
    releaseSlow() {
      for (const res of held.splice(0)) res.end(`${name} slow\n`)
    },
    server: createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/health') return void res.end('ok\n')
      backend.hits++
      res.setHeader('x-backend', name)
      if (req.url === '/slow') return void held.push(res)
      if (req.url === '/fail' || backend.broken) res.statusCode = 500
      res.end(`${name}\n`)
    }),
  }
  await new Promise<void>((resolve) => backend.server.listen(port, '127.0.0.1', resolve))
  backend.port = (backend.server.address() as {port: number}).port
  return backend
}

export async function stopBackend(backend: Backend): Promise<void> {
  backend.releaseSlow()
  backend.server.closeAllConnections()
  await new Promise<void>((resolve) => backend.server.close(() => resolve()))
}

export type {RunningHaproxy}

/** Starts the system HAProxy on `config(dir)` (src/haproxy/process.ts); missing, says how to install it. Callers stop it in afterAll. */
export async function startHaproxy(config: (dir: string) => string, files: Record<string, string> = {}): Promise<RunningHaproxy> {
  const binary = findHaproxy()
  if (!binary) throw new Error(`HAProxy is not installed: ${installHaproxy}; .ci/run installs it`)
  return start(binary, config, files)
}

export interface Reply {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One real HTTP request through HAProxy (a fresh connection each time, so each is routed anew). */
export function get(port: number, path: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path, headers, agent: false}, (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => (body += chunk.toString()))
      res.on('end', () => resolve({status: res.statusCode!, headers: res.headers, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Waits until `check` holds, polling; throws naming `what` after `ms`. */
export async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * The HAProxy both test files drive: a frontend on `port` with sluice's restriction and ramp
 * snippets (green ramped against blue), backend blue of `blue` servers and backend green of one,
 * each checked every 200 ms (fall 2, rise 2), blue with a slow start. `tcpPort` adds a second
 * admin socket over TCP. Pass `blueGreenMaps` as the files.
 */
export function blueGreenConfig(options: {
  port: number
  blue: Array<{name: string; port: number}>
  green: {name: string; port: number}
  slowstartSeconds: number
  tcpPort?: number
}): (dir: string) => string {
  const {port, blue, green, slowstartSeconds, tcpPort} = options
  return (dir) => `global
  stats socket ${dir}/admin.sock mode 600 level admin
${tcpPort === undefined ? '' : `  stats socket ipv4@127.0.0.1:${tcpPort} level admin\n`}  stats timeout 10s
defaults
  mode http
  timeout connect 1s
  timeout client 10s
  timeout server 10s
frontend web
  bind 127.0.0.1:${port}
${restrictionConfig(join(dir, 'restricted.map'))}
${rampConfig(join(dir, 'ramp.map'), 'green', 'blue')}
backend blue
  option httpchk GET /health
  default-server check inter 200ms fall 2 rise 2 slowstart ${slowstartSeconds}s
${blue.map((s) => `  server ${s.name} 127.0.0.1:${s.port}`).join('\n')}
backend green
  option httpchk GET /health
  server ${green.name} 127.0.0.1:${green.port} check inter 200ms fall 2 rise 2
`
}

/** The map files blueGreenConfig reads: nothing restricted, all traffic on blue. */
export const blueGreenMaps = {'restricted.map': '', 'ramp.map': 'blue 100\ngreen 0\n'}

/**
 * A config whose client and server timeouts are `seconds` instead of blueGreenConfig's 10 s: a test
 * that holds a request open while a spawned run drains its server needs it held longer than that.
 */
export function withTimeouts(config: (dir: string) => string, seconds: number): (dir: string) => string {
  return (dir) => config(dir).replace(/timeout (client|server) \d+s/g, `timeout $1 ${seconds}s`)
}

/** Blue's and green's servers started and one HAProxy over them (blueGreenConfig), as most HAProxy test files begin. */
export interface BlueGreen {
  haproxy: RunningHaproxy
  /** The frontend's port. */
  port: number
  /** Each server by name; a test that restarts one puts the new one here. */
  servers: Map<string, Backend>
  /** Stops HAProxy and every server in `servers`. */
  stop(): Promise<void>
}

export async function startBlueGreen(options: {
  blue: string[]
  green: string
  slowstartSeconds: number
  tcpPort?: number
  /** Client and server timeouts, seconds, where not blueGreenConfig's 10 (withTimeouts). */
  timeouts?: number
}): Promise<BlueGreen> {
  const servers = new Map<string, Backend>()
  for (const name of [...options.blue, options.green]) servers.set(name, await startBackend(name))
  const port = await freePort()
  const at = (name: string) => ({name, port: servers.get(name)!.port})
  const config = blueGreenConfig({
    port,
    blue: options.blue.map(at),
    green: at(options.green),
    slowstartSeconds: options.slowstartSeconds,
    ...(options.tcpPort === undefined ? {} : {tcpPort: options.tcpPort}),
  })
  const haproxy = await startHaproxy(options.timeouts === undefined ? config : withTimeouts(config, options.timeouts), blueGreenMaps)
  return {
    haproxy,
    port,
    servers,
    async stop() {
      await haproxy.stop()
      for (const b of servers.values()) await stopBackend(b)
    },
  }
}
