import {join} from 'node:path'
import {writeFileSync} from 'node:fs'
import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {everyStepKind, followJournal, pauseInEveryStep, sleep} from './pause-scenario.js'
import {spawnRun} from './spawned-run.js'

let fx: Fixture
const current = useLiveFixture()
beforeEach(() => {
  fx = current()
})

async function runIdIn(env: Record<string, string>): Promise<string> {
  for (let i = 0; i < 120; i++) {
    const runs = (JSON.parse((await sluice(['journal', '--json'], {env})).stdout) as {runs: Array<{runId: string}>}).runs
    if (runs.length > 0) return runs[0].runId
    await sleep(250)
  }
  throw new Error('no run appeared')
}

describe('sluice pause holds a live run (spawned, against moto, no terminal)', () => {
  it('in a wait, a bake with and without a gate, a cycle between batches and an approval: alive, holding, until promote', async () => {
    await seedMetrics(fx, 0)
    const env = {...fx.env, SLUICE_LEASE_SECONDS: '3'}
    const run = spawnRun(['run', everyStepKind(fx), '--yes'], env)
    let ended = false
    void run.ended.then(() => (ended = true))
    const runId = await runIdIn(env)
    await pauseInEveryStep(fx, runId, () => !ended, env)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 240_000)

  it('survives a crash: a run killed while paused resumes paused, says who paused it, and holds until promote', async () => {
    const env = {...fx.env, SLUICE_LEASE_SECONDS: '3'}
    const file = join(fx.dir, 'paused-ramp.yaml')
    writeFileSync(file, `name: paused-ramp
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
steps:
  - {action: ramp, set: maintenance, schedule: [30, 100], bake: 8}
`)
    const run = spawnRun(['run', file, '--yes'], env)
    const runId = await runIdIn(env)
    await run.seen(/maintenance at 30%/)
    expect((await sluice(['pause', runId], {env: {...env, SLUICE_OPERATOR: 'erin'}})).code).toBe(0)
    await run.seen(/pause by erin .*: paused/)
    run.signal('SIGKILL')
    await run.ended

    const resumed = spawnRun(['resume', runId, '--yes'], env)
    await resumed.seen(new RegExp(`run ${runId} was paused by erin on \\S+ at \\S+ when it stopped: it resumes paused`))
    const journal = followJournal(runId, env)
    try {
      await journal.until((e) => e.type === 'resume', 'the resume')
      // Longer than the rest of the 8 s bake: still at 30%, and the resumed run still alive.
      await sleep(10_000)
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 70, maintenance: 30})
      expect(journal.entries.some((e) => e.type === 'run-end')).toBe(false)
      expect((await sluice(['promote', runId], {env})).code).toBe(0)
      const end = await resumed.ended
      expect(end.code, end.stderr).toBe(0)
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
    } finally {
      journal.stop()
    }
  }, 120_000)
})
