import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import type {MetricKind, Reading, WeightMap} from '../../src/ports/control-plane.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {control, FakeDns, FakeGroup, FakeMetrics, RecordingIO} from '../helpers/fakes.js'

const runbook = (steps: string) =>
  parseRunbook(
    'deadlines.yaml',
    `name: deadlines
targets:
  dns: {zone: Z1, record: app.example.com., ttl: 60, sets: {blue: blue, green: green}}
  targetGroups: {blue: arn:blue}
  metrics: {source: cloudwatch, loadBalancer: app/lb/1}
steps:
${steps}`,
  )

const noAbort = () => new AbortController().signal

const rampSteps = `  - action: ramp
    set: green
    schedule: [5, 25, 50]
    bake: 60
    gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 2}
`

/** A call that never answers until its signal aborts, like an endpoint that accepts and goes quiet. */
function hang(signal: AbortSignal | undefined, what: string): Promise<never> {
  return new Promise((_, reject) => {
    if (!signal) return // without a signal it hangs for good: a test that gets here times out
    const stop = () => reject(new Error(`${what} was stopped`))
    if (signal.aborted) stop()
    else signal.addEventListener('abort', stop, {once: true})
  })
}

/** A Route 53 record whose n-th change (from 0) answers, fails or hangs, as `behave` says. */
class UnreliableDns extends FakeDns {
  /** The signal each change came with. */
  signals: Array<AbortSignal | undefined> = []
  constructor(
    weights: WeightMap,
    private readonly behave: (call: number) => 'answer' | 'fail' | 'hang',
  ) {
    super(weights)
  }
  override async applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void> {
    const how = this.behave(this.signals.push(signal) - 1)
    if (how === 'hang') return hang(signal, 'ChangeResourceRecordSets')
    if (how === 'fail') throw new Error('Route53 ChangeResourceRecordSets on Z1 app.example.com. A failed: Timeout: no answer within 30 s')
    return super.applyWeights(weights)
  }
}

/** Metrics that read fine until `broken()` says otherwise, then fail or hang. */
class UnreliableMetrics extends FakeMetrics {
  constructor(
    private readonly broken: () => boolean,
    private readonly how: 'fail' | 'hang',
  ) {
    super(() => 0.1)
  }
  override async read(kind: MetricKind, window: number, pool?: string, signal?: AbortSignal): Promise<Reading> {
    if (!this.broken()) return super.read(kind, window, pool)
    if (this.how === 'hang') return hang(signal, 'GetMetricData')
    throw new Error('CloudWatch GetMetricData on app/lb/1 failed: Timeout: no answer within 30 s (requests time out after 10 s and are retried)')
  }
}

describe('a ramp whose metrics source fails mid-step', () => {
  it('goes back to the last good weights and fails (exit 1) naming the source, not as a judged gate', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const metrics = new UnreliableMetrics(() => dns.weights.green === 25, 'fail')
    const result = await runRunbook(runbook(rampSteps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('failed')
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(dns.applied.map((w) => w.green)).toEqual([5, 25, 5])
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.stoppedAt?.message).toMatch(
      /^gate error-rate ≤ 1% over 30 s could not read its metrics at green 25%: CloudWatch GetMetricData on app\/lb\/1 failed: Timeout: no answer within 30 s .*; weights back to green 5% \(blue=95 green=5\)$/,
    )
    // No verdict was made up for the unread step.
    expect(result.steps[0].verdicts.every((v) => v.context === 'green 5%' && v.outcome === 'pass')).toBe(true)
  })

  it('a source that fails on the first step goes back to the starting weights', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const metrics = new UnreliableMetrics(() => true, 'fail')
    const result = await runRunbook(runbook(rampSteps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(dns.weights).toEqual({blue: 100, green: 0})
    expect(result.stoppedAt?.message).toContain('weights back to the starting weights (blue=100 green=0)')
  })

  it('a check step whose source fails is a runtime error too', async () => {
    const metrics = new UnreliableMetrics(() => true, 'fail')
    const result = await runRunbook(
      runbook(`  - {action: check, gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 2}, bake: 30}\n`),
      {control: control({metrics}), io: new RecordingIO(), signal: noAbort()},
    )
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(result.message).toContain('could not read its metrics')
  })
})

describe('a ramp whose change fails or hangs', () => {
  it('a failed change goes back to the last good weights and fails with the call named', async () => {
    const dns = new UnreliableDns({blue: 100, green: 0}, (n) => (n === 1 ? 'fail' : 'answer'))
    const io = new RecordingIO()
    const result = await runRunbook(runbook(rampSteps), {control: control({weights: dns, metrics: new FakeMetrics(() => 0.1)}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(result.stoppedAt?.message).toBe(
      'Route53 ChangeResourceRecordSets on Z1 app.example.com. A failed: Timeout: no answer within 30 s; weights back to green 5% (blue=95 green=5)',
    )
    expect(dns.weights).toEqual({blue: 95, green: 5})
    // The failed change and the step back are both on record.
    const outcomes = io
      .of('mutation')
      .filter((m) => m.mutation.phase === 'outcome')
      .map((m) => [(m.mutation.after as WeightMap).green, m.mutation.ok])
    expect(outcomes).toEqual([
      [5, true],
      [25, false],
      [5, true],
    ])
  })

  it('an interruption aborts a hung change and the step back still runs, on a deadline of its own', async () => {
    const abort = new AbortController()
    const dns = new UnreliableDns({blue: 100, green: 0}, (n) => {
      if (n !== 1) return 'answer'
      setTimeout(() => abort.abort(), 10)
      return 'hang'
    })
    const result = await runRunbook(runbook(rampSteps), {
      control: control({weights: dns, metrics: new FakeMetrics(() => 0.1)}),
      io: new RecordingIO(),
      signal: abort.signal,
    })
    expect(result.outcome).toBe('interrupted')
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.stoppedAt?.message).toBe('interrupted at green 25%; weights back to green 5% (blue=95 green=5)')
    const [first, hung, back] = dns.signals
    expect(hung).toBe(first) // the step's own signal, aborted by the interruption
    expect(hung!.aborted).toBe(true)
    expect(back).toBeDefined()
    expect(back!.aborted).toBe(false)
  })

  it('an interruption aborts a hung metrics read and the ramp goes back to the last good weights', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const abort = new AbortController()
    const metrics = new UnreliableMetrics(() => {
      if (dns.weights.green !== 25) return false
      setTimeout(() => abort.abort(), 10)
      return true
    }, 'hang')
    const result = await runRunbook(runbook(rampSteps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: abort.signal})
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.stoppedAt?.message).toBe('interrupted at green 25%; weights back to green 5% (blue=95 green=5)')
  })

  it('an interruption that cuts short a read before the first change is an interruption, not an error', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const abort = new AbortController()
    dns.ttl = (signal?: AbortSignal) => {
      setTimeout(() => abort.abort(), 10)
      return hang(signal, 'ListResourceRecordSets')
    }
    const result = await runRunbook(runbook(rampSteps), {
      control: control({weights: dns, metrics: new FakeMetrics(() => 0.1)}),
      io: new RecordingIO(),
      signal: abort.signal,
    })
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(result.stoppedAt?.message).toBe('stopped during the step: ListResourceRecordSets was stopped')
    expect(dns.applied).toEqual([])
  })
})

describe('a cycle whose gate cannot read its metrics', () => {
  const cycleSteps = (onFailure: string) => `  - action: cycle
    pool: blue
    batch: 2
    onFailure: ${onFailure}
    restart: {command: [restart, '{id}']}
    bake: 30
    gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 2}
`

  it('stops after the batch, takes it back out as for a failed gate (onFailure rollback), and fails with exit 1', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3'])
    const metrics = new UnreliableMetrics(() => group.registrations.length === 2, 'fail')
    const result = await runRunbook(runbook(cycleSteps('rollback')), {
      control: control({pools: new Map([['blue', group]]), metrics}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(group.deregistrations).toEqual([
      ['b0', 'b1'],
      ['b2', 'b3'],
      ['b2', 'b3'],
    ])
    expect([...group.registered].sort()).toEqual(['b0', 'b1'])
    expect(result.stoppedAt?.message).toMatch(
      /could not read its metrics at batch 2 of 2 .*CloudWatch GetMetricData.*; batch 2 of 2 \(b2, b3\) taken back out of rotation$/,
    )
  })

  it('stops after the batch with it in service when onFailure is hold, and fails with exit 1', async () => {
    const group = new FakeGroup('blue', ['b0', 'b1', 'b2', 'b3'])
    const metrics = new UnreliableMetrics(() => group.registrations.length === 1, 'fail')
    const result = await runRunbook(runbook(cycleSteps('hold')), {
      control: control({pools: new Map([['blue', group]]), metrics}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(exitCodeOf(result.outcome)).toBe(1)
    expect(group.deregistrations).toEqual([['b0', 'b1']])
    expect(result.stoppedAt?.message).toMatch(/; stopped after batch 1 of 2/)
  })
})
