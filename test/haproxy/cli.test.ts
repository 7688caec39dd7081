import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import type {GateVerdict} from '../../src/ports/io.js'
import {healthOf} from '../../src/haproxy/pool.js'
import {RuntimeMap} from '../../src/haproxy/maps.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {serversState} from '../../src/haproxy/stats.js'
import {isolatedInProcess as isolatedSluice} from '../helpers/command.js'
import {spawnRun} from '../aws/spawned-run.js'
import {get, until, type Backend, type RunningHaproxy, startBlueGreen, type BlueGreen} from './helpers/haproxy.js'

// `sluice run RUNBOOK --yes` and the commands around it, spawned as a user runs them, on a
// runbook whose targets are one real HAProxy: everything is checked against HAProxy itself
// (`show servers state`, `show map`) and with real requests through it.
let haproxy: RunningHaproxy
let port: number
let api: RuntimeApi
let dir: string
let rampMap: RuntimeMap
let restrictMap: RuntimeMap
let servers: Map<string, Backend>
let fleet: BlueGreen | undefined
// A killed run's locks are taken over once their lease (3 s here) passes with no renewal.
const leaseEnv = {SLUICE_LEASE_SECONDS: '3'}
const isolated = isolatedSluice('haproxy-cli')
const sluice = (args: string[]) => isolated(args, {env: leaseEnv})

beforeAll(async () => {
  // Requests held open on /slow must outlast a spawned run's start and drain, however slow the machine.
  fleet = await startBlueGreen({blue: ['b1', 'b2', 'b3'], green: 'g1', slowstartSeconds: 1, timeouts: 60})
  ;({haproxy, port, servers} = fleet)
  api = new RuntimeApi(haproxy.socket)
  rampMap = new RuntimeMap(api, join(haproxy.dir, 'ramp.map'))
  restrictMap = new RuntimeMap(api, join(haproxy.dir, 'restricted.map'))
  dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-cli-'))
  await until('every server up', async () => (await health('blue')).every((h) => h === 'healthy') && (await health('green')).every((h) => h === 'healthy'))
})

afterAll(async () => {
  await fleet?.stop()
  if (dir) rmSync(dir, {recursive: true, force: true})
})

/** Each server's health as sluice reads it, by server name order. */
const health = async (backend: string) => (await serversState(api, backend)).map(healthOf)
const byServer = async (backend: string) => Object.fromEntries((await serversState(api, backend)).map((r) => [r.srv_name, healthOf(r)]))
const weights = async () => Object.fromEntries((await rampMap.entries()).map((e) => [e.key, Number(e.value)]))
const allInRotation = async () => (await health('blue')).every((h) => h === 'healthy') && (await health('green')).every((h) => h === 'healthy')

let files = 0
/**
 * A runbook on this HAProxy, in the test's directory, with its own state directory;
 * `haproxyBlock` replaces the targets.haproxy block (to break the socket or a backend).
 */
function runbook(name: string, steps: string, haproxyBlock?: string): {file: string; state: string} {
  const n = ++files
  const file = join(dir, `${name}-${n}.yaml`)
  const block =
    haproxyBlock ??
    `    socket: ${haproxy.socket}
    backends: {blue: blue, green: green}
    slowStart: {blue: 1}
    restrictMap: ${join(haproxy.dir, 'restricted.map')}
    rampMap: ${join(haproxy.dir, 'ramp.map')}`
  writeFileSync(
    file,
    `name: ${name}
targets:
  haproxy:
${block}
  metrics: {source: haproxy}
steps:
${steps}`,
  )
  return {file, state: join(dir, `state-${n}`)}
}

/** The one run a state directory holds, and its journal's entries. */
function onlyRun(state: string): {runId: string; entries: Array<Record<string, any>>} {
  const runs = readdirSync(join(state, 'runs')).filter((f) => f.endsWith('.jsonl'))
  expect(runs).toHaveLength(1)
  const entries = readFileSync(join(state, 'runs', runs[0]), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>)
  return {runId: runs[0].replace(/\.jsonl$/, ''), entries}
}

const mutations = (entries: Array<Record<string, any>>, kind: string, phase = 'outcome') =>
  entries.filter((e) => e.type === 'mutation' && e.mutation.kind === kind && e.mutation.phase === phase).map((e) => e.mutation)

/** A restart hook that records the server it was given (and, with `ms`, takes that long). */
function restartHook(log: string, ms = 0): string {
  const script = `require('fs').appendFileSync(${JSON.stringify(log)}, process.argv[1] + '\\n'); setTimeout(() => {}, ${ms})`
  return `{command: [${JSON.stringify(process.execPath)}, -e, ${JSON.stringify(script)}, '{id}'], timeout: 30}`
}
const logged = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [])

/**
 * Samples the blue servers' health every 50 ms until stopped: the most held out of rotation at once
 * (drained, by sluice's hand: what the budget caps, not a check a busy machine missed), and who was.
 */
function sampleBlue() {
  let on = true
  let mostOut = 0
  const wentOut = new Set<string>()
  const done = (async () => {
    while (on) {
      const now = await byServer('blue')
      const out = Object.entries(now).filter(([, h]) => h === 'draining' || h === 'unused')
      mostOut = Math.max(mostOut, out.length)
      for (const [s] of out) wentOut.add(s)
      await new Promise((r) => setTimeout(r, 50))
    }
  })()
  return {
    async stop() {
      on = false
      await done
      return {mostOut, wentOut: [...wentOut].sort()}
    },
  }
}

describe('sluice run on a HAProxy runbook', () => {
  it('a. cycles a backend in batches within its budget, running the restart hook per server', async () => {
    const log = join(dir, 'cycle-a.log')
    const {file, state} = runbook('cycle', `  - {action: cycle, pool: blue, batch: 1, budget: 1, restart: ${restartHook(log, 300)}}\n`)
    await until('every server in rotation', allInRotation)
    const sampling = sampleBlue()
    const run = await sluice(['run', file, '--yes', '--state', state])
    const seen = await sampling.stop()
    expect(run.code, run.stderr).toBe(exitCodeOf('completed'))
    expect(logged(log).sort()).toEqual(['b1', 'b2', 'b3'])
    // Never more than the budget out of rotation, and each server was out in its turn.
    expect(seen.mostOut).toBe(1)
    expect(seen.wentOut).toEqual(['b1', 'b2', 'b3'])
    expect(await health('blue')).toEqual(['healthy', 'healthy', 'healthy'])
    // The journal agrees: three drains of one server each, each returned before the next drain.
    // Which goes first is the cycle's to choose: one a busy machine's check took out of rotation
    // goes first (the CI saw b3 first once), so the order is not asserted.
    const {entries} = onlyRun(state)
    const drained = mutations(entries, 'deregister').map((m) => m.before as string[])
    expect(drained.every((batch) => batch.length === 1)).toBe(true)
    expect(drained.flat().sort()).toEqual(['b1', 'b2', 'b3'])
    expect(mutations(entries, 'register').map((m) => m.after)).toEqual(drained)
    const order = entries
      .filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome' && ['deregister', 'register'].includes(e.mutation.kind))
      .map((e) => e.mutation.kind)
    expect(order).toEqual(['deregister', 'register', 'deregister', 'register', 'deregister', 'register'])
  }, 60_000)

  it('b. drains until sessions reach zero: a server with a request open on /slow is not restarted until it is answered', async () => {
    const log = join(dir, 'cycle-b.log')
    const {file, state} = runbook('drain', `  - {action: cycle, pool: blue, batch: 1, restart: ${restartHook(log)}}\n`)
    // Requests held open on every blue server, so whichever the cycle drains first has a session.
    const held: Array<Promise<unknown>> = []
    await until('a session open on every blue server', async () => {
      held.push(get(port, '/slow'))
      await new Promise((r) => setTimeout(r, 100))
      const scur = (await api.send('show stat blue 4 -1'))
        .split('\n')
        .filter((l) => /^blue,b\d,/.test(l))
        .map((l) => Number(l.split(',')[4]))
      return scur.length === 3 && scur.every((n) => n > 0)
    })
    const run = spawnRun(['run', file, '--yes', '--state', state], leaseEnv)
    await until('b1 draining', async () => (await byServer('blue')).b1 === 'draining', 30_000)
    // Drained but busy: give the run time it would need to go on, then check it has not.
    await new Promise((r) => setTimeout(r, 2000))
    expect(logged(log)).toEqual([])
    expect(await byServer('blue')).toEqual({b1: 'draining', b2: 'healthy', b3: 'healthy'})
    for (const b of servers.values()) b.releaseSlow()
    await Promise.all(held)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(exitCodeOf('completed'))
    expect(logged(log).sort()).toEqual(['b1', 'b2', 'b3'])
    expect(await health('blue')).toEqual(['healthy', 'healthy', 'healthy'])
  }, 60_000)

  let rampRun: {runId: string; state: string}
  it('c. ramps with one atomic map change per step, each read back with show map, then routes everything to green', async () => {
    const {file, state} = runbook('ramp', '  - {action: ramp, set: green, schedule: [20, 50, 100], bake: 1}\n')
    const seen: string[] = []
    let on = true
    const watching = (async () => {
      while (on) {
        const w = JSON.stringify(await weights())
        if (seen.at(-1) !== w) seen.push(w)
        await new Promise((r) => setTimeout(r, 50))
      }
    })()
    const run = await sluice(['run', file, '--yes', '--state', state])
    on = false
    await watching
    expect(run.code, run.stderr).toBe(exitCodeOf('completed'))
    // Each step is one map commit, seen whole: never a half-written split.
    expect(seen).toEqual(
      [
        {blue: 100, green: 0},
        {blue: 80, green: 20},
        {blue: 50, green: 50},
        {blue: 0, green: 100},
      ].map((w) => JSON.stringify(w)),
    )
    const {runId, entries} = onlyRun(state)
    expect(mutations(entries, 'weights', 'intent').map((m) => m.after)).toEqual([
      {blue: 80, green: 20},
      {blue: 50, green: 50},
      {blue: 0, green: 100},
    ])
    expect(mutations(entries, 'weights').every((m) => m.ok)).toBe(true)
    for (let i = 0; i < 5; i++) expect((await get(port, '/')).headers['x-backend']).toBe('g1')
    rampRun = {runId, state}
  }, 60_000)

  it('g. sluice rollback after the ramp steps the map back through the weights the ramp passed', async () => {
    // The ramp had no gate, and no step gates blue: a way back nothing judges is refused, nothing changed.
    const refused = await sluice(['rollback', rampRun.runId, '--yes', '--state', rampRun.state])
    expect(refused.code, refused.stderr).toBe(exitCodeOf('refused'))
    expect(refused.stdout).toContain('would move traffic back with no gate to judge it')
    expect(await weights()).toEqual({blue: 0, green: 100})
    const rolled = await sluice(['rollback', rampRun.runId, '--yes', '--ungated', '--state', rampRun.state])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(await weights()).toEqual({blue: 100, green: 0})
    // No capacity is stated for blue, so the steps are the ramp's own, in reverse, each held its bake.
    expect(rolled.stdout + rolled.stderr).toContain(
      'in 3 steps (blue 50% → 80% → 100%), each held 1 s ungated (no gate: neither the steps that moved these weights nor any step on blue has one); traffic goes onto blue: back through the weights the run passed',
    )
    const back = mutations(onlyRun(rampRun.state).entries, 'weights').filter((m) => m.step === -1)
    expect(back.map((m) => m.after)).toEqual([
      {blue: 50, green: 50},
      {blue: 80, green: 20},
      {blue: 100, green: 0},
    ])
    for (let i = 0; i < 5; i++) expect((await get(port, '/')).headers['x-backend']).not.toBe('g1')
  }, 60_000)

  it('k. weighted-target-groups shifts the split by pool through the same ramp map, read back with show map, and rollback puts it back', async () => {
    const {file, state} = runbook('weighted', '  - {action: weighted-target-groups, pool: green, schedule: [30, 100], bake: 1}\n')
    const run = await sluice(['run', file, '--yes', '--state', state])
    expect(run.code, run.stderr).toBe(exitCodeOf('completed'))
    expect(await weights()).toEqual({blue: 0, green: 100})
    const {runId, entries} = onlyRun(state)
    // Recorded by pool, against the map it changed.
    expect(mutations(entries, 'pool-weights', 'intent').map((m) => [m.resource, m.after])).toEqual([
      [rampMap.label, {blue: 70, green: 30}],
      [rampMap.label, {blue: 0, green: 100}],
    ])
    for (let i = 0; i < 5; i++) expect((await get(port, '/')).headers['x-backend']).toBe('g1')
    // --now: one change, for a receiving side known to hold.
    const rolled = await sluice(['rollback', runId, '--yes', '--now', '--state', state])
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout + rolled.stderr).toContain(`set the weights of ${rampMap.label} back to blue=100 green=0 at once (--now)`)
    expect(
      mutations(onlyRun(state).entries, 'pool-weights')
        .filter((m) => m.step === -1)
        .map((m) => m.after),
    ).toEqual([{blue: 100, green: 0}])
    expect(await weights()).toEqual({blue: 100, green: 0})
    for (let i = 0; i < 5; i++) expect((await get(port, '/')).headers['x-backend']).not.toBe('g1')
  }, 60_000)

  it('m. a rollback sized by the receiving pool steps back behind the gate, holds when the gate fails on the way back, and goes on when run again', async () => {
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/').catch(() => undefined)
    })()
    const blue = ['b1', 'b2', 'b3'].map((n) => servers.get(n)!)
    try {
      const {file, state} = runbook(
        'sized',
        `  - action: weighted-target-groups
    pool: green
    schedule: [100]
    bake: 2
    gate: {metric: error-rate, threshold: 15, window: 2, interval: 1, successes: 1}
`,
      )
      // The runbook states blue's capacity low enough that a quarter of it is a fraction of the load.
      writeFileSync(file, readFileSync(file, 'utf8').replace('  metrics: {source: haproxy}', '  metrics: {source: haproxy}\n  capacityPerTarget: {blue: 1}'))
      const run = await sluice(['run', file, '--yes', '--state', state])
      expect(run.code, run.stderr).toBe(exitCodeOf('completed'))
      const {runId} = onlyRun(state)
      // Blue fails every request on the way back: the first step's gate fails, and nothing more moves.
      for (const b of blue) b.broken = true
      const held = await sluice(['rollback', runId, '--yes', '--json', '--state', state])
      expect(held.code, held.stderr).toBe(exitCodeOf('gate-failed'))
      const result = JSON.parse(held.stdout) as {outcome: string; message: string; plan: string[]}
      expect(result.outcome).toBe('held')
      expect(result.plan.join('\n')).toMatch(
        /blue has 3 healthy targets × 1 rps = 3 rps against [\d,]+ rps of demand: each step adds at most a quarter of that \(1 point\)/,
      )
      expect(result.message).toMatch(
        /gate error-rate ≤ 15% over 2 s \(blue\) failed at way back: blue 1%.*; holding at blue=1 green=99. `sluice rollback \S+` \(or `sluice resume \S+`\) goes on from here; --now moves the rest at once/,
      )
      expect(await weights()).toEqual({blue: 1, green: 99})
      const {entries} = onlyRun(state)
      expect(entries.filter((e) => e.type === 'verdict' && e.verdict.step === -1).at(-1)!.verdict).toMatchObject({outcome: 'fail', value: 100})
      // Blue is mended; the operator moves the rest at once.
      for (const b of blue) b.broken = false
      const rest = await sluice(['rollback', runId, '--yes', '--now', '--state', state])
      expect(rest.code, rest.stderr).toBe(0)
      expect(await weights()).toEqual({blue: 100, green: 0})
      expect(
        mutations(onlyRun(state).entries, 'pool-weights')
          .filter((m) => m.step === -1)
          .map((m) => m.after),
      ).toEqual([
        {blue: 1, green: 99},
        {blue: 100, green: 0},
      ])
    } finally {
      loading = false
      await load
      for (const b of blue) b.broken = false
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 90_000)

  it('o. abort --rollback stops a ramp at its last good weights, waits for the run to end, then takes the rest back in steps', async () => {
    // The abort must land within the last bake: a spawned CLI took longer than 6 s to start under
    // the full suite on two cores (the run had ended, and abort refused it, exit 4).
    const {file, state} = runbook('aborted', '  - {action: ramp, set: green, schedule: [20, 50, 100], bake: 10}\n')
    const run = spawnRun(['run', file, '--yes', '--state', state], leaseEnv)
    try {
      const runId = await run.runId()
      await run.seen(/green at 100% \(blue=0 green=100\).*, baking 10 s/)
      // The ramp has no gate: the way back is taken ungated, as the operator says.
      const aborted = await sluice(['abort', runId, '--rollback', '--ungated', '--yes', '--json', '--state', state])
      expect(aborted.code, aborted.stderr).toBe(0)
      const result = JSON.parse(aborted.stdout) as {control: {kind: string}; stopped: {outcome: string}; rollback: {outcome: string; plan: string[]}}
      expect(result.control.kind).toBe('abort')
      expect(result.stopped.outcome).toBe('interrupted')
      expect(result.rollback.outcome).toBe('rolled-back')
      // The run itself went back one step, to the last weights that passed; the rollback the rest, one step at a time.
      expect(result.rollback.plan[0]).toMatch(/back to blue=100 green=0 in 2 steps \(blue 80% → 100%\), each held 10 s ungated/)
      const ended = await run.ended
      expect(ended.code, ended.stderr).toBe(exitCodeOf('interrupted'))
      const {entries} = onlyRun(state)
      expect(mutations(entries, 'weights').map((m) => [m.step, m.after])).toEqual([
        [0, {blue: 80, green: 20}],
        [0, {blue: 50, green: 50}],
        [0, {blue: 0, green: 100}],
        [0, {blue: 50, green: 50}],
        [-1, {blue: 80, green: 20}],
        [-1, {blue: 100, green: 0}],
      ])
      expect(entries.find((e) => e.type === 'control')).toMatchObject({control: {kind: 'abort'}, effect: 'aborting'})
      expect(await weights()).toEqual({blue: 100, green: 0})
    } finally {
      await run.ended.catch(() => undefined)
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 90_000)

  it('d, h. a restriction answers 503 with Retry-After to that traffic only; status reads it, the servers and the weights back from HAProxy; lift lets it through', async () => {
    const restricted = runbook('restrict', '  - {action: restrict, type: sync, paths: [/sync/*], retryAfter: 30}\n')
    const run = await sluice(['run', restricted.file, '--yes', '--state', restricted.state])
    expect(run.code, run.stderr).toBe(0)
    expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:30'}])
    const turnedAway = await get(port, '/sync/mailbox')
    expect(turnedAway.status).toBe(503)
    expect(turnedAway.headers['retry-after']).toBe('30')
    expect(JSON.parse(turnedAway.body)).toMatchObject({type: 'sync'})
    for (const path of ['/', '/mail/sync/x', '/syncer']) expect((await get(port, path)).status, path).toBe(200)

    const status = await sluice(['status', restricted.file, '--state', restricted.state])
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain(`haproxy map ${join(haproxy.dir, 'ramp.map')} (${haproxy.socket}) (TTL 0 s): blue=100 green=0`)
    expect(status.stdout).toContain(`haproxy backend blue (${haproxy.socket}): 3 healthy (3 in all)`)
    expect(status.stdout).toContain(`haproxy backend green (${haproxy.socket}): 1 healthy (1 in all)`)
    expect(status.stdout).toContain(`haproxy map ${join(haproxy.dir, 'restricted.map')} (${haproxy.socket}): sync (/sync/; Retry-After 30 s)`)
    const json = await sluice(['status', restricted.file, '--state', restricted.state, '--json'])
    expect(json.code, json.stderr).toBe(0)
    const read = JSON.parse(json.stdout)
    expect(read.dns).toMatchObject({ttl: 0, weights: {blue: 100, green: 0}})
    expect(read.targetGroups).toEqual([
      {pool: 'blue', label: `haproxy backend blue (${haproxy.socket})`, counts: {healthy: 3}, total: 3},
      {pool: 'green', label: `haproxy backend green (${haproxy.socket})`, counts: {healthy: 1}, total: 1},
    ])
    expect(read.restrictions.rules).toEqual([{type: 'sync', paths: ['/sync/'], headers: {}, retryAfterSeconds: 30}])

    const lifted = runbook('lift', '  - {action: lift, type: sync}\n')
    // plan --live reads HAProxy's maps and servers and changes nothing: the lift finds sync restricted, as it expects; a second restrict does not.
    const plan = await sluice(['plan', lifted.file, '--live', '--state', lifted.state])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain(`Read from HAProxy ${haproxy.socket} (nothing was changed):`)
    expect(plan.stdout).toContain('restricted: sync → none')
    expect(plan.stdout).toContain('Every step finds what it expects.')
    const again = await sluice(['plan', restricted.file, '--live', '--state', restricted.state])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(
      `   ! sync is already restricted on haproxy map ${join(haproxy.dir, 'restricted.map')} (${haproxy.socket}): the step leaves that rule as it is and changes nothing`,
    )
    expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:30'}])
    const lift = await sluice(['run', lifted.file, '--yes', '--state', lifted.state])
    expect(lift.code, lift.stderr).toBe(0)
    expect(await restrictMap.entries()).toEqual([])
    expect((await get(port, '/sync/mailbox')).status).toBe(200)
  }, 60_000)

  it("e. a ramp onto a broken green fails its error-rate gate on HAProxy's own counters and puts the map back to the last good weights", async () => {
    servers.get('g1')!.broken = true
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/').catch(() => undefined)
    })()
    try {
      const {file, state} = runbook(
        'broken-green',
        `  - action: ramp
    set: green
    schedule: [5, 50]
    bake: 2
    gate: {metric: error-rate, threshold: 15, window: 2, interval: 1, successes: 1}
`,
      )
      const run = await sluice(['run', file, '--yes', '--state', state])
      expect(run.code, run.stderr).toBe(exitCodeOf('gate-failed'))
      expect(await weights()).toEqual({blue: 95, green: 5})
      const {entries} = onlyRun(state)
      expect(mutations(entries, 'weights').map((m) => m.after)).toEqual([
        {blue: 95, green: 5},
        {blue: 50, green: 50},
        {blue: 95, green: 5},
      ])
    } finally {
      loading = false
      await load
      servers.get('g1')!.broken = false
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 60_000)

  it("l. mid-outage a gate relative to stable passes green failing as blue does, on HAProxy's counters, where minRequests past what a window holds stays inconclusive", async () => {
    const every = ['b1', 'b2', 'b3', 'g1'].map((n) => servers.get(n)!)
    for (const b of every) b.broken = true
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/').catch(() => undefined)
    })()
    const ramp = (gate: string) => `  - action: ramp
    set: green
    schedule: [5, 50]
    bake: 2
    gate: {metric: error-rate, threshold: 15, window: 2, interval: 1, successes: 1, pool: green, ${gate}}
`
    try {
      const relative = runbook('relative-green', ramp('relativeTo: stable'))
      const passed = await sluice(['run', relative.file, '--yes', '--json', '--state', relative.state])
      expect(passed.code, passed.stderr).toBe(0)
      const verdicts = (JSON.parse(passed.stdout) as {steps: Array<{verdicts: GateVerdict[]}>}).steps[0].verdicts
      expect(verdicts.length).toBeGreaterThan(0)
      // Every request fails on both sides: far over the 15% the gate would ask absolutely, and no worse than blue.
      for (const v of verdicts) {
        expect(v).toMatchObject({outcome: 'pass', value: 100, bound: 115, baseline: {of: 'pool blue', value: 100}})
        expect(v.requests).toBeGreaterThan(0)
      }
      // The journal keeps each verdict with its sample and baseline.
      const journaled = onlyRun(relative.state).entries.filter((e) => e.type === 'verdict')
      expect(journaled.length).toBe(verdicts.length)
      expect(journaled[0].verdict).toMatchObject({baseline: {of: 'pool blue', value: 100}, bound: 115})
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])

      const few = runbook('too-few', ramp('minRequests: 100000000'))
      const held = await sluice(['run', few.file, '--yes', '--json', '--state', few.state])
      expect(held.code, held.stderr).toBe(exitCodeOf('gate-failed'))
      const json = JSON.parse(held.stdout) as {message: string; steps: Array<{verdicts: GateVerdict[]}>}
      // The bake (2 s, a pass needed) ends with no pass, by its end or at the third inconclusive
      // verdict (which comes first depends on how soon HAProxy's counters answer a read): never a pass either way.
      const last = json.steps[0].verdicts.at(-1)!
      expect(
        json.steps[0].verdicts.every((v) => v.outcome === 'inconclusive' && v.why === `${v.requests} requests in the window, fewer than minRequests 100000000`),
      ).toBe(true)
      expect(json.message).toMatch(/(did not pass 1 times in a row by the end of the bake|was inconclusive 3 times) at green 5% \(last: /)
      expect(json.message).toContain(`${last.why})`)
      expect(await weights()).toEqual({blue: 100, green: 0})
    } finally {
      loading = false
      await load
      for (const b of every) b.broken = false
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 60_000)

  it("m. judge: counts on HAProxy's counters: green failing as blue does passes, green failing alone fails, each verdict in words with its counts", async () => {
    const ramp = `  - action: ramp
    set: green
    schedule: [20]
    bake: 4
    gate: {metric: error-rate, threshold: 5, interval: 1, pool: green, relativeTo: stable, judge: counts}
`
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/').catch(() => undefined)
    })()
    const every = ['b1', 'b2', 'b3', 'g1'].map((n) => servers.get(n)!)
    try {
      // The live plan says what the bake would hold at the demand now, beside what the judge needs.
      const planned = runbook('counts-plan', ramp)
      await new Promise((r) => setTimeout(r, 1500))
      const plan = await sluice(['plan', planned.file, '--live', '--state', planned.state])
      expect(plan.code, plan.stderr).toBe(0)
      const now =
        /now: ([\d,]+) rps in all, blue erring 0\.0% \(read over 10 s\); the 4 s bake holds, on green, at green 20% about ([\d,]+) of the ([\d,]+) it needs/.exec(
          plan.stdout,
        )
      expect(now, plan.stdout).not.toBeNull()
      const [rps, held, needs] = now!.slice(1).map((x) => Number(x.replaceAll(',', '')))
      expect(rps).toBeGreaterThan(0)
      // A fifth of the demand for the bake's 4 s, give or take the rounding of each.
      expect(Math.abs(held - rps * 0.2 * 4)).toBeLessThanOrEqual(1)
      expect(needs).toBeGreaterThan(held)
      expect(plan.stdout).toContain('(short: a verdict may take the inconclusive intervals after the bake, or hold)')

      // Every request fails on both sides: no worse than blue, so it passes once the bake is over.
      for (const b of every) b.broken = true
      const alike = runbook('counts-alike', ramp)
      const passed = await sluice(['run', alike.file, '--yes', '--json', '--state', alike.state])
      expect(passed.code, passed.stderr).toBe(0)
      const verdicts = (JSON.parse(passed.stdout) as {steps: Array<{verdicts: GateVerdict[]}>}).steps[0].verdicts
      expect(verdicts.at(-1)).toMatchObject({outcome: 'pass', value: 100, baseline: {of: 'pool blue', value: 100}})
      // Counts from HAProxy's own totals: whole requests, growing look by look.
      const seen = verdicts.map((v) => v.requests ?? 0)
      expect(seen.every((n) => Number.isInteger(n))).toBe(true)
      expect(seen.at(-1)).toBeGreaterThan(seen[0])
      expect(verdicts.at(-1)!.said).toMatch(
        /^green 100\.0% of [\d,]+ against blue 100\.0% of [\d,]+: (worse|better) by 0\.0 points, margin 5, [>\d.]+% sure → pass$/,
      )
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])

      // Green alone fails: the gate fails and the map goes back.
      for (const b of every) b.broken = b === servers.get('g1')
      const alone = runbook('counts-alone', ramp)
      const failed = await sluice(['run', alone.file, '--yes', '--state', alone.state])
      expect(failed.code, failed.stderr).toBe(exitCodeOf('gate-failed'))
      expect(failed.stderr).toMatch(/green 100\.0% of [\d,]+ against blue 0\.0% of [\d,]+: worse by 100\.0 points, margin 5, [>\d.]+% sure → fail/)
      expect(await weights()).toEqual({blue: 100, green: 0})
    } finally {
      loading = false
      await load
      for (const b of every) b.broken = false
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 60_000)

  it("m2. judge: counts relative to before on HAProxy's counters: green watched before the change, then failed for erring after it alone, and put back", async () => {
    const ramp = `  - action: ramp
    set: green
    schedule: [80]
    bake: 6
    gate: {metric: error-rate, threshold: 5, window: 3, interval: 1, pool: green, relativeTo: before, judge: counts}
`
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/').catch(() => undefined)
    })()
    const green = servers.get('g1')!
    try {
      await rampMap.replace([
        {key: 'blue', value: '50'},
        {key: 'green', value: '50'},
      ])
      const {file, state} = runbook('counts-before', ramp)
      const running = sluice(['run', file, '--yes', '--json', '--state', state])
      // Green breaks the moment the change lands: everything it serves after it fails, nothing before.
      const changedAt = performance.now()
      while ((await weights()).green !== 80) {
        if (performance.now() - changedAt > 30_000) throw new Error('the ramp never reached green 80%')
        await new Promise((r) => setTimeout(r, 20))
      }
      green.broken = true
      const failed = await running
      expect(failed.code, failed.stderr).toBe(exitCodeOf('gate-failed'))
      const json = JSON.parse(failed.stdout) as {message: string; steps: Array<{verdicts: GateVerdict[]}>}
      expect(json.message).toMatch(
        /green [\d.]+% of [\d,]+ against green before the step 0\.0% of [\d,]+: worse by [\d.]+ points, margin 5(; [^,]+)?, [>\d.]+% sure → fail/,
      )
      // Three looks of 1 s before the change, each with its requests from HAProxy's counters, journalled before its intent.
      const {runId, entries} = onlyRun(state)
      const taken = entries.findIndex((e) => e.type === 'baseline')
      expect(taken).toBeGreaterThan(-1)
      expect(entries[taken].baseline.intervals).toHaveLength(3)
      expect(entries[taken].baseline.intervals.every((c: {requests: number; errors: number}) => c.requests > 0 && c.errors === 0)).toBe(true)
      expect(entries.findIndex((e) => e.type === 'mutation' && e.mutation.phase === 'intent')).toBeGreaterThan(taken)
      const journal = await sluice(['journal', runId, '--state', state])
      expect(journal.stdout).toMatch(/baseline: 3 intervals before the change: 0\.00% of [\d,]+ requests/)
      expect(json.steps[0].verdicts.at(-1)).toMatchObject({outcome: 'fail', baseline: {of: 'before the step', value: 0}})
      expect(await weights()).toEqual({blue: 50, green: 50})
    } finally {
      loading = false
      await load
      green.broken = false
      await rampMap.replace([
        {key: 'blue', value: '100'},
        {key: 'green', value: '0'},
      ])
    }
  }, 60_000)

  it('n. restrict --share turns away that share of a type at runtime; a lift by degrees lets it back step by step; rollback puts the share back', async () => {
    const turnedAway = async (n: number) => {
      let away = 0
      for (let i = 0; i < n; i++) if ((await get(port, '/sync/x')).status === 503) away++
      return away
    }
    try {
      const restricted = runbook('share', '  - {action: restrict, type: sync, paths: [/sync/], retryAfter: 5, share: 70}\n')
      const run = await sluice(['run', restricted.file, '--yes', '--state', restricted.state])
      expect(run.code, run.stderr).toBe(0)
      // What HAProxy was told: the percent let through, after the type and its Retry-After.
      expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:5:30'}])
      // 400 draws at 70%: the count is 280 ± 9 (one standard deviation); five of them either side.
      const away = await turnedAway(400)
      expect(away).toBeGreaterThan(280 - 46)
      expect(away).toBeLessThan(280 + 46)
      // Every other path is untouched.
      for (let i = 0; i < 20; i++) expect((await get(port, '/')).status).toBe(200)

      const lifting = runbook(
        'degrees',
        `  - action: lift
    type: sync
    schedule: [50, 100]
    bake: 1
`,
      )
      const lifted = await sluice(['run', lifting.file, '--yes', '--state', lifting.state])
      expect(lifted.code, lifted.stderr).toBe(0)
      expect(await restrictMap.entries()).toEqual([])
      expect(await turnedAway(50)).toBe(0)
      const {runId, entries} = onlyRun(lifting.state)
      expect(
        entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome').map((e) => [e.mutation.kind, e.mutation.after?.share ?? null]),
      ).toEqual([
        ['restriction-share', 50],
        ['lift', null],
      ])
      // Rollback of the lift puts back the restriction as the run found it: 70% turned away.
      const back = await sluice(['rollback', runId, '--yes', '--state', lifting.state])
      expect(back.code, back.stderr).toBe(0)
      expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:5:30'}])
    } finally {
      await restrictMap.replace([])
    }
  }, 60_000)

  it('f. kill -9 mid-cycle, then sluice resume finishes the cycle and every server is back in rotation', async () => {
    const log = join(dir, 'cycle-f.log')
    const {file, state} = runbook('killed', `  - {action: cycle, pool: blue, batch: 1, restart: ${restartHook(log, 1500)}}\n`)
    const run = spawnRun(['run', file, '--yes', '--state', state], leaseEnv)
    await run.seen(/batch 2 of 3 \([^)]*\): restart/)
    run.signal('SIGKILL')
    await run.ended
    // Killed with b2 out of rotation.
    expect(await byServer('blue')).toEqual({b1: 'healthy', b2: 'draining', b3: 'healthy'})
    const {runId} = onlyRun(state)
    const resumed = await sluice(['resume', runId, '--yes', '--state', state])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await byServer('blue')).toEqual({b1: 'healthy', b2: 'healthy', b3: 'healthy'})
    expect(new Set(logged(log))).toEqual(new Set(['b1', 'b2', 'b3']))
    const journal = await sluice(['journal', runId, '--state', state])
    expect(journal.code, journal.stderr).toBe(0)
    expect(journal.stdout).toMatch(/status: completed/)
  }, 60_000)

  it('i. a socket that is not there, and a backend HAProxy does not have: one line naming it, exit 1, nothing changed', async () => {
    const before = {weights: await weights(), blue: await byServer('blue')}
    const steps = '  - {action: ramp, set: green, schedule: [50], bake: 1}\n  - {action: cycle, pool: blue, batch: 1}\n'
    const missing = join(dir, 'no-such.sock')
    const noSocket = runbook(
      'no-socket',
      steps,
      `    socket: ${missing}
    backends: {blue: blue, green: green}
    rampMap: ${join(haproxy.dir, 'ramp.map')}`,
    )
    const a = await sluice(['run', noSocket.file, '--yes', '--state', noSocket.state])
    expect(a.code).toBe(exitCodeOf('failed'))
    // The store's line, then the one error.
    expect(a.stderr.trim().split('\n')).toEqual([
      `using local state ${noSocket.state} (--state)`,
      `Error: haproxy runtime API at ${missing}: no such socket (is HAProxy running with \`stats socket ${missing} level admin\`?)`,
    ])
    expect(onlyRun(noSocket.state).entries.at(-1)).toMatchObject({type: 'run-end', outcome: 'failed', message: expect.stringContaining('nothing was changed')})

    // A backend HAProxy does not have, as the cycle's pool: `show servers state` refuses it.
    const noBackend = runbook(
      'no-backend',
      '  - {action: cycle, pool: blue, batch: 1}\n',
      `    socket: ${haproxy.socket}
    backends: {blue: nosuch, green: green}`,
    )
    const b = await sluice(['run', noBackend.file, '--yes', '--state', noBackend.state])
    expect(b.code).toBe(exitCodeOf('failed'))
    expect(b.stderr.trim().split('\n')).toEqual([
      `using local state ${noBackend.state} (--state)`,
      expect.stringMatching(/^Error: haproxy runtime API at .*admin\.sock: `show servers state nosuch` was refused for backend nosuch: \S/),
    ])
    // The same backend as a ramp's set: preflight finds the ramp map has no such key.
    const notInMap = runbook(
      'not-in-map',
      steps,
      `    socket: ${haproxy.socket}
    backends: {blue: nosuch, green: green}
    rampMap: ${join(haproxy.dir, 'ramp.map')}`,
    )
    const c = await sluice(['run', notInMap.file, '--yes', '--state', notInMap.state])
    expect(c.code).toBe(exitCodeOf('failed'))
    expect(c.stderr.trim().split('\n')).toEqual([
      `using local state ${notInMap.state} (--state)`,
      `Error: haproxy map ${join(haproxy.dir, 'ramp.map')} (${haproxy.socket}) has no backend "nosuch"; it has blue, green`,
    ])
    expect({weights: await weights(), blue: await byServer('blue')}).toEqual(before)
    expect(await allInRotation()).toBe(true)
  }, 60_000)

  it('j. HAProxy restarted while a run was down (its maps back to their files): resume shows the drift and stops; --reapply puts back the restriction and the weights, then finishes', async () => {
    const {file, state} = runbook(
      'restarted',
      '  - {action: restrict, type: sync, paths: [/sync/], retryAfter: 30}\n  - {action: ramp, set: green, schedule: [50, 100], bake: 3}\n',
    )
    const run = spawnRun(['run', file, '--yes', '--state', state], leaseEnv)
    await run.seen(/green at 50%/)
    run.signal('SIGKILL')
    await run.ended
    expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:30'}])
    expect(await weights()).toEqual({blue: 50, green: 50})
    // What a restart does to runtime changes: every map is what its file says again.
    const fromFile = (name: string) =>
      readFileSync(join(haproxy.dir, name), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => ({key: l.split(' ')[0], value: l.split(' ').slice(1).join(' ')}))
    await restrictMap.replace(fromFile('restricted.map'))
    await rampMap.replace(fromFile('ramp.map'))
    expect(await restrictMap.entries()).toEqual([])
    expect((await get(port, '/sync/mailbox')).status).toBe(200)
    const {runId} = onlyRun(state)

    const refused = await sluice(['resume', runId, '--yes', '--state', state])
    expect(refused.code, refused.stderr).toBe(exitCodeOf('refused'))
    expect(refused.stderr).toContain(
      `drift since run ${runId} stopped: the restriction on sync on haproxy map ${join(haproxy.dir, 'restricted.map')} (${haproxy.socket}): the journal says in place; now gone`,
    )
    expect(refused.stderr).toMatch(
      /drift since run \S+ stopped: the weights of haproxy map .*ramp\.map .*: the journal says blue=50 green=50; now blue=100 green=0/,
    )
    expect(await restrictMap.entries()).toEqual([])
    expect(await weights()).toEqual({blue: 100, green: 0})

    const reapplied = await sluice(['resume', runId, '--yes', '--reapply', '--state', state])
    expect(reapplied.code, reapplied.stderr).toBe(0)
    expect(await restrictMap.entries()).toEqual([{key: '/sync/', value: 'sync:30'}])
    expect((await get(port, '/sync/mailbox')).status).toBe(503)
    expect(await weights()).toEqual({blue: 0, green: 100})
    // Leave HAProxy as the other tests found it.
    expect((await sluice(['rollback', runId, '--yes', '--ungated', '--state', state])).code).toBe(0)
    expect(await restrictMap.entries()).toEqual([])
    expect(await weights()).toEqual({blue: 100, green: 0})
  }, 120_000)

  it('without --yes and no terminal: asks to apply it on HAProxy (not AWS), refuses with exit 4, nothing changed', async () => {
    const {file, state} = runbook('ask', '  - {action: restrict, type: sync, paths: [/sync/]}\n')
    const run = await sluice(['run', file, '--state', state])
    expect(run.code).toBe(exitCodeOf('refused'))
    expect(run.stderr).toContain(`Apply ask on HAProxy ${haproxy.socket}? needs an answer, but this run is not interactive; pass --yes to approve`)
    expect(run.stderr).not.toContain('AWS')
    expect(await restrictMap.entries()).toEqual([])
  }, 60_000)

  it('a gated runbook is told, before anything is asked, which backends its gate cannot see clients give up on (no option abortonclose)', async () => {
    const gated = runbook(
      'gated-ask',
      `  - {action: ramp, set: green, schedule: [10], bake: 1, gate: {metric: error-rate, threshold: 5, window: 2, interval: 1, successes: 1, pool: green}}\n`,
    )
    const run = await sluice(['run', gated.file, '--state', gated.state])
    expect(run.code).toBe(exitCodeOf('refused'))
    expect(run.stderr).toMatch(
      /! haproxy stats .*: backends blue, green have no `option abortonclose`: a client that gives up waiting is never counted as an error/,
    )
    expect(run.stderr.indexOf('option abortonclose')).toBeLessThan(run.stderr.indexOf('needs an answer'))
    expect(await weights()).toEqual({blue: 100, green: 0})
  }, 60_000)
})
