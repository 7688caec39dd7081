import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {describe, expect, it} from 'vitest'
import {weightsAt} from '../../src/actions/ramp.js'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeClock, FakeDns, FakeFreeze, FakeGroup, FakeHooks, FakeMetrics, FakeRules, RecordingIO, runbook} from './fakes.js'

const noAbort = () => new AbortController().signal

describe('ramp', () => {
  const steps = `  - action: ramp
    set: green
    schedule: [1, 5, 25, 50, 100]
    bake: 60
    gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 3}
`

  it('applies one weight change per step and finishes at 100%', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const io = new RecordingIO()
    const result = await runRunbook(runbook(steps), {control: control({dns, metrics: new FakeMetrics(() => 0.2)}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(exitCodeOf(result.outcome)).toBe(0)
    expect(dns.applied.map((w) => w.green)).toEqual([1, 5, 25, 50, 100])
    expect(dns.applied.at(-1)).toEqual({blue: 0, green: 100})
    // Intent is announced before every change and the outcome after it.
    const changes = io.of('mutation').map((e) => e.mutation.phase)
    expect(changes).toEqual(Array(5).fill(['intent', 'outcome']).flat())
  })

  it('a gate failure mid-ramp puts the weights back to the last good step and exits 3, naming gate, value and threshold', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    // Errors climb once green takes a quarter of the traffic.
    const metrics = new FakeMetrics(() => (dns.weights.green >= 25 ? 7.5 : 0.1))
    const result = await runRunbook(runbook(steps), {control: control({dns, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('gate-failed')
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(dns.applied.map((w) => w.green)).toEqual([1, 5, 25, 5])
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.message).toContain('error-rate ≤ 1% over 30 s')
    expect(result.message).toContain('measured 7.50%')
    expect(result.message).toContain('threshold 1.00%')
    expect(result.message).toContain('weights back to green 5%')
    const verdicts = result.steps[0].verdicts
    expect(verdicts.filter((v) => v.context === 'green 5%').every((v) => v.outcome === 'pass')).toBe(true)
    expect(verdicts.at(-1)).toMatchObject({context: 'green 25%', outcome: 'fail', value: 7.5, threshold: 1})
  })

  it('a failure on the first step goes back to the starting weights', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const result = await runRunbook(runbook(steps), {control: control({dns, metrics: new FakeMetrics(() => 50)}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(dns.weights).toEqual({blue: 100, green: 0})
  })

  it('no data is inconclusive and never a pass', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const result = await runRunbook(runbook(steps), {control: control({dns, metrics: new FakeMetrics(() => null)}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.steps[0].verdicts.every((v) => v.outcome === 'inconclusive')).toBe(true)
    expect(result.message).toMatch(/no data 3 times .* missing data is never a pass/)
    expect(dns.weights).toEqual({blue: 100, green: 0})
  })

  it('an interruption during a bake holds at the last good weights and exits 130', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const abort = new AbortController()
    const metrics = new FakeMetrics(() => {
      if (dns.weights.green === 25) abort.abort()
      return 0
    })
    const result = await runRunbook(runbook(steps), {control: control({dns, metrics}), io: new RecordingIO(), signal: abort.signal})
    expect(result.outcome).toBe('interrupted')
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.stoppedAt?.message).toContain('weights back to green 5%')
  })

  it('splits the rest among the other sets in proportion to their starting weights', () => {
    expect(weightsAt(10, 'c', {a: 60, b: 20, c: 0})).toEqual({c: 10, a: 68, b: 22})
    expect(weightsAt(50, 'c', {a: 0, b: 0, c: 0})).toEqual({c: 50, a: 25, b: 25})
  })
})

describe('cycle', () => {
  const cycleStep = (extra = '') => `  - action: cycle
    pool: blue
    batch: 2
    budget: 3
    restart: {command: [restart, '{id}']}
${extra}`

  it('takes targets already out of rotation first and stays within the budget', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3', 'b4'])
    await group.deregister(['b3'])
    group.deregistrations = []
    const hooks = new FakeHooks()
    const result = await runRunbook(runbook(cycleStep()), {control: control({targetGroups: new Map([['blue', group]]), hooks}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('completed')
    // b3 was already out: it is restarted and returned with the first batch, not drained again.
    expect(group.deregistrations).toEqual([['b0'], ['b1', 'b2'], ['b4']])
    expect(group.registrations).toEqual([['b3', 'b0'], ['b1', 'b2'], ['b4']])
    expect(hooks.runs.map((r) => r.id)).toEqual(['b3', 'b0', 'b1', 'b2', 'b4'])
    expect([...group.registered].sort()).toEqual(['b0', 'b1', 'b2', 'b3', 'b4'])
  })

  it('sets routing failover and slow start before the first batch, each as a recorded change', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1'])
    const io = new RecordingIO()
    const result = await runRunbook(runbook(cycleStep('    failoverPercent: 50\n    slowStart: 60\n')), {control: control({targetGroups: new Map([['blue', group]])}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(0)
    expect(group.failover).toBe(50)
    expect(group.slow).toBe(60)
    const intents = io.of('mutation').filter((m) => m.mutation.phase === 'intent').map((m) => [m.mutation.kind, m.mutation.before, m.mutation.after])
    expect(intents.slice(0, 2)).toEqual([['failover', null, 50], ['slow-start', 0, 60]])
  })

  it('refuses a batch that would leave too little capacity, and says so', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3'])
    const metrics = new FakeMetrics((kind) => (kind === 'request-rate' ? 300 : 0))
    const steps = cycleStep('    headroom: 20\n    capacityPerTarget: 100\n')
    const result = await runRunbook(runbook(steps), {control: control({targetGroups: new Map([['blue', group]]), metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.message).toContain('refusing to drain: the 2 targets left can serve 200 rps, 160 rps after 20% headroom, below the current 300 rps')
    expect(group.deregistrations).toEqual([])
  })

  it('stops at a batch whose restart fails, names it, and leaves that batch out of rotation', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3'])
    const hooks = new FakeHooks()
    hooks.failFor.add('b2')
    const result = await runRunbook(runbook(cycleStep()), {control: control({targetGroups: new Map([['blue', group]]), hooks}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(result.message).toContain('batch 2 of 2 (b2, b3): restart failed for b2: restart exited 1')
    expect(group.registered.has('b2')).toBe(false)
    expect(group.registered.has('b0')).toBe(true)
  })

  it('a batch that fails its gate is named; with rollback it is taken back out', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3'])
    let returned = 0
    group.register = async (ids) => {
      returned++
      for (const id of ids) group.registered.add(id)
    }
    const metrics = new FakeMetrics(() => (returned >= 2 ? 9 : 0))
    const steps = cycleStep('    onFailure: rollback\n    bake: 30\n    gate: {metric: error-rate, threshold: 2}\n')
    const result = await runRunbook(runbook(steps), {control: control({targetGroups: new Map([['blue', group]]), metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.message).toMatch(/at batch 2 of 2 \(b2, b3\): measured 9\.00%, threshold 2\.00%; batch 2 of 2 \(b2, b3\) taken back out of rotation/)
    expect(group.registered.has('b2')).toBe(false)
  })
})

describe('approve, freeze, restrict, timeouts', () => {
  const approve = `  - action: approve\n    message: Bring traffic back?\n`

  it('an approval in a non-interactive run without --yes is refused with exit 4', async () => {
    const io = new RecordingIO('no-tty')
    const result = await runRunbook(runbook(approve), {control: control({}), io, signal: noAbort()})
    expect(result.outcome).toBe('refused')
    expect(exitCodeOf(result.outcome)).toBe(4)
    expect(result.message).toContain('pass --yes')
  })

  it('a declined approval stops the run with exit 4; an accepted one goes on', async () => {
    const declined = await runRunbook(runbook(approve), {control: control({}), io: new RecordingIO(false), signal: noAbort()})
    expect(exitCodeOf(declined.outcome)).toBe(4)
    const accepted = await runRunbook(runbook(approve), {control: control({}), io: new RecordingIO(true), signal: noAbort()})
    expect(exitCodeOf(accepted.outcome)).toBe(0)
  })

  it('freeze, restrict, lift and unfreeze change the state and are idempotent', async () => {
    const freeze = new FakeFreeze()
    const rules = new FakeRules()
    const steps = `  - {action: freeze, reason: incident}
  - {action: restrict, type: sync, paths: [/sync/*], retryAfter: 300}
  - {action: restrict, type: sync}
  - {action: lift, type: sync}
  - {action: lift, type: sync}
  - {action: unfreeze}
`
    const io = new RecordingIO()
    const result = await runRunbook(runbook(steps), {control: control({freeze, rules}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(0)
    expect(result.steps.map((s) => s.message)).toEqual([
      'frozen by tester: incident',
      'sync traffic now gets 503 with Retry-After: 300',
      'sync is already restricted',
      'sync traffic is let through again',
      'nothing to lift: sync is not restricted',
      expect.stringMatching(/^unfrozen \(was frozen since .* by tester\)$/),
    ])
    expect(freeze.record).toBeNull()
    expect(rules.rules).toEqual([])
    expect(io.of('mutation').filter((m) => m.mutation.phase === 'intent').map((m) => m.mutation.kind)).toEqual(['freeze', 'restrict', 'lift', 'unfreeze'])
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
    const result = await runRunbook(runbook(steps), {control: control({dns, clock}), io: new RecordingIO(), signal: noAbort()})
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
    const result = await runRunbook(runbook(`  - {action: freeze, reason: x}\n  - {action: unfreeze}\n`), {control: control({freeze}), io: new RecordingIO(), signal: abort.signal})
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(result.steps.map((s) => s.status)).toEqual(['done', 'skipped'])
    expect(freeze.record).not.toBeNull()
  })
})
