import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeClock, FakeDns, FakeFreeze, FakeRules, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

/** One-step runbooks per action are in test/actions; here, what the engine does around the steps. */
describe('the engine: steps in order, timeouts, interruptions', () => {
  it('freeze, restrict, lift and unfreeze change the state and are idempotent', async () => {
    const freeze = new FakeFreeze()
    const rules = new FakeRules()
    const steps = `  - {action: freeze, reason: incident}
  - {action: restrict, type: sync, paths: [/sync/*], retryAfter: 300}
  - {action: restrict, type: sync, paths: [/sync/*]}
  - {action: lift, type: sync}
  - {action: lift, type: sync}
  - {action: unfreeze}
`
    const io = new RecordingIO()
    const result = await runRunbook(runbook(steps), {control: control({freeze, restrictions: rules}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(0)
    expect(result.steps.map((s) => s.message)).toEqual([
      'frozen by tester: incident',
      'sync traffic now gets 503 with Retry-After: 300',
      'sync is already restricted',
      'sync traffic is let through again',
      'nothing to lift: sync is not restricted',
      expect.stringMatching(/^unfrozen \(was frozen since .* by tester in run test-run: incident\)$/),
    ])
    expect(freeze.record).toBeNull()
    expect(rules.rules).toEqual([])
    expect(
      io
        .of('mutation')
        .filter((m) => m.mutation.phase === 'intent')
        .map((m) => m.mutation.kind),
    ).toEqual(['freeze', 'restrict', 'lift', 'unfreeze'])
  })

  it('a step that runs out of time stops at a safe point and fails', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const steps = `  - action: ramp
    set: green
    schedule: [10, 50, 100]
    bake: 60
    timeout: 100
`
    const clock = new FakeClock()
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, clock}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.message).toContain('timed out after 100 s')
    expect(dns.weights.green).toBeLessThan(100)
  })

  it('stops before the next step when interrupted between steps', async () => {
    const abort = new AbortController()
    const freeze = new FakeFreeze()
    freeze.set = async (r) => {
      freeze.record = r
      abort.abort()
    }
    const result = await runRunbook(runbook(`  - {action: freeze, reason: x}\n  - {action: unfreeze}\n`), {
      control: control({freeze}),
      io: new RecordingIO(),
      signal: abort.signal,
    })
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(result.steps.map((s) => s.status)).toEqual(['done', 'skipped'])
    expect(freeze.record).not.toBeNull()
  })
})
