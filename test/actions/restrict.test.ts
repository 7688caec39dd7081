import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeRules, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('restrict', () => {
  it('adds one rule for the traffic type with its paths, headers and Retry-After', async () => {
    const rules = new FakeRules()
    const io = new RecordingIO()
    const steps = `  - {action: restrict, type: sync, paths: [/sync/*, /ews/sync/*], headers: {x-client: [outlook, mobile]}, retryAfter: 5m}\n`
    const result = await runRunbook(runbook(steps), {control: control({restrictions: rules}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({
      action: 'restrict',
      status: 'done',
      title: 'Restrict sync traffic',
      message: 'sync traffic now gets 503 with Retry-After: 300',
    })
    const rule = {type: 'sync', paths: ['/sync/*', '/ews/sync/*'], headers: {'x-client': ['outlook', 'mobile']}, retryAfterSeconds: 300}
    expect(rules.rules).toEqual([rule])
    const intents = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.mutation)
    expect(intents).toEqual([expect.objectContaining({kind: 'restrict', resource: 'listener L1', before: null, after: rule})])
  })

  it('defaults to no paths, or no headers, and Retry-After: 120', async () => {
    const rules = new FakeRules()
    const result = await runRunbook(runbook(`  - {action: restrict, type: sync, headers: {x-client: [sync]}}\n`), {
      control: control({restrictions: rules}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.steps[0].message).toBe('sync traffic now gets 503 with Retry-After: 120')
    expect(rules.rules).toEqual([{type: 'sync', paths: [], headers: {'x-client': ['sync']}, retryAfterSeconds: 120}])
  })

  it('is idempotent: a type already restricted keeps its rule and nothing is added', async () => {
    const rules = new FakeRules()
    const existing = {type: 'sync', paths: ['/old/*'], headers: {}, retryAfterSeconds: 60}
    rules.rules = [existing]
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: restrict, type: sync, paths: [/sync/*]}\n`), {
      control: control({restrictions: rules}),
      io,
      signal: noAbort(),
    })
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'sync is already restricted'})
    expect(rules.rules).toEqual([existing])
    expect(io.of('mutation')).toEqual([])
  })

  it('a run with no listener fails the step, saying what it needs', async () => {
    const result = await runRunbook(runbook(`  - {action: restrict, type: sync, paths: [/sync/*]}\n`), {
      control: control({}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.outcome).toBe('failed')
    expect(result.steps[0]).toMatchObject({
      status: 'error',
      message: 'step 1 needs a listener (targets.listener) or a HAProxy restriction map (targets.haproxy.restrictMap), and this run has none',
    })
  })
})
