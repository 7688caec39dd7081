import {describe, expect, it} from 'vitest'
import {useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {pauseInEveryStep, startEveryStepKind} from './pause-scenario.js'
import {spawnRun} from './spawned-run.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('sluice pause holds a live run (spawned, against moto, no terminal)', () => {
  it('in a wait, a bake with and without a gate, a cycle between batches and an approval: alive, holding, until promote', async () => {
    const {run, env, running} = await startEveryStepKind(fx, spawnRun)
    const runId = await run.runId()
    await pauseInEveryStep(fx, runId, running, env)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 240_000)
})
