import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {judge} from '../../src/engine/gate.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {Reading} from '../../src/ports/control-plane.js'
import {describeGate, gateDefaults, type Gate} from '../../src/runbook/gate.js'
import {verdictText} from '../../src/format.js'
import {control, FakeDns, FakeMetrics, RecordingIO, runbook, servedAsSet} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal
const reading = (value: number | null, requests: number | null): Reading => ({value, requests})
const errorGate = (more: Partial<Gate>): Gate => ({...gateDefaults, metric: 'error-rate', threshold: 1, ...more})

describe('a verdict judged on its sample and its baseline', () => {
  it('is inconclusive below minRequests, saying how many requests it saw, whatever the value', () => {
    const gate = errorGate({minRequests: 100})
    expect(judge(gate, reading(33.3, 3))).toEqual({outcome: 'inconclusive', bound: null, why: '3 requests in the window, fewer than minRequests 100'})
    expect(judge(gate, reading(0, 3)).outcome).toBe('inconclusive')
    expect(judge(gate, reading(0.5, 100))).toEqual({outcome: 'pass', bound: 1})
    expect(judge(gate, reading(1.5, 100))).toEqual({outcome: 'fail', bound: 1})
    // A source that cannot count is not a source that counted enough.
    expect(judge(gate, reading(0.5, null)).outcome).toBe('inconclusive')
  })

  it('passes a relative gate above its absolute threshold when no worse than the baseline by more than the points', () => {
    const gate = errorGate({threshold: 2, baseline: {pool: 'blue'}, compare: 'points'})
    expect(judge(gate, reading(31, 5000), reading(30, 90000))).toEqual({outcome: 'pass', bound: 32})
    expect(judge(gate, reading(33, 5000), reading(30, 90000))).toEqual({outcome: 'fail', bound: 32})
  })

  it('reads a ratio as the baseline times the threshold', () => {
    const gate = errorGate({threshold: 1.5, baseline: 'before', compare: 'ratio'})
    expect(judge(gate, reading(14, 500), reading(10, 500))).toEqual({outcome: 'pass', bound: 15})
    expect(judge(gate, reading(16, 500), reading(10, 500)).outcome).toBe('fail')
  })

  it('is inconclusive when the baseline has no data or too few requests', () => {
    const gate = errorGate({minRequests: 50, baseline: {pool: 'blue'}, compare: 'points'})
    expect(judge(gate, reading(1, 500), reading(null, 0))).toMatchObject({outcome: 'inconclusive', why: 'the baseline (pool blue) had no data'})
    expect(judge(gate, reading(1, 500), reading(0.5, 12))).toMatchObject({
      outcome: 'inconclusive',
      why: 'the baseline (pool blue) had 12 requests, fewer than minRequests 50',
    })
  })

  it('names the baseline, the points or ratio and the minimum in the gate', () => {
    expect(describeGate(errorGate({threshold: 2, pool: 'green', baseline: {pool: 'blue'}, compare: 'points', minRequests: 200}))).toBe(
      'error-rate ≤ pool blue + 2 points over 60 s (green), 200+ requests',
    )
    expect(describeGate(errorGate({threshold: 1.5, baseline: 'before', compare: 'ratio'}))).toBe('error-rate ≤ 1.5 × before the step over 60 s')
    expect(describeGate({...gateDefaults, metric: 'latency-p99', threshold: 50, baseline: 'before', compare: 'points'})).toBe(
      'latency-p99 ≤ before the step + 50 ms over 60 s',
    )
  })
})

const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`
const rule = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/api/9f0d3a2b1c4e5f67/abcdef0123456789/0123456789abcdef'

/** A runbook with pools blue and green whose one step moves traffic to green behind `gate` (line 11). */
const twoPools = (gate: string) =>
  parseRunbook(
    'test.yaml',
    `name: test
targets:
  targetGroups: {blue: ${tg('blue')}, green: ${tg('green')}}
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
steps:
  - action: weighted-target-groups
    rule: ${rule}
    pool: green
    schedule: [1, 10, 100]
    bake: 30
    gate: ${gate}
`,
  )

describe('gates in a run', () => {
  it('at 1% weight a window of a handful of requests stays inconclusive and says so, and the run does not pass on it', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    // 100 rps in all: green's window holds its share of 30 s of requests; one failure in five at 1%.
    const metrics = new FakeMetrics((kind, pool) =>
      kind === 'request-rate'
        ? servedAsSet(split.weights, pool, 100)
        : pool === 'green'
          ? reading(split.weights.green >= 10 ? 0.2 : 20, split.weights.green * 30)
          : reading(0.1, 3000),
    )
    const runbook = twoPools('{metric: error-rate, threshold: 1, window: 30, interval: 10, pool: green, minRequests: 100, inconclusiveLimit: 3}')
    const io = new RecordingIO()
    const result = await runRunbook(runbook, {control: control({poolWeights: () => split, metrics}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    const verdicts = result.steps[0].verdicts
    expect(verdicts.map((v) => v.outcome)).toEqual(['inconclusive', 'inconclusive', 'inconclusive'])
    expect(verdicts[0]).toMatchObject({value: 20, requests: 30, why: '30 requests in the window, fewer than minRequests 100'})
    expect(result.message).toContain('was inconclusive 3 times at green 1% (last: 30 requests in the window, fewer than minRequests 100)')
    expect(verdictText(verdicts[0])).toContain('20.00% of 30 requests inconclusive, 30 requests in the window, fewer than minRequests 100 (green 1%)')
    // The weights went back: an inconclusive gate is never a pass.
    expect(split.weights).toEqual({blue: 100, green: 0})
  })

  it('a baseline gate passes while the absolute error rate is over its threshold, no worse than stable, and fails when worse', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    // Mid-outage the stable pool fails 30% of its requests; green does as well, until it takes half.
    const metrics = new FakeMetrics((kind, pool) =>
      kind === 'request-rate'
        ? servedAsSet(split.weights, pool, 100)
        : pool === 'green'
          ? reading(split.weights.green >= 100 ? 45 : 30.5, 5000)
          : reading(30, 90000),
    )
    const io = new RecordingIO()
    const runbook = twoPools('{metric: error-rate, threshold: 1, window: 30, interval: 10, pool: green, relativeTo: stable}')
    const result = await runRunbook(runbook, {control: control({poolWeights: () => split, metrics}), io, signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    const verdicts = result.steps[0].verdicts
    expect(verdicts.filter((v) => v.context === 'green 10%').every((v) => v.outcome === 'pass')).toBe(true)
    expect(verdicts[0]).toMatchObject({value: 30.5, requests: 5000, bound: 31, threshold: 1, baseline: {of: 'pool blue', value: 30, requests: 90000}})
    expect(verdicts.at(-1)).toMatchObject({context: 'green 100%', outcome: 'fail', value: 45, bound: 31})
    expect(result.message).toContain('measured 45.00% of 5,000 requests, bound 31.00% from pool blue 30.00% of 90,000 requests')
    // Both pools were read for each verdict, over the same window (and for the split served, by request rate).
    expect(metrics.reads.filter((r) => r.pool === 'blue' && r.kind === 'error-rate').length).toBe(verdicts.length)
    expect(split.weights).toEqual({blue: 90, green: 10})
  })

  it('relativeTo: before reads the window before each change, once, and judges the bake against it', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    // The error rate is what the weights make it: 10% before green takes traffic, 10.5% at 10%, 12.5% at 50%, 15% at 100%,
    // over 3 points above 10% by the end, and never 3 points above the step before.
    const metrics = new FakeMetrics(() => reading(10 + dns.weights.green / 20, 1000))
    const io = new RecordingIO()
    const steps = `  - action: ramp
    set: green
    schedule: [10, 50, 100]
    bake: 60
    gate: {metric: error-rate, threshold: 3, window: 30, interval: 10, relativeTo: before}
`
    const result = await runRunbook(runbook(steps), {control: control({weights: dns, metrics}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    const baselines = result.steps[0].verdicts.map((v) => `${v.context}: ${v.baseline?.value}`)
    // Each step's baseline is what the weights before it gave: 10 (0%), 10.5 (10%), 12.5 (50%).
    expect([...new Set(baselines)]).toEqual(['green 10%: 10', 'green 50%: 10.5', 'green 100%: 12.5'])
    expect(io.of('progress').filter((e) => e.message.startsWith('measuring the baseline')).length).toBe(3)
  })
})

describe('relative gates in the runbook', () => {
  const refused = (gate: string) => {
    try {
      twoPools(gate)
    } catch (error) {
      return (error as Error).message
    }
    return 'accepted'
  }

  it('resolves stable to the one other pool, and refuses what cannot be judged, by line', () => {
    const gate = twoPools('{metric: error-rate, threshold: 1, pool: green, relativeTo: stable}').steps[0] as {gate: Gate}
    expect(gate.gate).toMatchObject({baseline: {pool: 'blue'}, compare: 'points'})
    expect(refused('{metric: error-rate, threshold: 1, relativeTo: stable}')).toMatch(/test\.yaml:11:\d+.*give the gate a pool/)
    expect(refused('{metric: error-rate, threshold: 1, pool: green, relativeTo: {pool: green}}')).toContain("the baseline is the gate's own pool (green)")
    expect(refused('{metric: error-rate, threshold: 1, pool: green, relativeTo: {pool: red}}')).toContain(
      'no pool named "red" in targets; pools are blue, green',
    )
    expect(refused('{metric: healthy-targets, threshold: 50, minRequests: 10}')).toContain('minRequests counts requests, and healthy-targets measures targets')
    expect(refused('{metric: error-rate, threshold: 1, compare: ratio}')).toContain('the gate has no relativeTo')
    // A ratio may exceed 100: it is not a share.
    expect(refused('{metric: error-rate, threshold: 150, compare: ratio, relativeTo: before}')).toBe('accepted')
  })
})
