import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {spawnInTerminal} from '../helpers/terminal.js'
import {useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {pauseInEveryStep, sleep, startEveryStepKind} from './pause-scenario.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('sluice pause holds a live run drawn in a terminal (spawned under a pseudo-terminal, against moto)', () => {
  it('in a wait, a bake with and without a gate, a cycle between batches and an approval: alive, holding, until promote', async () => {
    const {run, env, running} = await startEveryStepKind(fx, spawnInTerminal)
    let runId: string | undefined
    for (let i = 0; i < 240 && !runId; i++) {
      runId = /run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(run.screen())?.[1]
      if (!runId) await sleep(250)
    }
    expect(runId, run.screen()).toBeDefined()
    await pauseInEveryStep(fx, runId!, running, env)
    const end = await run.ended
    expect(end.code, end.screen).toBe(0)
    // The paused bake stops counting on screen: the gated bake showed "paused" beside its count.
    expect(end.screen).toMatch(/bake \d+\/30 s, paused/)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
    expect(JSON.parse((await sluice(['journal', runId!, '--json'], {env})).stdout).status).toBe('completed')
  }, 240_000)
})
