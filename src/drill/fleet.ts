import http from 'node:http'
import {LoopLag} from './loop-lag.js'
import {LoopbackServer, type FaultMode, type ServerConfig, type ServerState} from './server.js'
import type {ThreadHoldRelease} from '../sim/config.js'

/**
 * The loopback fleet: many LoopbackServers on many 127.0.0.1 ports in one process, and an admin
 * port on loopback that flips their faults and restarts them at runtime with JSON commands:
 *
 *   POST /command {"op":"fault","pool":"web","servers":[0,1],"mode":"hang"}   mode: none|broken|hang|refuse
 *   POST /command {"op":"hold","pool":"web","type":"search","holdSeconds":2,"release":"at-timeout"}  ("type": null lifts it; release defaults to restart)
 *   POST /command {"op":"errors","pool":"web","percent":2}   each request served answered 500 with this chance (0 stops it)
 *   POST /command {"op":"restart","pool":"web","servers":[3]}
 *   GET  /state   every server's port, fault and queue
 *   GET  /loop    how late this process's event loop ran since it started, in ms (p99, worst)
 *
 * A command names its servers by index within the pool; `servers` left out means all of them.
 * A bad command is answered 400 with a one-line reason and changes nothing.
 */

export interface FleetPoolConfig extends ServerConfig {
  name: string
  servers: number
  /** Per-server capacities (requests per second), overriding `capacity` where given. */
  capacities?: number[]
  /** Ports to listen on, by server; 0 or missing lets the system pick. */
  ports?: number[]
}

export interface FleetConfig {
  pools: FleetPoolConfig[]
  /** Admin port; 0 or missing lets the system pick. */
  adminPort?: number
}

export interface FleetPoolInfo {
  name: string
  ports: number[]
}

export interface FleetInfo {
  admin: number
  pools: FleetPoolInfo[]
}

export type FleetCommand =
  | {op: 'fault'; pool: string; servers?: number[]; mode: FaultMode}
  | {op: 'hold'; pool: string; servers?: number[]; type: string | null; holdSeconds?: number; release?: ThreadHoldRelease}
  | {op: 'errors'; pool: string; servers?: number[]; percent: number}
  | {op: 'restart'; pool: string; servers?: number[]}

export interface RunningFleet extends FleetInfo {
  command(command: FleetCommand): Promise<void>
  state(): Record<string, ServerState[]>
  /** Closes every listener and connection; safe to call more than once. */
  stop(): Promise<void>
}

const faultModes: readonly FaultMode[] = ['none', 'broken', 'hang', 'refuse']

export class FleetCommandError extends Error {}

/** Starts every server and the admin port; if any fails to listen, stops what did start and throws. */
export async function startFleet(config: FleetConfig): Promise<RunningFleet> {
  const pools = new Map<string, LoopbackServer[]>()
  // Numbered across the fleet, not within each pool: two pools' servers drawing the same service
  // times and the same errors would make the pools alike by construction (two pools erring alike
  // was exactly what a judge's drill asks of them).
  let numbered = 0
  for (const pool of config.pools) {
    const servers: LoopbackServer[] = []
    for (let i = 0; i < pool.servers; i++, numbered++) {
      servers.push(
        new LoopbackServer({...pool, capacity: pool.capacities?.[i] ?? pool.capacity, seed: (pool.seed ?? 1) * 1000 + numbered}, pool.ports?.[i] ?? 0),
      )
    }
    pools.set(pool.name, servers)
  }
  const all = [...pools.values()].flat()
  let admin: http.Server | null = null
  let stopping: Promise<void> | null = null
  // Every server shares this one loop: when it runs late, service, checks and answers all do, and
  // the drill measured the machine rather than the pool.
  const lag = new LoopLag()
  const loop = (): LoopDelay => lag.read()
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      lag.stop()
      await Promise.all(all.map((s) => s.stop()))
      if (admin) {
        admin.closeAllConnections()
        await new Promise<void>((resolve) => admin!.close(() => resolve()))
      }
    })()
    return stopping
  }

  const pick = (command: {pool: string; servers?: number[]}): LoopbackServer[] => {
    const servers = pools.get(command.pool)
    if (!servers) throw new FleetCommandError(`no pool named "${command.pool}"; pools are ${[...pools.keys()].join(', ')}`)
    if (command.servers === undefined) return servers
    if (!Array.isArray(command.servers)) throw new FleetCommandError('expected "servers" to be a list of server indexes')
    return command.servers.map((i) => {
      if (!Number.isInteger(i) || i < 0 || i >= servers.length)
        throw new FleetCommandError(`no server ${JSON.stringify(i)} in pool "${command.pool}"; it has servers 0 to ${servers.length - 1}`)
      return servers[i]
    })
  }

  const command = async (c: FleetCommand): Promise<void> => {
    if (typeof c !== 'object' || c === null) throw new FleetCommandError('expected a JSON object with an "op"')
    if (c.op === 'fault') {
      if (!faultModes.includes(c.mode)) throw new FleetCommandError(`expected "mode" to be one of ${faultModes.join(', ')}, got ${JSON.stringify(c.mode)}`)
      const targets = pick(c)
      await Promise.all(targets.map((s) => s.setFault(c.mode)))
    } else if (c.op === 'hold') {
      const targets = pick(c)
      if (c.type === null) {
        for (const s of targets) s.setHold(null)
        return
      }
      if (typeof c.type !== 'string' || c.type === '') throw new FleetCommandError('expected "type" to name a traffic type, or null to lift the hold')
      if (typeof c.holdSeconds !== 'number' || !(c.holdSeconds > 0)) throw new FleetCommandError('expected "holdSeconds" above 0')
      const release = c.release ?? 'restart'
      if (release !== 'restart' && release !== 'at-timeout') throw new FleetCommandError('expected "release" to be restart or at-timeout')
      for (const s of targets) s.setHold({type: c.type, holdSeconds: c.holdSeconds, release})
    } else if (c.op === 'errors') {
      if (typeof c.percent !== 'number' || !(c.percent >= 0 && c.percent <= 100)) throw new FleetCommandError('expected "percent" from 0 to 100')
      for (const s of pick(c)) s.setErrors(c.percent / 100)
    } else if (c.op === 'restart') {
      const targets = pick(c)
      await Promise.all(targets.map((s) => s.restart()))
    } else {
      throw new FleetCommandError(`unknown op ${JSON.stringify((c as {op: unknown}).op)}; expected fault, hold, errors or restart`)
    }
  }

  const state = (): Record<string, ServerState[]> => Object.fromEntries([...pools].map(([name, servers]) => [name, servers.map((s) => s.state())]))

  try {
    await Promise.all(all.map((s) => s.start()))
    admin = http.createServer((req, res) => void serveAdmin(req, res, command, state, loop))
    await new Promise<void>((resolve, reject) => {
      admin!.once('error', reject)
      admin!.listen(config.adminPort ?? 0, '127.0.0.1', () => resolve())
    })
  } catch (error) {
    await stop()
    throw error
  }
  return {
    admin: (admin.address() as {port: number}).port,
    pools: [...pools].map(([name, servers]) => ({name, ports: servers.map((s) => s.port)})),
    command,
    state,
    stop,
  }
}

async function serveAdmin(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  command: (c: FleetCommand) => Promise<void>,
  state: () => unknown,
  loop: () => LoopDelay,
): Promise<void> {
  const reply = (status: number, body: unknown) => {
    const text = JSON.stringify(body)
    res.writeHead(status, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
    res.end(text)
  }
  if (req.method === 'GET' && req.url === '/state') return reply(200, state())
  if (req.method === 'GET' && req.url === '/loop') return reply(200, loop())
  if (req.method !== 'POST' || req.url !== '/command') return reply(404, {error: 'expected POST /command, GET /state or GET /loop'})
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  let parsed: FleetCommand
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as FleetCommand
  } catch {
    return reply(400, {error: 'expected a JSON command'})
  }
  try {
    await command(parsed)
    reply(200, {ok: true})
  } catch (error) {
    reply(error instanceof FleetCommandError ? 400 : 500, {error: (error as Error).message})
  }
}

/** Milliseconds an event loop ran late: its 99th percentile and its worst. */
export interface LoopDelay {
  p99: number
  max: number
}

/** How late the fleet's event loop has run, read from its admin port. */
export async function fleetLoopDelay(adminPort: number): Promise<LoopDelay> {
  const response = await fetch(`http://127.0.0.1:${adminPort}/loop`, {signal: AbortSignal.timeout(5000)})
  if (!response.ok) throw new Error(`the fleet's admin port answered ${response.status} to GET /loop`)
  return (await response.json()) as LoopDelay
}

/** Sends one command to a fleet's admin port; a refused command throws its one-line reason. */
export async function sendFleetCommand(adminPort: number, command: FleetCommand): Promise<void> {
  const response = await fetch(`http://127.0.0.1:${adminPort}/command`, {
    method: 'POST',
    body: JSON.stringify(command),
    headers: {'content-type': 'application/json'},
  })
  const body = (await response.json()) as {error?: string}
  if (!response.ok) throw new FleetCommandError(`fleet admin port ${adminPort}: ${body.error ?? response.status}`)
}
