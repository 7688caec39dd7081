import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {connect, createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import type {FleetCommand} from '../../src/drill/fleet.js'
import {spawnFleet, type FleetProcess} from '../../src/drill/process.js'
import type {LoadRecord} from '../../src/drill/load-generator.js'
import {findHaproxy, installHaproxy, startHaproxy, type RunningHaproxy} from '../../src/haproxy/process.js'
import {restrictionConfig} from '../../src/haproxy/rules.js'
import {rampConfig} from '../../src/haproxy/weights.js'
import {isolatedEnv, runJs} from '../helpers/cli.js'

/**
 * The game days' bench: sluice's loopback fleet, a real HAProxy 2.6 in front of it and open-loop
 * load through it, each a separate process the test starts, breaks and reads on its own terms,
 * and the terminals (operators, a pipeline) that run the CLI against them.
 *
 * - The fleet is the drill's (dist/src/drill/fleet-main.js): servers on loopback and an admin port
 *   that flips faults and restarts servers. `fault()` sends it a command, as a dependency failing
 *   in production would break the servers, and restart hooks restart its servers through it.
 * - HAProxy is configured here (not from a scenario): one backend per pool, checks on /health,
 *   sluice's restriction snippet and, with two pools, its ramp snippet. Everything the tests say
 *   about it is read from its Runtime API with a socket of the bench's own (`show servers state`,
 *   `show map`), never through sluice's adapters.
 * - The load is the drill's open-loop generator, one per traffic type so each type's outcomes
 *   are counted apart, in a child process of its own (a script written to the bench's folder);
 *   `load.seconds()` asks it for what each second saw.
 * - Hooks: a restart hook script, run by sluice per target, restarts that server through the
 *   fleet's admin port, waits until it listens again, and writes each restart's start and end to
 *   a log the test reads.
 *
 * `stop()` ends every process the bench and its terminals started and returns what it found
 * still running afterwards (it should be nothing), so each test can assert it.
 */

const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)))
const fleetMain = join(repo, 'dist/src/drill/fleet-main.js')
const loadModule = join(repo, 'dist/src/drill/load-generator.js')

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** Polls `check` until it holds and returns when it did (epoch ms); throws naming `what` after `ms`. */
export async function until(what: string, check: () => Promise<boolean> | boolean, ms = 60_000, everyMs = 100): Promise<number> {
  const give = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > give) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`)
    await sleep(everyMs)
  }
  return Date.now()
}

/** The run id a live run prints (`live run 20261207-181216-e820`); throws with the text when there is none. */
export function runIdIn(text: string): string {
  const m = /live run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(text)
  if (!m) throw new Error(`no run id in:\n${text}`)
  return m[1]
}

/** Green's share of a blue/green ramp map's weights, in %. */
export const greenShare = (m: Record<string, string>) => (100 * Number(m.green)) / (Number(m.blue) + Number(m.green))

/**
 * The two-pool bench of the canary game days: blue and green alike (four servers of 150 rps each),
 * HAProxy's checks every 2 s, 400 rps of web traffic, the ramp map at `weights`.
 */
export function startCanaryBench(name: string, weights: {blue: number; green: number}): Promise<Bench> {
  const pool = {servers: 4, capacity: 150, serviceTime: 0.01, threads: 20, queueLimit: 50, restartSeconds: 1}
  return startBench({
    name,
    pools: [
      {name: 'blue', ...pool},
      {name: 'green', ...pool},
    ],
    check: {interMs: 2000, fall: 3, rise: 2},
    timeoutServerMs: 3000,
    ramp: {ramped: 'green', other: 'blue', weights},
    load: {rps: 400, types: {web: 1}, timeout: 2},
  })
}

/** Where game days write their timelines. */
export const gamedayDir = () => process.env.SLUICE_GAMEDAY_DIR ?? join(repo, '.gameday')

export interface BenchPool {
  name: string
  servers: number
  /** Requests per second one warm server completes. */
  capacity: number
  /** Seconds a request is in service (warm). */
  serviceTime: number
  threads: number
  queueLimit: number
  /** Capacity multiplier just after a restart (1: never cold). */
  coldFactor?: number
  warmupSeconds?: number
  restartSeconds: number
}

export interface BenchOptions {
  /** Names the bench's folder and the game day's timeline. */
  name: string
  pools: BenchPool[]
  /** HAProxy's checks, in ms: `inter` (also the check's timeout), `fall`, `rise`. */
  check: {interMs: number; fall: number; rise: number}
  /** HAProxy's `timeout server`: how long a session to a server that never answers holds it (and a drain waits). */
  timeoutServerMs: number
  /** With two pools: [ramped, other] and the ramp map's first contents (percent per backend). */
  ramp?: {ramped: string; other: string; weights: Record<string, number>}
  load: {
    rps: number
    /** Traffic type → share of demand. */
    types: Record<string, number>
    /** Client timeout, seconds. */
    timeout: number
    seed?: number
  }
}

/** What one traffic type saw over some seconds of load: counts (not rates). */
export interface Outcomes {
  demand: number
  served: number
  failed: number
  /** 503s: a restriction's, or HAProxy's own when a backend has no server up. */
  rejected: number
  timeouts: number
  errors: number
  refused: number
}

export interface ServerState {
  /** `show servers state`: srv_op_state 2 is running (UP). */
  up: boolean
  /** srv_admin_state has a drain bit (0x08 or 0x10). */
  drain: boolean
  /** srv_admin_state has a maintenance bit. */
  maint: boolean
  opState: number
  adminState: number
}

/** One Runtime API command over the bench's own connection, its whole answer. */
export function runtime(socket: string, command: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = []
    const c = connect(socket)
    const timer = setTimeout(() => {
      c.destroy()
      reject(new Error(`haproxy ${socket}: no answer to ${command} within 10 s`))
    }, 10_000)
    c.on('connect', () => c.end(`${command}\n`))
    c.on('data', (d: Buffer) => chunks.push(d))
    c.on('end', () => {
      clearTimeout(timer)
      resolvePromise(Buffer.concat(chunks).toString('utf8'))
    })
    c.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
  })
}

/** A table HAProxy prints with a `#` header line, as rows keyed by column name. */
function table(answer: string, separator: RegExp): Array<Record<string, string>> {
  const lines = answer.split('\n').filter((l) => l.trim() !== '')
  const at = lines.findIndex((l) => l.startsWith('#'))
  if (at < 0) throw new Error(`not a table: ${answer.slice(0, 200)}`)
  const names = lines[at].replace(/^#\s*/, '').split(separator)
  return lines.slice(at + 1).map((l) => {
    const cells = l.split(separator)
    return Object.fromEntries(names.map((n, i) => [n, cells[i] ?? '']))
  })
}

/** A CLI command a terminal ran to its end. */
export interface Ran {
  who: string
  args: string[]
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  startedAt: number
  endedAt: number
}

/** A CLI command still running in a terminal. */
export interface Running {
  pid: number
  /** Resolves once stdout + stderr match, with the time it did; rejects if the command ends first, or after `ms`. */
  seen(pattern: RegExp, ms?: number): Promise<number>
  output(): string
  signal(name: NodeJS.Signals): void
  ended: Promise<Ran>
}

export interface Terminal {
  who: string
  env: Record<string, string>
  run(args: string[]): Promise<Ran>
  spawn(args: string[]): Running
}

export interface Bench {
  dir: string
  port: number
  socket: string
  restrictMap: string
  rampMap: string
  fleet: FleetProcess
  haproxy: RunningHaproxy
  /** The state directory every terminal shares (SLUICE_STATE). */
  state: string
  fault(command: FleetCommand): Promise<void>
  /** Every server of a backend as HAProxy shows it, by server name. */
  servers(backend: string): Promise<Record<string, ServerState>>
  /** A map HAProxy loaded, as its entries (key → value). */
  map(file: string): Promise<Record<string, string>>
  terminal(who: string): Terminal
  /** Every command every terminal ran, in the order they ended. */
  transcript: Ran[]
  load: Load
  /** The restart hook's argv for a runbook (a YAML flow list); with `freshMetadata` the restart also gives the server fresh routing metadata. */
  restartHook(options?: {freshMetadata?: boolean}): string
  /** The restart hook's log: one line per event, `start|done <server> <epoch ms> <ip:port it was given>`. */
  hookLog(): Array<{event: 'start' | 'done'; server: string; at: number; address: string}>
  /** Writes a runbook into the bench's folder; `${SOCKET}`, `${RESTRICT_MAP}`, `${RAMP_MAP}` are replaced. */
  runbook(name: string, yaml: string): string
  /** Stops everything; returns what is still running that the bench or its terminals started (should be none). */
  stop(): Promise<string[]>
}

export interface Load {
  /** Epoch ms of its second 0. */
  startedAt: number
  /** The record so far, per traffic type. */
  snapshot(): Promise<Record<string, LoadRecord>>
  /** Counts per type (and `all`) over whole seconds from `from` to `to` (epoch ms), from a fresh snapshot. */
  between(from: number, to: number): Promise<Record<string, Outcomes>>
  /** One row per whole second from `from` to `to` (epoch ms): each type's outcomes that second. */
  seconds(from: number, to: number): Promise<Array<{second: number; at: number; types: Record<string, Outcomes>}>>
  /** Resolves once `check` holds over the last whole second (polled), with that second's start (epoch ms). */
  until(what: string, check: (last: Record<string, Outcomes>) => boolean, ms?: number): Promise<number>
}

const freePort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const {port} = server.address() as {port: number}
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

/** The load generator's child: one open-loop generator per traffic type, snapshots on request. */
const loadChild = (module: string) => `
import {readFileSync} from 'node:fs'
import {createInterface} from 'node:readline'
import {startLoad} from ${JSON.stringify(pathToFileURL(module).href)}
const config = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const startedAt = Date.now()
const loads = config.types.map(([name, share], i) => [name, startLoad({
  target: {host: '127.0.0.1', port: config.port},
  curve: [[0, config.rps * share]],
  types: [{name, share: 1}],
  clients: {attempts: 1, timeout: config.timeout, backoffBase: 0, backoffMax: 0, retryBudget: null, budgetWindow: 10, honourRetryAfter: false},
  duration: 3600,
  bucketSeconds: 1,
  arrivals: 'poisson',
  seed: config.seed + i,
})])
const snapshot = () => Object.fromEntries(loads.map(([name, load]) => [name, load.snapshot()]))
process.stdout.write(JSON.stringify({startedAt}) + '\\n')
let ending = false
const end = async () => {
  if (ending) return
  ending = true
  const records = Object.fromEntries(await Promise.all(loads.map(async ([name, load]) => [name, await load.stop()])))
  process.stdout.write(JSON.stringify({final: records}) + '\\n', () => process.exit(0))
}
createInterface({input: process.stdin}).on('line', (line) => {
  if (line === 'snapshot') process.stdout.write(JSON.stringify({snapshot: snapshot()}) + '\\n')
  if (line === 'stop') void end()
}).on('close', () => void end())
process.on('SIGTERM', () => void end())
`

/**
 * The restart hook: argv [admin port, server name, its ip, its port, log, fresh-metadata?], as a
 * runbook's hook gets them from sluice (`{id}`, `{ip}`, `{port}`). Restarts the server through the
 * fleet's admin port (down for its restart time, back cold), with fresh routing metadata when
 * asked (its hold lifted: a restart re-reads the metadata), and returns once the server listens at
 * its address again, as `systemctl restart` returns once the unit is up. Without an address it
 * refuses (exit 2), as a restart script given `--host ''` would.
 */
const hookScript = `
const {appendFileSync} = require('node:fs')
const {connect} = require('node:net')
const [admin, server, ip, port, log, fresh] = process.argv.slice(2)
const m = /^(.*)-(\\d+)$/.exec(server)
if (!m) { console.error('restart-hook: no fleet server is named ' + server); process.exit(2) }
appendFileSync(log, 'start ' + server + ' ' + Date.now() + ' ' + ip + ':' + port + '\\n')
if (!ip || !port) { console.error('restart-hook: no address for ' + server + ' (given ip "' + ip + '", port "' + port + '")'); process.exit(2) }
const pool = m[1], index = Number(m[2])
const send = async (command) => {
  const r = await fetch('http://127.0.0.1:' + admin + '/command', {method: 'POST', body: JSON.stringify(command), headers: {'content-type': 'application/json'}})
  if (!r.ok) throw new Error('fleet admin port answered ' + r.status + ': ' + (await r.text()))
}
const listens = () => new Promise((resolve) => {
  const s = connect(Number(port), ip)
  s.once('connect', () => { s.destroy(); resolve(true) })
  s.once('error', () => resolve(false))
})
;(async () => {
  await send({op: 'restart', pool, servers: [index]})
  if (fresh === 'fresh-metadata') await send({op: 'hold', pool, servers: [index], type: null})
  // Down for its restart time: wait for it to refuse first, so a restart that has not begun is not taken for one that ended.
  const deadline = Date.now() + 20000
  while (await listens()) { if (Date.now() > deadline) throw new Error(server + ' never went down'); await new Promise((r) => setTimeout(r, 20)) }
  while (!(await listens())) { if (Date.now() > deadline) throw new Error(server + ' did not come back within 20 s'); await new Promise((r) => setTimeout(r, 50)) }
  appendFileSync(log, 'done ' + server + ' ' + Date.now() + ' ' + ip + ':' + port + '\\n')
})().catch((e) => { console.error('restart-hook: ' + e.message); process.exit(1) })
`

/** /proc's view: pid → its state and command line. */
function processes(): Map<number, {cmdline: string; state: string}> {
  const all = new Map<number, {cmdline: string; state: string}>()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim()
      all.set(Number(name), {state: fields[0], cmdline})
    } catch {
      // Gone while read.
    }
  }
  return all
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return state.slice(state.lastIndexOf(')') + 2).split(' ')[0] !== 'Z'
  } catch {
    return false
  }
}

export async function startBench(options: BenchOptions): Promise<Bench> {
  const binary = findHaproxy()
  if (!binary) throw new Error(`HAProxy is not installed: ${installHaproxy}`)
  if (!existsSync(fleetMain) || !existsSync(loadModule)) throw new Error(`${fleetMain} is missing: run npm run build first`)
  const dir = mkdtempSync(join(tmpdir(), `sluice-gameday-${options.name}-`))
  const state = join(dir, 'state')
  const pids = new Set<number>()
  const children: ChildProcess[] = []
  const transcript: Ran[] = []
  let fleet: FleetProcess | undefined
  let haproxy: RunningHaproxy | undefined
  let loadProcess: ChildProcess | undefined
  const stopAll = async () => {
    if (loadProcess && loadProcess.exitCode === null && loadProcess.signalCode === null) {
      const gone = new Promise((r) => loadProcess!.once('exit', r))
      loadProcess.stdin?.end()
      const killer = setTimeout(() => loadProcess!.kill('SIGKILL'), 5000)
      await gone
      clearTimeout(killer)
    }
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await haproxy?.stop()
    await fleet?.stop()
  }
  try {
    fleet = await spawnFleet(
      {
        pools: options.pools.map((p) => ({
          name: p.name,
          servers: p.servers,
          capacity: p.capacity,
          serviceTime: p.serviceTime,
          threads: p.threads,
          queueLimit: p.queueLimit,
          coldFactor: p.coldFactor ?? 1,
          warmupSeconds: p.warmupSeconds ?? 0,
          restartSeconds: p.restartSeconds,
          handshakeCost: 1,
        })),
      },
      fleetMain,
    )
    pids.add(fleet.pid)
    const port = await freePort()
    const ports = new Map(fleet.pools.map((p) => [p.name, p.ports]))
    const {interMs, fall, rise} = options.check
    const files: Record<string, string> = {'restricted.map': ''}
    if (options.ramp)
      files['ramp.map'] = Object.entries(options.ramp.weights)
        .map(([k, v]) => `${k} ${v}\n`)
        .join('')
    const config = (d: string): string =>
      [
        'global',
        `  stats socket ${d}/admin.sock mode 600 level admin`,
        '  stats timeout 10s',
        'defaults',
        '  mode http',
        '  timeout connect 1s',
        '  timeout client 60s',
        `  timeout server ${options.timeoutServerMs}ms`,
        '  timeout http-keep-alive 30s',
        'frontend gameday',
        `  bind 127.0.0.1:${port}`,
        restrictionConfig(join(d, 'restricted.map')),
        options.ramp ? rampConfig(join(d, 'ramp.map'), options.ramp.ramped, options.ramp.other) : `  default_backend ${options.pools[0].name}`,
        ...options.pools.flatMap((p) => [
          `backend ${p.name}`,
          '  balance roundrobin',
          // As docs/live.md asks of a backend a gate reads: a client that gives up is then counted (cli_abrt).
          '  option abortonclose',
          '  option httpchk GET /health',
          `  default-server check inter ${interMs}ms fall ${fall} rise ${rise}`,
          ...ports.get(p.name)!.map((serverPort, i) => `  server ${p.name}-${i} 127.0.0.1:${serverPort}`),
        ]),
      ].join('\n') + '\n'
    haproxy = await startHaproxy(binary, config, files)
    if (haproxy.child.pid) pids.add(haproxy.child.pid)
    const socket = haproxy.socket
    const restrictMap = join(haproxy.dir, 'restricted.map')
    const rampMap = join(haproxy.dir, 'ramp.map')

    const servers = async (backend: string): Promise<Record<string, ServerState>> => {
      const rows = table(await runtime(socket, `show servers state ${backend}`), / +/)
      return Object.fromEntries(
        rows.map((r) => {
          const admin = Number(r.srv_admin_state)
          const op = Number(r.srv_op_state)
          return [r.srv_name, {up: op === 2, drain: (admin & 0x18) !== 0, maint: (admin & 0x67) !== 0, opState: op, adminState: admin}]
        }),
      )
    }
    const map = async (file: string): Promise<Record<string, string>> => {
      const answer = await runtime(socket, `show map ${file}`)
      const out: Record<string, string> = {}
      for (const line of answer.split('\n')) {
        const m = /^0x[0-9a-f]+ (\S+)(?: (.*))?$/.exec(line.trim())
        if (m) out[m[1]] = m[2] ?? ''
        else if (line.trim() !== '') throw new Error(`show map ${file}: ${answer}`)
      }
      return out
    }

    // Every server UP before anything else.
    const deadline = Date.now() + 30_000
    for (;;) {
      const all = await Promise.all(options.pools.map((p) => servers(p.name)))
      if (all.every((s) => Object.values(s).length > 0 && Object.values(s).every((x) => x.up))) break
      if (Date.now() > deadline) throw new Error(`not every server passed HAProxy's checks within 30 s: ${JSON.stringify(all)}`)
      await sleep(100)
    }

    // The load, in its own process.
    const script = join(dir, 'load.mjs')
    writeFileSync(script, loadChild(loadModule))
    const loadConfig = join(dir, 'load.json')
    writeFileSync(
      loadConfig,
      JSON.stringify({port, rps: options.load.rps, types: Object.entries(options.load.types), timeout: options.load.timeout, seed: options.load.seed ?? 1}),
    )
    loadProcess = spawn(process.execPath, [script, loadConfig], {stdio: ['pipe', 'pipe', 'pipe']})
    children.push(loadProcess)
    pids.add(loadProcess.pid!)
    let loadErr = ''
    loadProcess.stderr!.on('data', (d: Buffer) => (loadErr += d.toString()))
    let buffered = ''
    const lines: string[] = []
    const waiting: Array<() => void> = []
    loadProcess.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString()
      let nl: number
      while ((nl = buffered.indexOf('\n')) >= 0) {
        lines.push(buffered.slice(0, nl))
        buffered = buffered.slice(nl + 1)
      }
      waiting.splice(0).forEach((w) => w())
    })
    loadProcess.once('exit', () => waiting.splice(0).forEach((w) => w()))
    const nextLine = async (): Promise<any> => {
      const give = Date.now() + 20_000
      while (lines.length === 0) {
        if (loadProcess!.exitCode !== null || loadProcess!.signalCode !== null) throw new Error(`the load generator exited: ${loadErr}`)
        if (Date.now() > give) throw new Error(`the load generator said nothing within 20 s: ${loadErr}`)
        await new Promise<void>((r) => {
          const t = setTimeout(r, 1000)
          waiting.push(() => {
            clearTimeout(t)
            r()
          })
        })
      }
      return JSON.parse(lines.shift()!)
    }
    const {startedAt} = (await nextLine()) as {startedAt: number}
    // One question at a time: snapshots are answered in order.
    let asking: Promise<unknown> = Promise.resolve()
    const snapshot = (): Promise<Record<string, LoadRecord>> => {
      const next = asking.then(async () => {
        loadProcess!.stdin!.write('snapshot\n')
        return ((await nextLine()) as {snapshot: Record<string, LoadRecord>}).snapshot
      })
      asking = next.catch(() => undefined)
      return next
    }
    const typeNames = Object.keys(options.load.types)
    const empty = (): Outcomes => ({demand: 0, served: 0, failed: 0, rejected: 0, timeouts: 0, errors: 0, refused: 0})
    const secondOf = (at: number) => Math.floor((at - startedAt) / 1000)
    const outcomesAt = (r: LoadRecord, i: number): Outcomes => ({
      demand: r.series.demand[i] ?? 0,
      served: r.series.served[i] ?? 0,
      failed: r.series.failed[i] ?? 0,
      rejected: r.series.rejected[i] ?? 0,
      timeouts: r.series.timeouts[i] ?? 0,
      errors: r.series.errors[i] ?? 0,
      refused: r.series.refused[i] ?? 0,
    })
    const add = (a: Outcomes, b: Outcomes): Outcomes => ({
      demand: a.demand + b.demand,
      served: a.served + b.served,
      failed: a.failed + b.failed,
      rejected: a.rejected + b.rejected,
      timeouts: a.timeouts + b.timeouts,
      errors: a.errors + b.errors,
      refused: a.refused + b.refused,
    })
    const seconds = async (from: number, to: number) => {
      const records = await snapshot()
      // Whole seconds only, and none still counting.
      const first = Math.max(0, Math.ceil((from - startedAt) / 1000))
      const last = Math.min(secondOf(to), secondOf(Date.now())) - 1
      const rows: Array<{second: number; at: number; types: Record<string, Outcomes>}> = []
      for (let s = first; s <= last; s++) {
        const types: Record<string, Outcomes> = {}
        let all = empty()
        for (const t of typeNames) {
          types[t] = outcomesAt(records[t], s)
          all = add(all, types[t])
        }
        types.all = all
        rows.push({second: s, at: startedAt + s * 1000, types})
      }
      return rows
    }
    const load: Load = {
      startedAt,
      snapshot,
      seconds,
      async between(from, to) {
        const rows = await seconds(from, to)
        if (rows.length === 0) throw new Error(`no whole second of load between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`)
        const sum: Record<string, Outcomes> = {}
        for (const t of [...typeNames, 'all']) sum[t] = rows.reduce((acc, r) => add(acc, r.types[t]), empty())
        return sum
      },
      async until(what, check, ms = 60_000) {
        const give = Date.now() + ms
        let last: Record<string, Outcomes> | undefined
        for (;;) {
          const now = Date.now()
          const rows = await seconds(now - 2000, now)
          last = rows.at(-1)?.types
          if (last && check(last)) return rows.at(-1)!.at
          if (Date.now() > give) throw new Error(`the load never showed ${what} within ${ms / 1000} s; last second: ${JSON.stringify(last)}`)
          await sleep(250)
        }
      },
    }

    const hookFile = join(dir, 'restart-hook.cjs')
    writeFileSync(hookFile, hookScript)
    const hookLogFile = join(dir, 'restarts.log')
    const baseEnv = {...isolatedEnv(`gameday-${options.name}`), SLUICE_STATE: state, NO_COLOR: '1', CI: '1'}

    const terminal = (who: string): Terminal => {
      const env = {...baseEnv, SLUICE_OPERATOR: who}
      const spawnOne = (args: string[]): Running => {
        const startedAtCmd = Date.now()
        const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
        children.push(child)
        if (child.pid) pids.add(child.pid)
        let stdout = ''
        let stderr = ''
        const waits: Array<{pattern: RegExp; resolve: (at: number) => void}> = []
        const look = () => {
          for (const w of [...waits])
            if (w.pattern.test(stdout + stderr)) {
              waits.splice(waits.indexOf(w), 1)
              w.resolve(Date.now())
            }
        }
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString()
          look()
        })
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString()
          look()
        })
        const ended = new Promise<Ran>((r) =>
          child.on('close', (code, signal) => {
            const ran = {who, args, code, signal, stdout, stderr, startedAt: startedAtCmd, endedAt: Date.now()}
            transcript.push(ran)
            r(ran)
          }),
        )
        return {
          pid: child.pid!,
          output: () => stdout + stderr,
          signal: (name) => child.kill(name),
          ended,
          seen: (pattern, ms = 90_000) =>
            pattern.test(stdout + stderr)
              ? Promise.resolve(Date.now())
              : Promise.race([
                  new Promise<number>((r) => waits.push({pattern, resolve: r})),
                  ended.then((end) =>
                    Promise.reject(
                      new Error(
                        `${who}: \`sluice ${args.join(' ')}\` ended (${end.code ?? end.signal}) before it showed ${pattern}:\n${end.stdout}\n${end.stderr}`,
                      ),
                    ),
                  ),
                  sleep(ms).then(() =>
                    Promise.reject(new Error(`${who}: \`sluice ${args.join(' ')}\` did not show ${pattern} within ${ms / 1000} s:\n${stdout}\n${stderr}`)),
                  ),
                ]),
        }
      }
      return {who, env, spawn: spawnOne, run: (args) => spawnOne(args).ended}
    }

    const bench: Bench = {
      dir,
      port,
      socket,
      restrictMap,
      rampMap,
      fleet,
      haproxy,
      state,
      transcript,
      load,
      fault: async (command) => {
        const r = await fetch(`http://127.0.0.1:${fleet!.admin}/command`, {
          method: 'POST',
          body: JSON.stringify(command),
          headers: {'content-type': 'application/json'},
        })
        if (!r.ok) throw new Error(`fleet admin port: ${r.status} ${await r.text()}`)
      },
      servers,
      map,
      terminal,
      restartHook: ({freshMetadata = false} = {}) =>
        `[${JSON.stringify(process.execPath)}, ${JSON.stringify(hookFile)}, '${fleet!.admin}', '{id}', '{ip}', '{port}', ${JSON.stringify(hookLogFile)}${freshMetadata ? ", 'fresh-metadata'" : ''}]`,
      hookLog: () =>
        existsSync(hookLogFile)
          ? readFileSync(hookLogFile, 'utf8')
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => {
                const [event, server, at, address] = l.split(' ')
                return {event: event as 'start' | 'done', server, at: Number(at), address}
              })
          : [],
      runbook: (name, yaml) => {
        const file = join(dir, `${name}.yaml`)
        writeFileSync(file, yaml.replaceAll('${SOCKET}', socket).replaceAll('${RESTRICT_MAP}', restrictMap).replaceAll('${RAMP_MAP}', rampMap))
        return file
      },
      async stop() {
        const haproxyDir = haproxy!.dir
        await stopAll()
        // Hooks run detached (a process group of their own) and outlive a sluice killed with kill -9: give them their end.
        const give = Date.now() + 40_000
        const ours = () => {
          const left: string[] = []
          for (const [pid, p] of processes()) {
            if (p.state === 'Z') continue
            if (pids.has(pid) && alive(pid)) left.push(`${pid} ${p.cmdline}`)
            else if (pid !== process.pid && (p.cmdline.includes(dir) || p.cmdline.includes(haproxyDir))) left.push(`${pid} ${p.cmdline}`)
          }
          return left
        }
        while (ours().length > 0 && Date.now() < give) await sleep(200)
        const left = ours()
        rmSync(dir, {recursive: true, force: true})
        return left
      },
    }
    return bench
  } catch (error) {
    await stopAll().catch(() => undefined)
    rmSync(dir, {recursive: true, force: true})
    throw error
  }
}

/**
 * Reads `read` every `everyMs` until stopped and keeps each value that differs from the one
 * before, with when it was first seen: what HAProxy went through while a command ran.
 */
export function sampler<T>(read: () => Promise<T>, everyMs = 100): {stop(): Promise<Array<{at: number; value: T}>>} {
  const seen: Array<{at: number; value: T}> = []
  let on = true
  let failure: unknown
  const look = async () => {
    try {
      const value = await read()
      if (seen.length === 0 || JSON.stringify(seen.at(-1)!.value) !== JSON.stringify(value)) seen.push({at: Date.now(), value})
    } catch (error) {
      failure ??= error
    }
  }
  const done = (async () => {
    while (on) {
      await look()
      await sleep(everyMs)
    }
    // One last look once stopped: what the command that just ended left.
    await look()
  })()
  return {
    async stop() {
      on = false
      await done
      if (failure) throw failure as Error
      return seen
    },
  }
}

/** The whole seconds between two instants, as a table of outcomes per type: for the timeline. */
export function loadTable(rows: Awaited<ReturnType<Load['seconds']>>, types: string[], mark: (at: number) => string = () => ''): string {
  const head = `| s | ${types.map((t) => `${t} served / failed (503) / timeouts`).join(' | ')} | |`
  const rule = `|---|${types.map(() => '---').join('|')}|---|`
  const body = rows.map(
    (r) =>
      `| ${r.second} | ${types.map((t) => `${r.types[t].served} / ${r.types[t].failed} (${r.types[t].rejected}) / ${r.types[t].timeouts}`).join(' | ')} | ${mark(r.at)} |`,
  )
  return [head, rule, ...body].join('\n')
}

/** A run's Markdown under the game day's own headings: each heading two levels down, code blocks left alone. */
function demoted(markdown: string): string {
  let fenced = false
  return markdown
    .split('\n')
    .map((line) => {
      if (line.startsWith('```')) fenced = !fenced
      return !fenced && /^#{1,4} /.test(line) ? `##${line}` : line
    })
    .join('\n')
}

/**
 * What happened and when, as a game day marks it for its timeline (writeTimeline), from the moment
 * it began; `markedIn(at)` is what was marked in the second from `at`, for loadTable's last column.
 */
export function incidentLog(): {
  marks: Array<{at: number; what: string}>
  mark: (what: string) => void
  begin: number
  markedIn: (at: number) => string
} {
  const marks: Array<{at: number; what: string}> = []
  const markedIn = (at: number) =>
    marks
      .filter((m) => m.at >= at && m.at < at + 1000)
      .map((m) => m.what)
      .join('; ')
  return {marks, mark: (what) => void marks.push({at: Date.now(), what}), begin: Date.now(), markedIn}
}

/**
 * Writes the game day's timeline to `<SLUICE_GAMEDAY_DIR or .gameday>/<name>.md`: the story, each
 * run's journal as `sluice journal RUN --markdown` gives it (its headings under the game day's),
 * and what the load generator saw second by second, with the moments the test marked.
 */
export async function writeTimeline(
  name: string,
  title: string,
  story: string[],
  runs: Array<{runId: string; what: string}>,
  terminal: Terminal,
  load: string,
): Promise<{file: string; text: string}> {
  const sections: string[] = [`# ${title}`, '', ...story.map((s) => `- ${s}`), '']
  for (const {runId, what} of runs) {
    const shown = await terminal.run(['journal', runId, '--markdown'])
    if (shown.code !== 0) throw new Error(`sluice journal ${runId} --markdown exited ${shown.code}: ${shown.stderr}`)
    sections.push(`## ${what}: run ${runId}`, '', demoted(shown.stdout.trim()), '')
  }
  sections.push('## What the load generator saw, second by second', '', load, '')
  const dir = gamedayDir()
  mkdirSync(dir, {recursive: true})
  const file = join(dir, `${name}.md`)
  const text = sections.join('\n')
  writeFileSync(file, text)
  return {file, text}
}
