import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RuntimeMap} from '../../src/haproxy/maps.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {isolatedEnv, runJs, sluice, spawnCollected} from '../helpers/cli.js'
import {blueGreenConfig, blueGreenMaps, freePort, startBackend, startHaproxy, stopBackend, type Backend, type RunningHaproxy} from './helpers/haproxy.js'

// A live run whose terminal goes away under it, with no SIGHUP: `script` or an SSH session whose
// pty is closed while the run bakes. Its next write fails with EIO, which used to crash Node with
// the run left on its step, its locks held and no run-end in its journal.
const lostTerminal = fileURLToPath(new URL('../helpers/lost-terminal.py', import.meta.url))
let haproxy: RunningHaproxy
let rampMap: RuntimeMap
let dir: string
const servers: Backend[] = []

beforeAll(async () => {
  for (const name of ['b1', 'g1']) servers.push(await startBackend(name))
  const [b1, g1] = servers
  haproxy = await startHaproxy(
    blueGreenConfig({port: await freePort(), blue: [{name: 'b1', port: b1.port}], green: {name: 'g1', port: g1.port}, slowstartSeconds: 1}),
    blueGreenMaps,
  )
  rampMap = new RuntimeMap(new RuntimeApi(haproxy.socket), join(haproxy.dir, 'ramp.map'))
  dir = mkdtempSync(join(tmpdir(), 'sluice-lost-terminal-'))
})

afterAll(async () => {
  await haproxy?.stop()
  for (const b of servers) await stopBackend(b)
  if (dir) rmSync(dir, {recursive: true, force: true})
})

describe('a live run on a HAProxy whose terminal is closed under it', () => {
  it('stops as on SIGHUP: exit 130, a run-end saying interrupted, no lock left, the map back where it started', async () => {
    const file = join(dir, 'ramp.yaml')
    writeFileSync(
      file,
      `name: lost-terminal
targets:
  haproxy:
    socket: ${haproxy.socket}
    backends: {blue: blue, green: green}
    rampMap: ${join(haproxy.dir, 'ramp.map')}
  metrics: {source: haproxy}
steps:
  - {action: ramp, set: green, schedule: [20, 100], bake: 60}
`,
    )
    const state = join(dir, 'state')
    // CI unset: on a sized terminal the run draws its live view, redrawn while it bakes, so the write
    // that finds the terminal gone comes at once, not at the end of the bake.
    const env = {...isolatedEnv('lost-terminal'), SLUICE_STATE: state, NO_COLOR: '1', CI: undefined}
    const started = Date.now()
    const helped = await spawnCollected('python3', [lostTerminal, 'baking', '60', process.execPath, runJs, 'run', file, '--yes'], {env})
    const took = (Date.now() - started) / 1000
    expect(helped.code, helped.stderr).toBe(0)
    const end = JSON.parse(helped.stdout) as {seen: boolean; code: number | null; signal: string | null; transcript: string}
    expect(end.seen, end.transcript).toBe(true)
    // Not 1 (an uncaught 'error' event), 134 (an abort) or a signal: interrupted, and well within the bake.
    expect({code: end.code, signal: end.signal}, end.transcript).toEqual({code: 130, signal: null})
    expect(took).toBeLessThan(45)

    const runs = readFileSync(join(state, 'runs', runFile(state)), 'utf8')
      .trim()
      .split('\n')
    const last = JSON.parse(runs.at(-1)!) as {type: string; outcome: string}
    expect(last).toMatchObject({type: 'run-end', outcome: 'interrupted'})
    const locks = await sluice(['locks', '--json'], {env})
    expect(locks.code, locks.stderr).toBe(0)
    expect(JSON.parse(locks.stdout)).toEqual({locks: []})
    // Stopped on the first step, whose bake never passed: back at the weights it started from.
    expect(Object.fromEntries((await rampMap.entries()).map((e) => [e.key, Number(e.value)]))).toEqual({blue: 100, green: 0})
  }, 90_000)

  it('sluice rollback: holds at the weights it reached, writes its rollback-end, lets go of its locks, exit 130', async () => {
    const file = join(dir, 'ramp-done.yaml')
    writeFileSync(
      file,
      `name: lost-terminal-rollback
targets:
  haproxy:
    socket: ${haproxy.socket}
    backends: {blue: blue, green: green}
    rampMap: ${join(haproxy.dir, 'ramp.map')}
  metrics: {source: haproxy}
steps:
  - {action: ramp, set: green, schedule: [25, 50, 100], bake: 2}
`,
    )
    const state = join(dir, 'state-rollback')
    const env = {...isolatedEnv('lost-terminal'), SLUICE_STATE: state, NO_COLOR: '1', CI: undefined}
    const done = await sluice(['run', file, '--yes'], {env})
    expect(done.code, done.stderr).toBe(0)
    const runId = runFile(state).replace(/\.jsonl$/, '')
    // The rollback writes lines, none while it holds: the loss is found at its next write, once
    // its second step back is on, and it holds there rather than go on with nobody watching.
    const helped = await spawnCollected('python3', [lostTerminal, 'baking 2 s', '60', process.execPath, runJs, 'rollback', runId, '--yes', '--ungated'], {env})
    expect(helped.code, helped.stderr).toBe(0)
    const end = JSON.parse(helped.stdout) as {seen: boolean; code: number | null; signal: string | null; transcript: string}
    expect(end.seen, end.transcript).toBe(true)
    expect({code: end.code, signal: end.signal}, end.transcript).toEqual({code: 130, signal: null})

    const last = JSON.parse(
      readFileSync(join(state, 'runs', `${runId}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .at(-1)!,
    ) as {type: string; outcome: string}
    expect(last).toMatchObject({type: 'rollback-end', outcome: 'interrupted'})
    const locks = await sluice(['locks', '--json'], {env})
    expect(JSON.parse(locks.stdout)).toEqual({locks: []})
    // Held on the way back (at 75%, or 50% had the loss been found sooner), not gone on to the end.
    const held = Object.fromEntries((await rampMap.entries()).map((e) => [e.key, Number(e.value)]))
    expect([50, 75]).toContain(held.blue)
    // What was left, taken back at once, so the map is as it started for whatever runs next.
    const rest = await sluice(['rollback', runId, '--yes', '--now'], {env})
    expect(rest.code, rest.stderr).toBe(0)
  }, 90_000)
})

function runFile(state: string): string {
  const runs = readdirSync(join(state, 'runs')).filter((f) => f.endsWith('.jsonl'))
  expect(runs).toHaveLength(1)
  return runs[0]
}
