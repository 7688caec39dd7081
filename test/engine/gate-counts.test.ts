import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {planRunbook} from '../../src/engine/plan.js'
import {verdictText} from '../../src/format.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {Reading} from '../../src/ports/control-plane.js'
import {control, FakeDns, FakeMetrics, RecordingIO, runbook, servedAsSet} from '../helpers/fakes.js'
import {inputErrorOf} from '../helpers/scenario-files.js'

// judge: counts as a gate in a run, with fake metrics: what it reads (each interval, both pools),
// when it passes, fails and holds, and what it says; and consecutiveFailures beside failureLimit.
// Its error rates over many gates are test/judge/counts-judge.test.ts's.

const noAbort = () => new AbortController().signal
const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`
const rule = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/api/9f0d3a2b1c4e5f67/abcdef0123456789/0123456789abcdef'
const twoPools = (gate: string, schedule = '[10, 50]') =>
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
    schedule: ${schedule}
    bake: 300
    gate: ${gate}
`,
  )

/** Green and blue error at these rates; each 60 s interval holds these requests. */
function pools(split: FakeDns, rates: {green: number; blue: number}, requests = {green: 2_000, blue: 18_000}) {
  return new FakeMetrics((kind, pool): Reading | number => {
    if (kind === 'request-rate') return servedAsSet(split.weights, pool, 100)
    const p = pool === 'green' ? 'green' : 'blue'
    return {value: rates[p], requests: requests[p]}
  })
}

const counts = '{metric: error-rate, threshold: 1, interval: 60, pool: green, relativeTo: stable, judge: counts}'

describe('judge: counts in a run', () => {
  it('reads each interval once for both pools, and passes once the bake is over and the data rule out the margin', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    const metrics = pools(split, {green: 0.5, blue: 0.5})
    const io = new RecordingIO()
    const result = await runRunbook(twoPools(counts), {control: control({poolWeights: () => split, metrics}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    const verdicts = result.steps[0].verdicts
    // Five intervals a bake: too few at first to tell how much the windows vary, or to be 99% sure over
    // eight looks; then sure, and the gate passes once the bake is over.
    expect(verdicts.filter((v) => v.context === 'green 10%').map((v) => v.outcome)).toEqual(['inconclusive', 'inconclusive', 'inconclusive', 'pass', 'pass'])
    expect(verdicts.at(-1)).toMatchObject({requests: 10_000, counts: {margin: 1}, baseline: {of: 'pool blue', requests: 90_000}})
    expect(verdictText(verdicts.at(-1)!)).toMatch(
      /^gate error-rate ≤ pool blue \+ 1 point, 99% sure on the bake's counts \(green\): green 0\.5% of 10,000 against blue 0\.5% of 90,000: (worse|better) by 0\.0 points, margin 1, >99\.9% sure → pass \(green 50%\)$/,
    )
    expect(metrics.reads.filter((r) => r.kind === 'error-rate' && r.pool === 'blue')).toHaveLength(verdicts.length)
  })

  it('fails as soon as the data show the pool worse by more than the margin, saying so in its numbers', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    const metrics = pools(split, {green: 3, blue: 0.5})
    const result = await runRunbook(twoPools(counts), {control: control({poolWeights: () => split, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(exitCodeOf(result.outcome)).toBe(3)
    // It fails at its first fail, inside the bake.
    expect(result.steps[0].verdicts.map((v) => v.outcome)).toEqual(['inconclusive', 'inconclusive', 'inconclusive', 'inconclusive', 'fail'])
    expect(result.message).toMatch(
      /failed at green 10%: green 3\.0% of 10,000 against blue 0\.5% of 90,000: worse by 2\.5 points, margin 1, >99\.9% sure → fail; weights back to the starting weights/,
    )
  })

  it('holds where it is, undoing nothing, when it cannot tell by inconclusiveLimit intervals after the bake', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    // Worse by exactly the margin on a few requests: neither side can be ruled out.
    const metrics = pools(split, {green: 1.5, blue: 0.5}, {green: 200, blue: 1_800})
    const result = await runRunbook(twoPools(counts), {control: control({poolWeights: () => split, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome).toBe('held')
    expect(result.steps[0].verdicts).toHaveLength(8)
    expect(result.message).toMatch(
      /could not tell in 8 looks at green 10% \(last: green 1\.5% of 1,600 against blue 0\.5% of 14,400: .* → inconclusive\); holding where it is for a person to decide; holding at green 10%/,
    )
    // Not put back: nothing showed the share worse.
    expect(split.weights).toEqual({blue: 90, green: 10})
  })

  it('is refused where it cannot judge: another metric, no pool baseline, a ratio, minRequests, a window; confidence needs it', () => {
    const cases: Array<[string, RegExp]> = [
      [
        '{metric: latency-p99, threshold: 50, pool: green, relativeTo: stable, judge: counts}',
        /gate\.judge: judge: counts weighs requests and errors: it judges error-rate, not latency-p99/,
      ],
      [
        '{metric: error-rate, threshold: 1, pool: green, judge: counts}',
        /gate\.judge: judge: counts compares the pool with a baseline: give relativeTo: stable or \{pool: NAME\} \(another pool over the same intervals\), or before/,
      ],
      [
        '{metric: error-rate, threshold: 1, pool: green, relativeTo: before, window: 50, interval: 20, judge: counts}',
        /gate\.window: judge: counts relative to before watches the pool for its window before the change, one look each interval, and needs 3 looks to tell how much they vary: expected a window of at least 3 × 20 s = 60 s, got 50 s/,
      ],
      [
        '{metric: error-rate, threshold: 1, pool: green, relativeTo: before, interval: 30, judge: counts}',
        /gate\.interval: judge: counts relative to before .*: expected a window of at least 3 × 30 s = 90 s, got 60 s/,
      ],
      [
        '{metric: error-rate, threshold: 1.5, pool: green, relativeTo: stable, compare: ratio, judge: counts}',
        /gate\.compare: judge: counts reads its threshold as a margin in points/,
      ],
      [
        '{metric: error-rate, threshold: 1, pool: green, relativeTo: stable, minRequests: 100, judge: counts}',
        /gate\.minRequests: judge: counts weighs every request/,
      ],
      [
        '{metric: error-rate, threshold: 1, pool: green, relativeTo: stable, window: 120, judge: counts}',
        /gate\.window: judge: counts reads each interval once/,
      ],
      ['{metric: error-rate, threshold: 1, pool: green, confidence: 95}', /gate\.confidence: confidence is how sure the counts judge must be/],
    ]
    for (const [gate, message] of cases) expect(inputErrorOf(() => twoPools(gate)).problems.join('\n')).toMatch(message)
  })

  it('relative to before: watches the pool for its window before the change, then fails a bake worse by more than the margin against it', async () => {
    const split = new FakeDns({blue: 50, green: 50}, 0)
    // Green erred on 0.5% before the change; at 75% it errs on 3%.
    const metrics = new FakeMetrics((kind, pool): Reading | number => {
      if (kind === 'request-rate') return servedAsSet(split.weights, pool, 100)
      return {value: split.weights.green > 50 ? 3 : 0.5, requests: 2_000}
    })
    const io = new RecordingIO()
    const gate = '{metric: error-rate, threshold: 1, window: 180, interval: 60, pool: green, relativeTo: before, judge: counts}'
    const result = await runRunbook(twoPools(gate, '[75]'), {control: control({poolWeights: () => split, metrics}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('gate-failed')
    // Three looks at green before anything changed, then one a look: no baseline pool is read.
    const greenReads = metrics.reads.filter((r) => r.kind === 'error-rate')
    expect(greenReads.every((r) => r.pool === 'green')).toBe(true)
    const types = io.events.map((e) => (e.type === 'progress' ? `progress: ${e.message}` : e.type === 'mutation' ? `mutation ${e.mutation.phase}` : e.type))
    const intent = types.indexOf('mutation intent')
    expect(types.slice(0, intent).filter((t) => t.startsWith('progress: '))).toEqual(
      expect.arrayContaining([
        "progress: watching green for 180 s before the change, a look every 60 s: the counts judge's baseline",
        'progress: baseline: 1 of 3 intervals of green before the change',
        'progress: baseline: 3 of 3 intervals of green before the change',
      ]),
    )
    expect(result.steps[0].verdicts.at(-1)).toMatchObject({outcome: 'fail', baseline: {of: 'before the step', requests: 6_000}})
    expect(result.message).toMatch(/green 3\.0% of [\d,]+ against green before the step 0\.5% of 6,000: worse by 2\.5 points, margin 1, [>\d.]+% sure → fail/)
    expect(split.weights).toEqual({blue: 50, green: 50})
    // Put back at once: the revert watches nothing before it.
    expect(io.events.filter((e) => e.type === 'baseline')).toHaveLength(1)
  })

  it('relative to before: passes a pool that errs as it did before the change, once the bake is over', async () => {
    const split = new FakeDns({blue: 50, green: 50}, 0)
    const metrics = new FakeMetrics((kind, pool): Reading | number =>
      kind === 'request-rate' ? servedAsSet(split.weights, pool, 100) : {value: 0.5, requests: 2_000},
    )
    const gate = '{metric: error-rate, threshold: 1, window: 180, interval: 60, pool: green, relativeTo: before, judge: counts}'
    const result = await runRunbook(twoPools(gate, '[75]'), {control: control({poolWeights: () => split, metrics}), io: new RecordingIO(), signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    expect(verdictText(result.steps[0].verdicts.at(-1)!)).toMatch(
      /green 0\.5% of 10,000 against green before the step 0\.5% of 6,000: (worse|better) by 0\.0 points, margin 1, [>\d.]+% sure → pass/,
    )
    expect(split.weights).toEqual({blue: 25, green: 75})
  })

  it('relative to before: the baseline is journalled before the change, and a resume that finds the change made judges against it, not the pool after it', async () => {
    const gate = '{metric: error-rate, threshold: 1, window: 180, interval: 60, pool: green, relativeTo: before, judge: counts}'
    let rate = 0.5
    const split = new FakeDns({blue: 50, green: 50}, 0)
    const metrics = new FakeMetrics((kind, pool): Reading | number =>
      kind === 'request-rate' ? servedAsSet(split.weights, pool, 100) : {value: rate, requests: 2_000},
    )
    const first = new RecordingIO()
    await runRunbook(twoPools(gate, '[75]'), {control: control({poolWeights: () => split, metrics}), io: first, signal: noAbort()})
    const baseline = first.events.find((e) => e.type === 'baseline')
    const intent = first.events.find((e) => e.type === 'mutation' && e.mutation.phase === 'intent')
    expect(baseline).toMatchObject({
      step: 0,
      baseline: {
        intervals: [
          {requests: 2_000, errors: 10},
          {requests: 2_000, errors: 10},
          {requests: 2_000, errors: 10},
        ],
      },
    })
    expect(first.events.indexOf(baseline!)).toBeLessThan(first.events.indexOf(intent!))
    // Killed in the bake, green now at 3%: the resume finds green at 75% and judges it against the 0.5% from before.
    rate = 3
    const resumed = new RecordingIO()
    const mutation = intent!.type === 'mutation' ? intent.mutation : null
    const result = await runRunbook(twoPools(gate, '[75]'), {
      control: control({poolWeights: () => split, metrics}),
      io: resumed,
      signal: noAbort(),
      resume: {fromStep: 0, mutations: [{...mutation!, outcome: {ok: true}}], baseline: baseline!.type === 'baseline' ? baseline!.baseline : undefined},
    })
    expect(result.outcome, result.message).toBe('gate-failed')
    expect(result.message).toMatch(/green 3\.0% of [\d,]+ against green before the step 0\.5% of 6,000/)
    expect(resumed.events.some((e) => e.type === 'baseline')).toBe(false)
  })

  it("relative to before: the plan says which changes the watch comes before and the time it adds: a ramp's every share", () => {
    const before = '{metric: error-rate, threshold: 1, interval: 60, window: 180, pool: green, relativeTo: before, judge: counts}'
    const watch = (schedule: string) => planRunbook(twoPools(before, schedule))[0].details.find((l) => l.startsWith('gate:'))
    expect(watch('[10, 25, 50, 100]')).toContain('first watches green for 180 s before each of its 4 changes (3 intervals each; 720 s in all), its baseline')
    expect(watch('[50]')).toContain('first watches green for 180 s before the change (3 intervals), its baseline')
    const gateLine = (step: string) => planRunbook(runbook(step))[0].details.find((l) => l.startsWith('gate:'))
    expect(gateLine(`  - action: ramp\n    set: green\n    schedule: auto\n    bake: 300\n    gate: ${before}\n`)).toContain(
      'first watches green for 180 s before each of its changes (3 intervals each, 180 s more for each; the pace decides how many), its baseline',
    )
    expect(
      gateLine(`  - action: cycle\n    pool: blue\n    batch: 2\n    restart: {command: [restart, '{id}']}\n    bake: 300\n    gate: ${before}\n`),
    ).toContain('first watches green for 180 s before each batch (3 intervals each, 180 s more for each batch), its baseline')
  })

  it('relative to before: a pool that served nothing before the change stops the step before it changes anything, saying why', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    const metrics = new FakeMetrics((kind, pool): Reading | number =>
      kind === 'request-rate' ? servedAsSet(split.weights, pool, 100) : split.weights.green > 0 ? {value: 0.5, requests: 2_000} : {value: null, requests: 0},
    )
    const io = new RecordingIO()
    const gate = '{metric: error-rate, threshold: 1, window: 180, interval: 60, pool: green, relativeTo: before, judge: counts}'
    const result = await runRunbook(twoPools(gate, '[10]'), {control: control({poolWeights: () => split, metrics}), io, signal: noAbort()})
    expect(result.outcome).toBe('failed')
    expect(result.message).toMatch(
      /green had requests in 0 of the 3 intervals of 60 s before the change \(no requests\), and the counts judge needs 3: nothing to compare the bake with, and nothing was changed/,
    )
    expect(io.events.some((e) => e.type === 'mutation')).toBe(false)
    expect(split.weights).toEqual({blue: 100, green: 0})
  })

  it('is refused on a schedule that ends at 100%, where the baseline in the same split takes no traffic; a schedule short of it, or a threshold gate, is not', () => {
    const counts = '{metric: error-rate, threshold: 1, interval: 30, pool: green, relativeTo: stable, judge: counts}'
    expect(inputErrorOf(() => twoPools(counts, '[10, 50, 100]')).problems.join('\n')).toMatch(
      /steps\[0\]\.schedule: judge: counts weighs green against blue over the same intervals, and at green 100% blue takes no traffic: this schedule's last step could only hold\. End this ramp below 100, and take the last step in a ramp of its own behind a threshold gate/,
    )
    expect(() => twoPools(counts, '[10, 50, 99]')).not.toThrow()
    expect(() => twoPools('{metric: error-rate, threshold: 1, pool: green, relativeTo: stable}', '[10, 50, 100]')).not.toThrow()
    expect(() => twoPools('{metric: error-rate, threshold: 1, pool: green}', '[10, 50, 100]')).not.toThrow()
  })

  it('on Prometheus, needs the request-rate query it counts requests by', () => {
    const prometheus = (queries: string) => `name: test
targets:
  haproxy: {socket: /run/haproxy.sock, backends: {blue: blue, green: green}, rampMap: /etc/haproxy/ramp.map}
  metrics: {source: prometheus, url: 'http://127.0.0.1:9090', queries: {${queries}}}
steps:
  - action: weighted-target-groups
    pool: green
    schedule: [10]
    bake: 60
    gate: {metric: error-rate, threshold: 1, interval: 30, pool: green, relativeTo: stable, judge: counts}
`
    expect(inputErrorOf(() => parseRunbook('p.yaml', prometheus("error-rate: 'rate(x[$window])'"))).problems.join('\n')).toMatch(
      /targets\.metrics\.queries: expected a query for request-rate: steps\[0\] reads it/,
    )
    expect(() => parseRunbook('p.yaml', prometheus("error-rate: 'e[$window]', request-rate: 'r[$window]'"))).not.toThrow()
  })
})

describe('consecutiveFailures beside failureLimit', () => {
  const threshold = (more: string) => `{metric: error-rate, threshold: 2, window: 60, interval: 30, successes: 1, pool: green${more}}`

  it('lets one bad window pass, and fails at that many in a row', async () => {
    const split = new FakeDns({blue: 100, green: 0}, 0)
    let look = 0
    // Bad, good, bad, good, ... then two bad in a row at the second share.
    const metrics = new FakeMetrics((kind, pool): Reading | number => {
      if (kind === 'request-rate') return servedAsSet(split.weights, pool, 100)
      if (pool !== 'green') return {value: 0.5, requests: 10_000}
      look++
      const bad = split.weights.green === 10 ? look % 2 === 1 : true
      return {value: bad ? 5 : 0.5, requests: 1_000}
    })
    const result = await runRunbook(twoPools(threshold(', consecutiveFailures: 2')), {
      control: control({poolWeights: () => split, metrics}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(exitCodeOf(result.outcome)).toBe(3)
    const at10 = result.steps[0].verdicts.filter((v) => v.context === 'green 10%')
    expect(at10.filter((v) => v.outcome === 'fail').length).toBeGreaterThan(1)
    expect(result.message).toMatch(/failed at green 50% \(2 failed verdicts in a row\)/)
    // The plan says so.
    expect(twoPools(threshold(', consecutiveFailures: 2')).steps[0]).toMatchObject({gate: {consecutiveFailures: 2, failureLimit: 100}})
  })
})
