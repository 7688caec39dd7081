import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeFreeze, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('unfreeze', () => {
  it('clears the freeze this run set, saying whose it was, as one recorded change', async () => {
    const freeze = new FakeFreeze()
    const found = {by: 'alice', reason: 'incident 42', since: '2026-11-04T10:00:00.000Z', runId: 'test-run'}
    freeze.record = {...found}
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({
      action: 'unfreeze',
      status: 'done',
      title: 'Lift the change freeze',
      message: 'unfrozen (was frozen since 2026-11-04T10:00:00.000Z by alice in run test-run: incident 42)',
    })
    expect(freeze.record).toBeNull()
    const intents = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.mutation)
    expect(intents).toHaveLength(1)
    expect(intents[0]).toMatchObject({kind: 'unfreeze', before: found, after: null})
  })

  it('in a runbook, leaves a freeze another run set in place, says so, and the run completes, changing nothing', async () => {
    const freeze = new FakeFreeze()
    const theirs = {by: 'bob', reason: 'db migration', since: '2026-11-04T10:00:00.000Z', runId: 'other-run'}
    freeze.record = {...theirs}
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0].message).toBe('left the freeze in place: frozen since 2026-11-04T10:00:00.000Z by bob in run other-run: db migration')
    expect(io.of('warning').map((w) => w.message)).toEqual([
      "the freeze in place is not this run's to lift (frozen since 2026-11-04T10:00:00.000Z by bob in run other-run: db migration): left in place; this run set none of its own to lift (force: true lifts it, journalled)",
    ])
    expect(freeze.record).toEqual(theirs)
    expect(io.of('mutation')).toEqual([])
  })

  it("typed as `sluice unfreeze`: lifts the freeze the same operator set by hand; refuses another's without --force", async () => {
    const freeze = new FakeFreeze()
    const mine = {by: 'alice', reason: 'incident 42', since: '2026-11-04T10:00:00.000Z', runId: 'freeze-run', byHand: true}
    freeze.record = {...mine}
    const io = new RecordingIO()
    const byHand = (operator: string) => control({freeze, operator, byHand: true})
    const refused = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: byHand('bob'), io, signal: noAbort()})
    expect(refused.outcome).toBe('refused')
    expect(refused.steps[0].message).toBe(
      "the freeze in place is not this run's to lift (frozen since 2026-11-04T10:00:00.000Z by alice in run freeze-run: incident 42); lift it with --force, which the journal records",
    )
    expect(freeze.record).toEqual(mine)
    const lifted = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: byHand('alice'), io, signal: noAbort()})
    expect(lifted.outcome).toBe('completed')
    expect(freeze.record).toBeNull()
    // A runbook run by the same operator does not lift what they froze by hand.
    freeze.record = {...mine}
    const inRunbook = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze, operator: 'alice'}), io, signal: noAbort()})
    expect(inRunbook.steps[0].message).toMatch(/^left the freeze in place/)
    expect(freeze.record).toEqual(mine)
  })

  it("with force, lifts another's freeze with a warning, and the change records whose it was", async () => {
    const freeze = new FakeFreeze()
    const theirs = {by: 'bob', reason: 'db migration', since: '2026-11-04T10:00:00.000Z'}
    freeze.record = {...theirs}
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: unfreeze, force: true}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'unfrozen (was frozen since 2026-11-04T10:00:00.000Z by bob: db migration), by force'})
    expect(io.of('warning').map((w) => w.message)).toEqual([
      'lifting a freeze this run did not set, by force: frozen since 2026-11-04T10:00:00.000Z by bob: db migration',
    ])
    expect(io.of('mutation')[0].mutation).toMatchObject({kind: 'unfreeze', before: theirs, after: null})
    expect(freeze.record).toBeNull()
  })

  it('with force, clears a damaged freeze record that cannot be read', async () => {
    const freeze = new FakeFreeze()
    freeze.get = async () => {
      throw new Error('.sluice/freeze.json:1: not a freeze record')
    }
    let cleared = 0
    freeze.clear = async () => void cleared++
    const io = new RecordingIO()
    const refused = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(refused.outcome).toBe('failed')
    expect(cleared).toBe(0)
    const forced = await runRunbook(runbook(`  - {action: unfreeze, force: true}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(forced.steps[0]).toMatchObject({status: 'done', message: 'cleared a damaged freeze record, by force'})
    expect(cleared).toBe(1)
  })

  it('with no freeze in place there is nothing to do and nothing changes', async () => {
    const freeze = new FakeFreeze()
    let cleared = 0
    freeze.clear = async () => void cleared++
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'nothing to unfreeze: no freeze in place'})
    expect(cleared).toBe(0)
    expect(io.of('mutation')).toEqual([])
  })
})
