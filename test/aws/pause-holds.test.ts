import {beforeEach, describe, expect, it} from 'vitest'
import {seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {everyStepKind, pauseInEveryStep} from './pause-scenario.js'
import {spawnRun} from './spawned-run.js'

let fx: Fixture
const current = useLiveFixture()
beforeEach(() => {
  fx = current()
})

describe('sluice pause holds a live run (spawned, against moto, no terminal)', () => {
  it('in a wait, a bake with and without a gate, a cycle between batches and an approval: alive, holding, until promote', async () => {
    await seedMetrics(fx, 0)
    const env = {...fx.env, SLUICE_LEASE_SECONDS: '3'}
    const run = spawnRun(['run', everyStepKind(fx), '--yes'], env)
    let ended = false
    void run.ended.then(() => (ended = true))
    const runId = await run.runId()
    await pauseInEveryStep(fx, runId, () => !ended, env)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 240_000)
})
