import {describe, expect, it} from 'vitest'
import {dnsRunbook, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {followJournal, inProcessWith, sleep} from './pause-scenario.js'
import {spawnRun} from './spawned-run.js'
import {testLease} from './lengths.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('a pause survives a crash (spawned, against moto)', () => {
  it('survives a crash: a run killed while paused resumes paused, says who paused it, and holds until promote', async () => {
    const env = {...fx.env, ...testLease}
    const steps = `steps:
  - {action: ramp, set: maintenance, schedule: [30, 100], bake: 8}
`
    const file = dnsRunbook(fx, 'paused-ramp', steps)
    const run = spawnRun(['run', file, '--yes'], env)
    const runId = await run.runId()
    await run.seen(/maintenance at 30%/)
    expect((await inProcessWith({...env, SLUICE_OPERATOR: 'erin'}, ['pause', runId])).exit).toBe(0)
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
      expect((await inProcessWith(env, ['promote', runId])).exit).toBe(0)
      const end = await resumed.ended
      expect(end.code, end.stderr).toBe(0)
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
    } finally {
      journal.stop()
    }
  }, 120_000)
})
