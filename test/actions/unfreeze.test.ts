import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeFreeze, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('unfreeze', () => {
  it('clears the freeze, saying whose it was, as one recorded change', async () => {
    const freeze = new FakeFreeze()
    const found = {by: 'alice', reason: 'incident 42', since: '2026-11-04T10:00:00.000Z'}
    freeze.record = {...found}
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: unfreeze}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({action: 'unfreeze', status: 'done', title: 'Lift the change freeze', message: 'unfrozen (was frozen since 2026-11-04T10:00:00.000Z by alice)'})
    expect(freeze.record).toBeNull()
    const intents = io.of('mutation').filter((e) => e.mutation.phase === 'intent').map((e) => e.mutation)
    expect(intents).toHaveLength(1)
    expect(intents[0]).toMatchObject({kind: 'unfreeze', before: found, after: null})
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
