import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {control, FakeDns, FakeMetrics, RecordingIO, runbook} from '../helpers/fakes.js'

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
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, metrics: new FakeMetrics(() => 0.2)}), io, signal: noAbort()})
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
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: noAbort()})
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
    const result = await runRunbook(runbook(steps), {
      control: control({weights: dns, metrics: new FakeMetrics(() => 50)}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(dns.weights).toEqual({blue: 100, green: 0})
  })

  it('no data is inconclusive and never a pass', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const result = await runRunbook(runbook(steps), {
      control: control({weights: dns, metrics: new FakeMetrics(() => null)}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
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
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: abort.signal})
    expect(result.outcome).toBe('interrupted')
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(dns.weights).toEqual({blue: 95, green: 5})
    expect(result.stoppedAt?.message).toContain('weights back to green 5%')
  })

  it('a gate that fails after a hand change in its bake leaves the hand change: not put back, named, exit 4', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    // At green 25% a person moves everything back to blue by hand, and the errors (of the step before) fail the gate.
    const metrics = new FakeMetrics(() => {
      if (dns.weights.green !== 25) return 0.1
      dns.weights = {blue: 100, green: 0}
      return 7.5
    })
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('refused')
    expect(exitCodeOf(result.outcome)).toBe(4)
    expect(dns.applied.map((w) => w.green)).toEqual([1, 5, 25])
    expect(dns.weights).toEqual({blue: 100, green: 0})
    expect(result.message).toContain('measured 7.50%')
    expect(result.message).toContain(
      'not put back to green 5% (blue=95 green=5): the weights of Z1 app.example.com. A were changed outside this run: sluice set blue=75 green=25, and found blue=100 green=0',
    )
  })

  it('a change that failed may have landed: the way back takes either side as its own, and puts back the last good step', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const apply = dns.applyWeights.bind(dns)
    // The change to green 25% lands, and its answer is lost.
    dns.applyWeights = async (weights) => {
      await apply(weights)
      if (weights.green === 25) throw new Error('the answer was lost')
    }
    const result = await runRunbook(runbook(steps), {
      control: control({weights: dns, metrics: new FakeMetrics(() => 0.1)}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.outcome).toBe('failed')
    expect(result.message).toContain('the answer was lost; weights back to green 5%')
    expect(dns.weights).toEqual({blue: 95, green: 5})
  })

  it('splits the rest among the other sets in proportion to their starting weights', async () => {
    const threeSets = (weights: Record<string, number>, schedule: number) =>
      parseRunbook(
        'three.yaml',
        `name: three
targets:
  dns: {zone: Z1, record: app.example.com., ttl: 60, sets: {a: a, b: b, c: c}}
steps:
  - {action: ramp, set: c, schedule: [${schedule}], bake: 60}
`,
      )
    for (const [start, schedule, expected] of [
      [{a: 60, b: 20, c: 0}, 10, {c: 10, a: 68, b: 22}],
      [{a: 0, b: 0, c: 0}, 50, {c: 50, a: 25, b: 25}],
    ] as const) {
      const dns = new FakeDns({...start})
      const result = await runRunbook(threeSets(start, schedule), {control: control({weights: dns}), io: new RecordingIO(), signal: noAbort()})
      expect(result.outcome).toBe('completed')
      expect(dns.applied).toEqual([expected])
    }
  })
})
