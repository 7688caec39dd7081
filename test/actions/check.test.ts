import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeClock, FakeMetrics, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

const check = (extra = '') => `  - action: check
    bake: 60
    gate: {metric: error-rate, threshold: 2, window: 30, interval: 10, successes: 3, pool: blue}
${extra}`

describe('check', () => {
  it('watches the gate for the bake and passes, reading the metric for its pool; it changes nothing', async () => {
    const clock = new FakeClock()
    const metrics = new FakeMetrics(() => 0.4)
    const io = new RecordingIO()
    const result = await runRunbook(runbook(check()), {control: control({clock, metrics}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({action: 'check', status: 'done', title: 'Check error-rate', message: 'error-rate ≤ 2% over 30 s (blue): passed'})
    // A verdict every 10 s through the 60 s bake.
    expect(result.steps[0].verdicts.map((v) => [v.at, v.outcome, v.value])).toEqual([10, 20, 30, 40, 50, 60].map((t) => [t, 'pass', 0.4]))
    expect(metrics.reads).toEqual(Array(6).fill({kind: 'error-rate', pool: 'blue'}))
    expect(clock.t).toBe(60)
    expect(io.of('mutation')).toEqual([])
    expect(io.of('verdict')).toHaveLength(6)
  })

  it('fails at a verdict over the threshold (exit 3), naming the gate, the value and the threshold', async () => {
    let reads = 0
    const metrics = new FakeMetrics(() => (++reads >= 3 ? 4.5 : 0.1))
    const result = await runRunbook(runbook(check()), {control: control({metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('gate-failed')
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.steps[0].status).toBe('failed')
    expect(result.steps[0].message).toBe('gate error-rate ≤ 2% over 30 s (blue) failed at Check error-rate: measured 4.50%, threshold 2.00%')
    expect(result.steps[0].verdicts.map((v) => v.outcome)).toEqual(['pass', 'pass', 'fail'])
  })

  it('with onFailure: hold, a failing check holds the run (exit 3) instead of failing it', async () => {
    const result = await runRunbook(runbook(check('    onFailure: hold\n')), {
      control: control({metrics: new FakeMetrics(() => 9)}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.outcome).toBe('held')
    expect(exitCodeOf(result.outcome)).toBe(3)
    expect(result.steps[0].status).toBe('held')
  })

  it("without a bake it watches for the gate's window", async () => {
    const clock = new FakeClock()
    const steps = `  - action: check\n    gate: {metric: healthy-targets, threshold: 90, window: 40, interval: 10, successes: 2}\n`
    const result = await runRunbook(runbook(steps), {control: control({clock, metrics: new FakeMetrics(() => 100)}), io: new RecordingIO(), signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'healthy-targets ≥ 90% over 40 s: passed'})
    expect(clock.t).toBe(40)
  })
})
