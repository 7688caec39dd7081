import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {pathToFileURL} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'
import type {FleetConfig} from '../../src/drill/fleet.js'
import {spawnFleet, spawnLoad} from '../../src/drill/process.js'
import {startFleet} from '../../src/drill/fleet.js'
import type {LoadConfig} from '../../src/drill/load-generator.js'
import {fleetPool} from './pools.js'
import {accepts, get, sleep} from './http.js'

/** The fleet runs compiled, as sluice ships it: `npm run build` first. */
const main = resolve('dist/src/drill/fleet-main.js')
const processModule = resolve('dist/src/drill/process.js')
const loadMain = resolve('dist/src/drill/load-generator-main.js')
const config: FleetConfig = {
  pools: [fleetPool({servers: 3, capacity: 50, serviceTime: 0.02, threads: 10, queueLimit: 50})],
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const until = performance.now() + withinMs
  while (performance.now() < until) {
    if (!alive(pid)) return true
    await sleep(50)
  }
  return !alive(pid)
}

beforeAll(() => {
  if (!existsSync(main) || !existsSync(loadMain)) throw new Error(`${main} is missing: run npm run build first`)
})

describe('the fleet as a process', () => {
  it('serves on its ports and, once stopped, leaves no process and no listener', async () => {
    const fleet = await spawnFleet(config, main)
    const ports = [...fleet.pools[0].ports, fleet.admin]
    expect((await get(fleet.pools[0].ports[2], '/health', 2000)).status).toBe(200)
    expect(alive(fleet.pid)).toBe(true)
    await fleet.stop()
    await fleet.stop()
    expect(alive(fleet.pid)).toBe(false)
    for (const port of ports) expect(await accepts(port)).toBe(false)
  })

  it.each(['SIGINT', 'SIGTERM'] as const)('exits on %s, closing its ports', async (signal) => {
    const fleet = await spawnFleet(config, main)
    process.kill(fleet.pid, signal)
    expect(await gone(fleet.pid, 5000)).toBe(true)
    for (const port of fleet.pools[0].ports) expect(await accepts(port)).toBe(false)
    await fleet.stop()
  })

  it('exits when the process that started it is killed with SIGKILL', async () => {
    const script = `const {spawnFleet} = await import(${JSON.stringify(pathToFileURL(processModule).href)}); const f = await spawnFleet(${JSON.stringify(config)}); console.log(JSON.stringify({pid: f.pid, ports: f.pools[0].ports})); setInterval(() => {}, 1000)`
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {stdio: ['ignore', 'pipe', 'inherit']})
    const line = await new Promise<string>((resolve, reject) => {
      let out = ''
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes('\n')) resolve(out.split('\n')[0])
      })
      parent.once('exit', (code) => reject(new Error(`the parent exited with ${code}`)))
    })
    const {pid, ports} = JSON.parse(line) as {pid: number; ports: number[]}
    expect(alive(pid)).toBe(true)
    parent.kill('SIGKILL')
    expect(await gone(pid, 5000)).toBe(true)
    for (const port of ports) expect(await accepts(port)).toBe(false)
  })

  it('a bad config ends the fleet with exit 2 and one line naming the file, and spawnFleet throws that line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-test-'))
    try {
      const file = join(dir, 'bad.json')
      writeFileSync(file, '{"pools": []}')
      const child = spawn(process.execPath, [main, '--config', file], {stdio: ['ignore', 'pipe', 'pipe']})
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
      expect(code).toBe(2)
      expect(stderr).toBe(`fleet: --config ${file}: expected "pools", a non-empty list\n`)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
    await expect(spawnFleet({pools: []}, main)).rejects.toThrow(/^fleet: --config .*fleet\.json: expected "pools", a non-empty list$/)
  })
})

describe('the load generator as a process', () => {
  const loadConfig = (port: number, duration: number): LoadConfig => ({
    target: {host: '127.0.0.1', port},
    curve: [[0, 100]],
    types: [{name: 'all', share: 1}],
    clients: {attempts: 1, timeout: 5, backoffBase: 0, backoffMax: 0, retryBudget: null, budgetWindow: 10, honourRetryAfter: true},
    duration,
    bucketSeconds: 0.25,
    arrivals: 'even',
    seed: 1,
  })

  it('runs to the end and hands back its record, then is gone', async () => {
    const fleet = await startFleet(config)
    try {
      const load = await spawnLoad(loadConfig(fleet.pools[0].ports[0], 0.5), loadMain)
      const record = await load.done
      const served = record.series.served.reduce((a, b) => a + b, 0) * record.bucketSeconds
      expect(served).toBeGreaterThan(40)
      expect(served).toBe(record.series.demand.reduce((a, b) => a + b, 0) * record.bucketSeconds)
      expect(await gone(load.pid, 5000)).toBe(true)
    } finally {
      await fleet.stop()
    }
  })

  it('stop ends a long run early with the record so far, and closes its connections', async () => {
    const fleet = await startFleet(config)
    try {
      await fleet.command({op: 'fault', pool: 'web', mode: 'hang'})
      const load = await spawnLoad(loadConfig(fleet.pools[0].ports[0], 60), loadMain)
      await sleep(500)
      expect(fleet.state().web[0].connections).toBeGreaterThan(0)
      const record = await load.stop()
      expect(record.inFlightAtStop).toBeGreaterThan(0)
      expect(Number.isNaN(record.latencyP99[0])).toBe(true)
      expect(await gone(load.pid, 5000)).toBe(true)
      await sleep(200)
      expect(fleet.state().web[0].connections).toBe(0)
    } finally {
      await fleet.stop()
    }
  })

  it('a bad config exits 2 with one line, and spawnLoad throws it', async () => {
    await expect(spawnLoad({...loadConfig(1, 1), curve: []}, loadMain)).rejects.toThrow(
      /^load: --config .*\.json: expected "curve", a non-empty list of \[seconds, rps\]$/,
    )
  })
})
