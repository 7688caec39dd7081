import {spawn} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DynamoStore} from '../../src/aws/dynamo-store.js'
import {S3Store} from '../../src/aws/s3-store.js'
import type {StateStore} from '../../src/ports/state-store.js'
import {runJs, sluice} from '../helpers/cli.js'
import {elsewhere} from '../helpers/elsewhere.js'
import {seedS3State, uniqueName} from './seed.js'
import {spawnRun} from './spawned-run.js'
import {cfg, LEASE, runbook, useStateFixture, type Fixture} from './state-fixture.js'

// Many operators and pipelines on one team store (DynamoDB, S3), on moto: 50 `freeze check`s at
// once, 20 runs of different runbooks at once, ten runs of one runbook racing for its locks, and a
// dead holder's lock taken over. Correctness is asserted; the times are written to
// .artifacts/state-load.json for the note (speed is not asserted here: these machines are shared).

let fx: Fixture
useStateFixture((current) => (fx = current))

/**
 * The numbers (50 freeze checks, 20 runs, ten racers) with `npm run test:load`; a smaller
 * crowd in the e2e tier, which must stay well under ten minutes on two cores. Either way every
 * assertion holds; only the crowd's size changes.
 */
const full = process.env.SLUICE_LOAD_FULL === '1'
const crowd = full ? {checks: 50, runs: 20, racers: 10} : {checks: 12, runs: 6, racers: 5}

/** A spawned sluice, timed from spawn to exit. */
function timed(args: string[], env: Record<string, string>): Promise<{code: number | null; ms: number; stdout: string; stderr: string}> {
  const started = performance.now()
  const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({code, ms: performance.now() - started, stdout, stderr})))
}

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]
const figures: Record<string, unknown> = {}

function record(store: string, name: string, ms: number[]): void {
  figures[`${store}.${name}`] = {n: ms.length, p50: Math.round(quantile(ms, 0.5)), p99: Math.round(quantile(ms, 0.99)), max: Math.round(Math.max(...ms))}
  mkdirSync('.artifacts', {recursive: true})
  writeFileSync(join('.artifacts', 'state-load.json'), `${JSON.stringify(figures, null, 2)}\n`)
}

type Entry = {seq: number; type: string; outcome?: string}

describe.each([
  ['DynamoDB', async () => `dynamodb://${uniqueName('sluice-load')}`],
  ['S3', async () => seedS3State(cfg)],
])('many operators at once on the %s team store', (store, address) => {
  it(`${crowd.checks} pipelines run \`freeze check\` at once: every one sees the freeze; then every one sees it lifted`, async () => {
    const env = {...fx.env, SLUICE_STATE: await address()}
    expect((await sluice(['freeze', '--reason', 'load test'], {env})).code).toBe(0)
    const frozen = await Promise.all(Array.from({length: crowd.checks}, () => timed(['freeze', 'check', '--json'], env)))
    for (const r of frozen) {
      expect(r.code, r.stderr).toBe(4)
      expect(JSON.parse(r.stdout)).toMatchObject({frozen: true, freeze: {reason: 'load test'}})
    }
    record(
      store,
      `freeze-check-${crowd.checks}-at-once.ms`,
      frozen.map((r) => r.ms),
    )
    expect((await sluice(['unfreeze'], {env})).code).toBe(0)
    const lifted = await Promise.all(Array.from({length: 10}, () => timed(['freeze', 'check'], env)))
    expect(lifted.map((r) => r.code)).toEqual(Array<number>(10).fill(0))
  }, 300_000)

  it("in process, the store's own latency: a freeze read by 50 at once, and a lock taken and let go 50 times", async () => {
    const where = await address()
    Object.assign(process.env, fx.env)
    const open = (): StateStore => {
      const [scheme, rest] = where.split('://')
      if (scheme === 'dynamodb') return new DynamoStore(rest, {})
      const [bucket, ...prefix] = rest.split('/')
      return new S3Store(bucket, prefix.join('/'), {})
    }
    const first = open()
    await first.freeze.set({by: 'load', reason: 'load test', since: new Date().toISOString()})
    const reads = await Promise.all(
      Array.from({length: 50}, async () => {
        const store = open()
        const t0 = performance.now()
        const freeze = await store.freeze.get()
        return {ms: performance.now() - t0, freeze}
      }),
    )
    expect(reads.every((r) => r.freeze?.reason === 'load test')).toBe(true)
    record(
      store,
      'freeze-read-50-at-once-in-process.ms',
      reads.map((r) => r.ms),
    )
    const takes: number[] = []
    const run = '20261207-070000-10ad'
    for (let k = 0; k < 50; k++) {
      const t0 = performance.now()
      await first.acquire(['route53:load'], {runId: run, operator: 'load', host: 'here'})
      takes.push(performance.now() - t0)
      await first.release(['route53:load'], run)
    }
    record(store, 'lock-take-in-process.ms', takes)
    await first.freeze.clear()
  }, 120_000)

  it(`${crowd.runs} runs of different runbooks at once: all complete, each journal whole (no entry lost or doubled), no lock left`, async () => {
    const env = {...fx.env, SLUICE_STATE: await address()}
    const files = Array.from({length: crowd.runs}, (_, k) => runbook(fx, `load-${k}`, `  - {action: wait, for: 1}\n  - {action: wait, for: 1}\n`))
    const runs = await Promise.all(files.map((file) => timed(['run', file, '--yes'], env)))
    for (const r of runs) expect(r.code, `${r.stderr}\n--- stdout:\n${r.stdout}`).toBe(0)
    record(
      store,
      `run-${crowd.runs}-at-once.ms`,
      runs.map((r) => r.ms),
    )
    const listed = JSON.parse((await sluice(['journal', '--json'], {env})).stdout) as {runs: Array<{runId: string; status: string}>}
    expect(listed.runs).toHaveLength(crowd.runs)
    for (const run of listed.runs) {
      expect(run.status).toBe('completed')
      const entries = (JSON.parse((await sluice(['journal', run.runId, '--json'], {env})).stdout) as {entries: Entry[]}).entries
      // Read back in order, numbered one after another from 1: none lost, none doubled.
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1))
      expect(entries.filter((e) => e.type === 'run-start')).toHaveLength(1)
      expect(entries.filter((e) => e.type === 'run-end')).toEqual([expect.objectContaining({outcome: 'completed'})])
      expect(entries.filter((e) => e.type === 'step-end')).toHaveLength(2)
    }
    expect(JSON.parse((await sluice(['locks', '--json'], {env})).stdout)).toEqual({locks: []})
  }, 300_000)

  it(`${crowd.racers} runs of one runbook race for its locks: exactly one proceeds, the rest are refused naming it; never two holders`, async () => {
    const env = {...fx.env, SLUICE_STATE: await address()}
    const file = runbook(fx, 'contended', `  - {action: ramp, set: blue, schedule: [50], bake: 1}\n`)
    const runs = await Promise.all(Array.from({length: crowd.racers}, () => timed(['run', file, '--yes'], env)))
    const won = runs.filter((r) => r.code === 0)
    const refused = runs.filter((r) => r.code === 4)
    expect(won, runs.map((r) => r.stderr).join('\n---\n')).toHaveLength(1)
    expect(refused).toHaveLength(crowd.racers - 1)
    // Refused by the lock (naming its holder) or, once the winner's run exists, by one run per runbook.
    for (const r of refused)
      expect(r.stderr).toMatch(
        /is locked by run \d{8}-\d{6}-[0-9a-f]{4} of .+ \(pid \d+\)|run \d{8}-\d{6}-[0-9a-f]{4} of contended \(by .+\) is (starting|running): one run per runbook at a time/,
      )
    const listed = JSON.parse((await sluice(['journal', '--json'], {env})).stdout) as {runs: Array<{status: string}>}
    // Only the winner journalled a change: a refused run changed nothing.
    expect(listed.runs.filter((r) => r.status === 'completed')).toHaveLength(1)
  }, 300_000)

  it("a dead holder's locks are taken within a lease and five seconds, from another host's kill -9", async () => {
    const env = {...fx.env, SLUICE_STATE: await address()}
    const file = runbook(fx, 'killed', `  - {action: ramp, set: blue, schedule: [10, 100], bake: 2}\n`)
    // Killed as a run on another host dies: its pid means nothing here, only its lease can tell.
    const run = spawnRun(['run', file, '--yes'], elsewhere(env))
    const runId = await run.runId()
    await run.seen(/blue at 10%/)
    run.signal('SIGKILL')
    const killed = Date.now()
    await run.ended
    const resumed = spawnRun(['resume', runId, '--yes'], env)
    // Taken once the journal's lock names a holder on this host, not the dead one far away. When
    // it was taken is the new lock's fencing token (microseconds by the taker's clock, this
    // machine's): the moment of the take, not the moment a `locks` spawned to look happened to see it.
    let takenMs = Infinity
    while (Date.now() - killed < 60_000) {
      const locks = JSON.parse((await sluice(['locks', '--json'], {env})).stdout) as {locks: Array<{resource: string; host: string; fence: number}>}
      const journal = locks.locks.find((l) => l.resource === `journal:${runId}`)
      if (journal && journal.host !== 'far-away-host') {
        takenMs = journal.fence / 1000 - killed
        break
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    const end = await resumed.ended
    expect(end.code, end.stderr).toBe(0)
    expect(takenMs).toBeLessThan((Number(LEASE) + 5) * 1000)
    record(store, 'dead-holder-lock-taken.ms', [takenMs])
  }, 120_000)
})
