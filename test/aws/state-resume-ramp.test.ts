import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {journalOf, killRampWhen, onlyRunId, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('kill -9 and resume', () => {
  it('mid-ramp: resume finishes it, the weights read back match an uninterrupted run, and the journal accounts for every change', async () => {
    const file = await killRampWhen(fx, /blue at 30%/)
    expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
    const runId = await onlyRunId(fx.env)
    expect((await journalOf(runId, fx.env)).status).toBe('unfinished')

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`resuming run ${runId} (ramp) at step 1 of 1`)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})

    // The same runbook uninterrupted ends the same way.
    const again = runbook('again', `  - {action: ramp, set: green, schedule: [100], bake: 1}\n`)
    expect((await sluice(['run', again, '--yes'], {env: {...fx.env, SLUICE_STATE: join(fx.dir, 'other')}})).code).toBe(0)
    const straight = await sluice(['run', file, '--yes'], {env: {...fx.env, SLUICE_STATE: join(fx.dir, 'other')}})
    expect(straight.code, straight.stderr).toBe(0)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})

    // Every weight change that reached Route 53 for the killed and resumed run is in its journal.
    const journal = await journalOf(runId, fx.env)
    expect(journal.status).toBe('completed')
    const recorded = journal.entries
      .filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.ok)
      .map((e) => (e.mutation!.after as Record<string, number>).blue)
    // 10 and 30 before the kill; 60 and 100 after the resume (30 was judged again, not redone).
    expect(recorded).toEqual([10, 30, 60, 100])
  }, 120_000)
})
