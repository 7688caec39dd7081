import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {RuntimeMap} from '../../src/haproxy/maps.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {isolatedEnv} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {spawnRun} from '../aws/spawned-run.js'
import {stopsBefore} from '../aws/stops-before.js'
import {
  blueGreenConfig,
  blueGreenMaps,
  freePort,
  get,
  startBackend,
  startHaproxy,
  stopBackend,
  until,
  type Backend,
  type RunningHaproxy,
} from './helpers/haproxy.js'

// What sluice reads from HAProxy's maps is what HAProxy does with them: a ramp map whose entries
// are not a split the snippet routes by is refused, a restriction entry that keeps 100% is named
// as restricting nothing (restrict replaces it, lift removes it), and a map changed by hand in the
// middle of a ramp stops the ramp rather than being overwritten. Each through the spawned CLI,
// checked against HAProxy itself (`show map`, real requests).
let haproxy: RunningHaproxy
let port: number
let rampMap: RuntimeMap
let restrictMap: RuntimeMap
let dir: string
const servers: Backend[] = []
let env: Record<string, string>

beforeAll(async () => {
  const blue = await startBackend('b1')
  const green = await startBackend('g1')
  servers.push(blue, green)
  port = await freePort()
  haproxy = await startHaproxy(
    blueGreenConfig({port, blue: [{name: 'b1', port: blue.port}], green: {name: 'g1', port: green.port}, slowstartSeconds: 1}),
    blueGreenMaps,
  )
  const api = new RuntimeApi(haproxy.socket)
  rampMap = new RuntimeMap(api, join(haproxy.dir, 'ramp.map'))
  restrictMap = new RuntimeMap(api, join(haproxy.dir, 'restricted.map'))
  dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-readings-'))
})

afterAll(async () => {
  await haproxy?.stop()
  for (const s of servers) await stopBackend(s)
  if (dir) rmSync(dir, {recursive: true, force: true})
})

beforeEach(async () => {
  // Each test its own state, and the maps as the config's files start them.
  env = {...isolatedEnv('haproxy-readings'), SLUICE_LEASE_SECONDS: '3'}
  await rampMap.replace([
    {key: 'blue', value: '100'},
    {key: 'green', value: '0'},
  ])
  await restrictMap.replace([])
})

let files = 0
function runbook(name: string, steps: string): string {
  const file = join(dir, `${name}-${++files}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  haproxy:
    socket: ${haproxy.socket}
    backends: {blue: blue, green: green}
    restrictMap: ${restrictMap.file}
    rampMap: ${rampMap.file}
steps:
${steps}`,
  )
  return file
}

const entries = async (map: RuntimeMap) => (await map.entries()).map((e) => `${e.key} ${e.value}`)

/** The one run in this test's state directory: its id and journal entries. */
function onlyRun(): {runId: string; entries: Array<Record<string, any>>} {
  const runs = readdirSync(join(env.SLUICE_STATE, 'runs')).filter((f) => f.endsWith('.jsonl'))
  expect(runs).toHaveLength(1)
  const lines = readFileSync(join(env.SLUICE_STATE, 'runs', runs[0]), 'utf8')
    .trim()
    .split('\n')
  return {runId: runs[0].replace(/\.jsonl$/, ''), entries: lines.map((l) => JSON.parse(l) as Record<string, any>)}
}

/** How many of `n` fresh requests to `path` each backend answered (x-backend), and how many HAProxy answered 503. */
async function spread(path: string, n: number): Promise<{b1: number; g1: number; restricted: number}> {
  // A busy machine's missed checks can leave a backend with no server UP for a moment, and
  // HAProxy's own 503 then is not the restriction's: wait until a request reaches a server.
  await until('a request reaches a server', async () => (await get(port, '/')).status !== 503)
  const out = {b1: 0, g1: 0, restricted: 0}
  for (let i = 0; i < n; i++) {
    const reply = await get(port, path)
    if (reply.status === 503) out.restricted++
    else out[reply.headers['x-backend'] as 'b1' | 'g1']++
  }
  return out
}

const ramp = `  - action: ramp
    set: green
    schedule: [10, 50, 100]
    bake: 1
`

describe('a ramp map whose entries do not add up to 100', () => {
  it('is refused, naming the map, its entries, their sum and what the snippet routes; nothing changes', async () => {
    await rampMap.replace([
      {key: 'blue', value: '90'},
      {key: 'green', value: '30'},
    ])
    // The snippet ramps green: it reads green's own entry, 30, and sends the rest to blue (blue's 90 is never read).
    const seen = await spread('/', 400)
    expect(seen.g1 / 400).toBeGreaterThan(0.2)
    expect(seen.g1 / 400).toBeLessThan(0.4)

    const file = runbook('ramp-misread', ramp)
    const run = await sluice(['run', file, '--yes'], {env})
    expect(run.code, run.stderr).toBe(1)
    const said = `haproxy map ${rampMap.file} (${haproxy.socket}): its entries blue=90 green=30 add up to 120, not 100`
    expect(run.stderr).toContain(said)
    expect(run.stderr).toContain('a snippet ramping green routes green 30% and blue 70%; a snippet ramping blue routes blue 90% and green 10%')
    expect(run.stderr).toContain('sluice reads no split from it, will not ramp from it, and changed nothing')
    expect(run.stderr).toContain(`\`set map ${rampMap.file} blue 70\` keeps what a snippet ramping green routes now`)
    expect(await entries(rampMap)).toEqual(['blue 90', 'green 30'])

    // status reads the same map, and says the same.
    const status = await sluice(['status', file], {env})
    expect(status.code, status.stderr).toBe(1)
    expect(status.stderr).toContain(said)

    // Set right as the message says, the ramp runs from what HAProxy routes.
    await rampMap.replace([
      {key: 'blue', value: '70'},
      {key: 'green', value: '30'},
    ])
    const plan = await sluice(['plan', file, '--live'], {env})
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('now: blue=70 green=30')
    expect(plan.stdout).toContain('green has 30% of')
  }, 120_000)

  it('is refused when a value is not a whole percent, and when more than two backends have a share', async () => {
    await rampMap.replace([
      {key: 'blue', value: '150'},
      {key: 'green', value: '0'},
    ])
    const file = runbook('ramp-not-percent', ramp)
    const a = await sluice(['run', file, '--yes'], {env})
    expect(a.code, a.stderr).toBe(1)
    expect(a.stderr).toContain('the entry "blue 150" is not a whole percent from 0 to 100')
    expect(await entries(rampMap)).toEqual(['blue 150', 'green 0'])

    await rampMap.replace([
      {key: 'blue', value: '50'},
      {key: 'green', value: '30'},
      {key: 'red', value: '20'},
    ])
    const b = await sluice(['run', file, '--yes'], {env})
    expect(b.code, b.stderr).toBe(1)
    expect(b.stderr).toContain('its entries blue=50 green=30 red=20 add up to 100, with 3 above 0')
    expect(b.stderr).toContain("HAProxy's ramp snippet splits between two backends")
    expect(await entries(rampMap)).toEqual(['blue 50', 'green 30', 'red 20'])
  }, 120_000)
})

describe('a restriction entry that keeps 100%', () => {
  beforeEach(async () => {
    await restrictMap.replace([{key: '/sync/', value: 'sync:30:100'}])
  })

  const restrictSync = `  - action: restrict
    type: sync
    paths: [/sync/*]
    retryAfter: 30
`

  it('lets every request through, and status and plan say it restricts nothing', async () => {
    expect((await spread('/sync/x', 20)).restricted).toBe(0)
    const file = runbook('restrict-sync', restrictSync)
    const status = await sluice(['status', file], {env})
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain(
      `haproxy map ${restrictMap.file} (${haproxy.socket}): sync (/sync/; Retry-After 30 s; restricts nothing: every request passes)`,
    )
    const plan = await sluice(['plan', file, '--live', '--wide'], {env})
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('now: no restriction in force; sync is listed but restricts nothing: every request passes')
    expect(plan.stdout).toContain('sync has a restriction on')
    expect(plan.stdout).toContain('that restricts nothing (every request passes): the step replaces it with this one')
    expect(plan.stdout).not.toContain('already restricted')
  }, 120_000)

  it('restrict replaces it, and every request of the type is turned away', async () => {
    const run = await sluice(['run', runbook('restrict-sync', restrictSync), '--yes', '--json'], {env})
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).steps[0].message).toBe('sync traffic now gets 503 with Retry-After: 30, in place of one that restricted nothing')
    expect(await entries(restrictMap)).toEqual(['/sync/ sync:30'])
    expect((await spread('/sync/x', 20)).restricted).toBe(20)
    // The journal names what it replaced, so a rollback lifts it (the same traffic passes as before).
    const {runId, entries: journal} = onlyRun()
    const restrict = journal.find((e) => e.type === 'mutation' && e.mutation.kind === 'restrict' && e.mutation.phase === 'intent')
    expect(restrict?.mutation.before).toMatchObject({type: 'sync', share: 0})
    const rollback = await sluice(['rollback', runId, '--yes'], {env})
    expect(rollback.code, rollback.stderr + rollback.stdout).toBe(0)
    expect(await entries(restrictMap)).toEqual([])
  }, 120_000)

  it('lift removes it, by degrees too (there is nothing to let back)', async () => {
    const lift = await sluice(
      [
        'lift',
        '--type',
        'sync',
        '--schedule',
        '50,100',
        '--bake',
        '1',
        '--haproxy-socket',
        haproxy.socket,
        '--restrict-map',
        restrictMap.file,
        '--backend',
        'blue=blue',
        '--yes',
        '--json',
      ],
      {env},
    )
    expect(lift.code, lift.stderr + lift.stdout).toBe(0)
    expect(JSON.parse(lift.stdout).steps[0].message).toBe(
      `removed the restriction on sync from haproxy map ${restrictMap.file} (${haproxy.socket}); it restricts nothing: every request passes, so no traffic comes back`,
    )
    expect(await entries(restrictMap)).toEqual([])
  }, 120_000)
})

describe('a ramp map changed by hand between two steps', () => {
  it('stops the ramp, naming the map, what sluice set and what it found; the hand change stays, exit 4, journalled', async () => {
    const file = runbook('ramp-by-hand', ramp.replace('bake: 1', 'bake: 600'))
    const run = spawnRun(['run', file, '--yes'], env)
    const runId = await run.runId()
    // The first step's change, then a person's, then promote ends the bake early: the next step reads the map first.
    await run.seen(/green at 10%/)
    expect(await entries(rampMap)).toEqual(['blue 90', 'green 10'])
    await rampMap.replace([
      {key: 'blue', value: '60'},
      {key: 'green', value: '40'},
    ])
    const promote = await sluice(['promote', runId], {env})
    expect(promote.code, promote.stderr).toBe(0)
    const end = await stopsBefore(run, /green at 50%/)
    expect(end.code, end.stderr).toBe(4)
    const said = `stopped before green 50%: the weights of haproxy map ${rampMap.file} (${haproxy.socket}) were changed outside this run: sluice set blue=90 green=10, and found blue=60 green=40`
    expect(end.stderr).toContain(said)
    expect(end.stderr).toContain(`\`sluice resume ${runId} --reapply\` puts back blue=90 green=10 and goes on with the ramp`)
    expect(end.stderr).toContain(`\`sluice rollback ${runId} --from-live\``)
    expect(await entries(rampMap)).toEqual(['blue 60', 'green 40'])
    const journal = onlyRun().entries
    expect(journal.filter((e) => e.type === 'mutation' && e.mutation.phase === 'intent')).toHaveLength(1)
    expect(journal.find((e) => e.type === 'step-end')).toMatchObject({status: 'refused'})
    expect(journal.find((e) => e.type === 'step-end')?.message).toContain(said)
    expect(journal.at(-1)).toMatchObject({type: 'run-end', outcome: 'refused'})

    // resume finds the same drift and will not go on over it without --reapply.
    const resume = await sluice(['resume', runId, '--yes'], {env})
    expect(resume.code, resume.stderr).toBe(4)
    expect(resume.stderr).toContain('blue=90 green=10')
    expect(await entries(rampMap)).toEqual(['blue 60', 'green 40'])
  }, 120_000)
})
