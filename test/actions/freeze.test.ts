import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeFreeze, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('freeze', () => {
  it('records the freeze with who and why, as one recorded change', async () => {
    const freeze = new FakeFreeze()
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: freeze, reason: incident 42}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({action: 'freeze', status: 'done', message: 'frozen by tester: incident 42', title: 'Freeze changes: incident 42'})
    expect(freeze.record).toMatchObject({by: 'tester', reason: 'incident 42'})
    expect(freeze.record!.expires).toBeUndefined()
    expect(Number.isNaN(Date.parse(freeze.record!.since))).toBe(false)
    const mutations = io.of('mutation').map((e) => e.mutation)
    expect(mutations.map((m) => [m.kind, m.phase])).toEqual([
      ['freeze', 'intent'],
      ['freeze', 'outcome'],
    ])
    expect(mutations[0].before).toBeNull()
    expect(mutations[0].after).toEqual(freeze.record)
  })

  it('with expires, the record says when it runs out', async () => {
    const freeze = new FakeFreeze()
    await runRunbook(runbook(`  - {action: freeze, reason: x, expires: 1h}\n`), {control: control({freeze}), io: new RecordingIO(), signal: noAbort()})
    const {since, expires} = freeze.record!
    expect(Date.parse(expires!) - Date.parse(since)).toBe(3_600_000)
  })

  it('is idempotent: an existing freeze is kept and nothing is changed', async () => {
    const freeze = new FakeFreeze()
    freeze.record = {by: 'alice', reason: 'earlier incident', since: '2026-11-04T10:00:00.000Z'}
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: freeze, reason: incident 42}\n`), {control: control({freeze}), io, signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'already frozen since 2026-11-04T10:00:00.000Z by alice: earlier incident'})
    expect(freeze.record).toEqual({by: 'alice', reason: 'earlier incident', since: '2026-11-04T10:00:00.000Z'})
    expect(io.of('mutation')).toEqual([])
  })
})
