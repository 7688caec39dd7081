import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {afterEach, describe, expect, it} from 'vitest'
import {runJs, sluice} from '../helpers/cli.js'
import {seedMetrics, useLiveFixture, type Fixture} from './live-fixture.js'
import {uniqueName} from './seed.js'
import {gatedRamp, spawnRun} from './spawned-run.js'

// The bridge on a team store: two `sluice serve` processes (two people's laptops, each with a home
// of its own) and two operators' CLIs over one DynamoDB table on moto see the same run, the same
// locks and each other's controls.

let fx: Fixture
useLiveFixture((current) => (fx = current))

const table = uniqueName('sluice-serve')
const started: ChildProcess[] = []
afterEach(() => {
  for (const c of started.splice(0)) c.kill('SIGTERM')
})

/** `sluice serve --controls` in a process of its own, with a home of its own: only the table is shared. */
async function serveOn(env: Record<string, string>): Promise<{url: string; token: string}> {
  const child = spawn(process.execPath, [runJs, 'serve', '--port', '0', '--controls', '--json'], {
    env: {...process.env, ...env, HOME: mkdtempSync(join(tmpdir(), 'sluice-serve-home-'))},
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  started.push(child)
  return JSON.parse(await new Promise<string>((resolve) => createInterface({input: child.stdout}).once('line', resolve))) as {url: string; token: string}
}

interface Board {
  runs: Array<{runId: string; status: string; pausedBy: string | null}>
  locks: Array<{resource: string; runId: string}>
}
const board = async (url: string) => (await (await fetch(`${url}api/board`)).json()) as Board

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 30_000): Promise<T> {
  const give = Date.now() + ms
  for (;;) {
    const value = await read()
    if (ok(value)) return value
    if (Date.now() > give) throw new Error(`${what}: not within ${ms} ms; last ${JSON.stringify(value)}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('sluice serve on a DynamoDB team store (moto)', () => {
  it('two servers and two operators see the same run, the same locks and each other’s controls', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${table}`}
    await seedMetrics(fx, 0)
    const run = spawnRun(['run', gatedRamp(fx, 600, 'bridge-ramp'), '--yes'], {...env, SLUICE_OPERATOR: 'alice'})
    const [a, b] = await Promise.all([serveOn(env), serveOn(env)])
    const onA = await until(
      'the run on server A',
      () => board(a.url),
      (x) => x.runs.some((r) => r.status === 'running'),
    )
    const runId = onA.runs.find((r) => r.status === 'running')!.runId
    const onB = await board(b.url)
    expect(onB.runs.map((r) => [r.runId, r.status])).toEqual(onA.runs.map((r) => [r.runId, r.status]))
    expect(onB.locks.map((l) => l.resource).sort()).toEqual(onA.locks.map((l) => l.resource).sort())
    expect(onA.locks.filter((l) => l.runId === runId).length).toBeGreaterThan(1)
    await run.seen(/maintenance at 20%/)

    // bob pauses it from his terminal: both pages say so.
    const paused = await sluice(['pause', runId], {env: {...env, SLUICE_OPERATOR: 'bob', HOME: mkdtempSync(join(tmpdir(), 'sluice-bob-'))}})
    expect(paused.code, paused.stderr).toBe(0)
    for (const s of [a, b])
      await until(
        'bob’s pause on each server',
        () => board(s.url),
        (x) => x.runs.find((r) => r.runId === runId)?.pausedBy?.startsWith('bob@') === true,
      )

    // carol promotes it from server B's page (its POST, with B's token); A shows the pause gone.
    const promoted = await fetch(`${b.url}api/runs/${runId}/control`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${b.token}`},
      body: JSON.stringify({kind: 'promote', operator: 'carol'}),
    })
    expect(promoted.status).toBe(200)
    expect(((await promoted.json()) as {taken: {effect: string}}).taken.effect).toBe('continued')
    await until(
      'the pause gone on server A',
      () => board(a.url),
      (x) => x.runs.find((r) => r.runId === runId)?.pausedBy === null,
    )
    // A's token is not B's: each server has its own.
    const wrong = await fetch(`${b.url}api/runs/${runId}/control`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${a.token}`},
      body: JSON.stringify({kind: 'abort', operator: 'mallory'}),
    })
    expect(wrong.status).toBe(401)

    // dave aborts it from another terminal; both servers show it ended, its locks let go.
    const aborted = await sluice(['abort', runId], {env: {...env, SLUICE_OPERATOR: 'dave', HOME: mkdtempSync(join(tmpdir(), 'sluice-dave-'))}})
    expect(aborted.code, aborted.stderr).toBe(0)
    expect((await run.ended).code).toBe(130)
    for (const s of [a, b]) {
      const ended = await until(
        'the run ended on each server',
        () => board(s.url),
        (x) => x.runs.find((r) => r.runId === runId)?.status === 'interrupted',
      )
      expect(ended.locks.filter((l) => l.runId === runId)).toEqual([])
    }
    const journal = await sluice(['journal', runId, '--json'], {env})
    const controls = (JSON.parse(journal.stdout) as {entries: Array<{type: string; control?: {kind: string; operator: string; host: string}}>}).entries
      .filter((e) => e.type === 'control')
      .map((e) => [e.control!.kind, e.control!.operator])
    expect(controls).toEqual([
      ['pause', 'bob'],
      ['promote', 'carol'],
      ['abort', 'dave'],
    ])
  }, 180_000)
})
