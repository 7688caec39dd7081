import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeRules, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('lift', () => {
  it('removes the rule for that type only, as one recorded change', async () => {
    const rules = new FakeRules()
    const sync = {type: 'sync', paths: ['/sync/*'], headers: {}, retryAfterSeconds: 300}
    const search = {type: 'search', paths: ['/search/*'], headers: {}, retryAfterSeconds: 60}
    rules.rules = [sync, search]
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: lift, type: sync}\n`), {control: control({restrictions: rules}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({
      action: 'lift',
      status: 'done',
      title: 'Lift the restriction on sync traffic',
      message: 'sync traffic is let through again',
    })
    expect(rules.rules).toEqual([search])
    const intents = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.mutation)
    expect(intents).toEqual([expect.objectContaining({kind: 'lift', resource: 'listener L1', before: sync, after: null})])
  })

  it('is idempotent: a type that is not restricted is left alone', async () => {
    const rules = new FakeRules()
    let removed = 0
    rules.remove = async () => {
      removed++
      return false
    }
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: lift, type: sync}\n`), {control: control({restrictions: rules}), io, signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'nothing to lift: sync is not restricted'})
    expect(removed).toBe(0)
    expect(io.of('mutation')).toEqual([])
  })
})
