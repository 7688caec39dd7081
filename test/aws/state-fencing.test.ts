import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {seedS3State, uniqueName} from './seed.js'
import {spawnRun} from './spawned-run.js'
import {cfg, journalOf, LEASE, runbook, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

// Fencing: a run stopped (SIGSTOP: a laptop lid, a debugger, a long GC pause) past its lease while
// another process takes its locks over and finishes the run, then continued (SIGCONT). Woken, it
// must not write its next journal entry nor make its next change: it is told it lost the lock
// (exit 4), naming who holds it, and changes nothing more. On each of the three stores.

let fx: Fixture
useStateFixture((current) => (fx = current))

type Entry = {seq: number; type: string; fence?: number; pid?: number; mutation?: {phase: string; after?: unknown}}

describe('a stopped run that wakes after another took over its locks changes nothing more', () => {
  // Where the one who took over has finished and let go; the next test, on every store, wakes it while the other still holds.
  it.each([['the local directory', async () => fx.env]])(
    '%s: its next write is refused naming the holder, nothing it does after waking reaches AWS or the journal, exit 4',
    async (_store, envOf) => {
      const env = await envOf()
      // Bakes long enough that the run is stopped inside one, short enough for the resume to finish.
      const file = runbook(fx, 'fenced', `  - {action: ramp, set: blue, schedule: [10, 30, 60, 100], bake: 4}\n`)
      const old = spawnRun(['run', file, '--yes'], env)
      const runId = await old.runId()
      await old.seen(/blue at 10%/)
      old.signal('SIGSTOP')
      try {
        // Past its lease, another operator resumes the run: its locks are taken over, the run finished.
        await new Promise((r) => setTimeout(r, Number(LEASE) * 1000 + 500))
        const resumed = await sluice(['resume', runId, '--yes'], {env: {...env, SLUICE_OPERATOR: 'bob'}})
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(resumed.stderr).toMatch(/watching for up to \d+ s whether that process is alive/)
        expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
      } finally {
        old.signal('SIGCONT')
      }
      const changesBefore = fx.proxy.count('ChangeResourceRecordSets')
      const journalBefore = (await journalOf(runId, env)).entries as Entry[]
      const end = await old.ended
      // Refused (exit 4), naming who holds the run now, and nothing more was changed.
      expect(end.code, end.stderr).toBe(4)
      expect(end.stderr).toMatch(/this process no longer holds the lock on (journal|route53):\S+: its lease/)
      expect(end.stderr).not.toMatch(/Unhandled|\n\s+at /)
      expect(fx.proxy.count('ChangeResourceRecordSets'), 'no change reached AWS after it woke').toBe(changesBefore)
      expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
      const journal = (await journalOf(runId, env)).entries as Entry[]
      expect(journal, 'nothing it did after waking reached the journal').toEqual(journalBefore)
      // The resume wrote under a newer fencing token than the stopped run's.
      const resumedAt = journal.findIndex((e) => e.type === 'resume')
      const oldFence = journal[resumedAt - 1].fence!
      expect(journal.slice(resumedAt).every((e) => (e.fence ?? 0) > oldFence)).toBe(true)
      const locks = await sluice(['locks', '--json'], {env})
      expect(JSON.parse(locks.stdout)).toEqual({locks: []})
    },
    120_000,
  )

  it.each([
    ['the local directory', async () => fx.env],
    ['DynamoDB', async () => ({...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice-fence')}`})],
    ['S3', async () => ({...fx.env, SLUICE_STATE: await seedS3State(cfg)})],
  ])(
    '%s: woken while the one who took over still runs, it is refused naming that run, which goes on to the end',
    async (_store, envOf) => {
      const env = await envOf()
      // The resume holds the locks at an approval while the stopped run wakes.
      const file = runbook(
        fx,
        'fenced-held',
        `  - {action: ramp, set: blue, schedule: [10, 30], bake: 4}\n  - {action: approve, message: Go on to 100%?}\n  - {action: ramp, set: blue, schedule: [100], bake: 1}\n`,
      )
      const old = spawnRun(['run', file, '--yes'], env)
      const runId = await old.runId()
      await old.seen(/blue at 10%/)
      old.signal('SIGSTOP')
      let resumed: ReturnType<typeof spawnRun> | undefined
      try {
        await new Promise((r) => setTimeout(r, Number(LEASE) * 1000 + 500))
        resumed = spawnRun(['resume', runId, '--yes'], {...env, SLUICE_OPERATOR: 'bob'})
        await resumed.seen(/waiting for approval/)
      } finally {
        old.signal('SIGCONT')
      }
      const changesBefore = fx.proxy.count('ChangeResourceRecordSets')
      const end = await old.ended
      expect(end.code, end.stderr).toBe(4)
      expect(end.stderr).toMatch(new RegExp(`this process no longer holds the lock on \\S+: .*it is held by run ${runId} of bob on \\S+ \\(pid \\d+\\)`))
      expect(fx.proxy.count('ChangeResourceRecordSets'), 'no change reached AWS after it woke').toBe(changesBefore)
      expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
      // The one who took over goes on to the end.
      const approved = await sluice(['promote', runId], {env})
      expect(approved.code, approved.stderr).toBe(0)
      const done = await resumed.ended
      expect(done.code, done.stderr).toBe(0)
      expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    },
    120_000,
  )
})
