import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {planSplit, splitUnseen} from '../../src/pacing/split.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import type {MetricKind} from '../../src/ports/control-plane.js'
import {control, FakeClock, FakeDns, FakeMetrics, RecordingIO} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

const book = (targets: string, ramp = '') =>
  parseRunbook(
    'split.yaml',
    `name: split
targets:
${targets}
steps:
  - action: ramp
    set: green
    schedule: [10, 50, 100]
    bake: 60
${ramp}    gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 3, pool: green}
`,
  )

const dnsTargets = `  dns: {zone: Z1, record: app.example.com., ttl: 60, sets: {blue: blue, green: green}}
  targetGroups: {blue: arn:blue, green: arn:green}
  metrics: {source: cloudwatch, loadBalancer: app/test/1}`

describe('the split served', () => {
  it('is measured only where the runbook’s metrics count each pool, in rehearsal as live', () => {
    const targets = book(dnsTargets).targets
    expect(splitUnseen(targets, ['blue', 'green'])).toBeNull()
    const one = book(dnsTargets.replace('{blue: arn:blue, green: arn:green}', '{green: arn:green}')).targets
    expect(splitUnseen(one, ['blue', 'green'])).toBe('blue: no target group in targets.targetGroups to count its requests by')
    expect(planSplit(one, {blue: 'blue', green: 'green'}, undefined)).toMatchObject({kind: 'unseen'})
    expect(planSplit(targets, {blue: 'blue', green: 'green'}, {tolerance: 2})).toMatchObject({kind: 'measure', rule: {tolerance: 2, deadline: 300}})
  })

  it('the bake starts once the clients have moved: each change waits until the pools serve its split', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    const clock = new FakeClock()
    // Clients follow a change over 60 s (the TTL): green serves the set share only a minute later.
    let from = 0
    let to = 0
    let changedAt = 0
    const apply = dns.applyWeights.bind(dns)
    dns.applyWeights = async (w) => {
      from = to
      to = w.green
      changedAt = clock.t
      await apply(w)
    }
    const served = () => from + (to - from) * Math.min(1, (clock.t - changedAt) / 60)
    const metrics = new FakeMetrics((kind: MetricKind, pool?: string) => {
      if (kind !== 'request-rate') return 0.1
      return pool === 'green' ? served() * 10 : pool === 'blue' ? (100 - served()) * 10 : 1000
    })
    const io = new RecordingIO()
    const result = await runRunbook(book(dnsTargets), {control: control({weights: dns, metrics, clock}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    const lines = io.of('progress').map((e) => e.message)
    // Looked at every 10 s: 0 → 10 is within 5 points once green serves 5%, 30 s in; 10 → 50 once
    // it serves 45%, past 52.5 s: the look at 60 s.
    expect(lines).toContain('green at 10% (blue=90 green=10); green served 5% of 1,000 rps against 10% set, 30 s after the change, baking 60 s')
    expect(lines).toContain('green at 50% (blue=50 green=50); green served 50% of 1,000 rps against 50% set, 60 s after the change, baking 60 s')
    // The bake's verdicts begin after the split was seen: the first an interval after the look at 60 s.
    const changes = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.at)
    const first = result.steps[0].verdicts.find((v) => v.context === 'green 50%')!
    expect(first.at - changes[1]).toBe(70)
  })

  it('a change the data plane never serves holds the ramp, back on the last weights that passed', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    // The servers never see green past 10%: a change held back after the first step.
    const metrics = new FakeMetrics((kind: MetricKind, pool?: string) => {
      if (kind !== 'request-rate') return 0.1
      const g = Math.min(dns.weights.green, 10)
      return pool === 'green' ? g * 10 : (100 - g) * 10
    })
    const result = await runRunbook(book(dnsTargets, '    split: {deadline: 120}\n'), {
      control: control({weights: dns, metrics}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.outcome).toBe('held')
    expect(result.message).toContain(
      'green 50%: the split set did not reach the data plane within 120 s: green served 10% of 1,000 rps against 50% set, 120 s after the change (±5 points); weights back to green 10%',
    )
    expect(dns.weights).toEqual({blue: 90, green: 10})
  })
})

describe('the split with no traffic', () => {
  it('a change no request has reached cannot be seen: the bake goes on at once, saying so', async () => {
    const dns = new FakeDns({blue: 100, green: 0})
    // The gate's error rate reads a value; the split's request rates have nothing to count.
    const metrics = new FakeMetrics((kind: MetricKind) => (kind === 'request-rate' ? null : 0.1))
    const io = new RecordingIO()
    const result = await runRunbook(book(dnsTargets), {control: control({weights: dns, metrics}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    expect(io.of('progress').map((e) => e.message)).toContain(
      'green at 10% (blue=90 green=10); no request counted on blue or green over the last 10 s, so the split served cannot be seen, baking 60 s',
    )
  })
})

describe('the split served, rehearsed', () => {
  it('behind a 60 s TTL the simulated clients move over the TTL, and each bake starts once they have', async () => {
    const runbook = parseRunbook(
      'ttl.yaml',
      `name: ttl
targets:
  dns: {zone: Z1, record: api.example.com., ttl: 60, sets: {api-east: east, api-west: west}}
  targetGroups: {east: arn:east, west: arn:west}
  metrics: {source: cloudwatch, loadBalancer: app/api/1}
rehearsal: {scenario: two-regions, setup: cap-shed-slow-start, startAt: 60}
steps:
  - action: ramp
    set: api-west
    schedule: [5, 25, 50]
    bake: 60
    gate: {metric: error-rate, threshold: 1, window: 60, interval: 15, pool: west}
`,
    )
    const io = new RecordingIO(true)
    const {run} = await rehearse(runbook, {io, signal: noAbort(), operator: 't'}, {pace: null, seeds: 1, randomness: 'none'})
    expect(run.outcome, run.message).toBe('completed')
    const seen = io.of('progress').flatMap((e) => {
      const m = /west served ([\d.]+)% of [\d,]+ rps against (\d+)% set, (\d+) s after the change/.exec(e.message)
      return m ? [{served: Number(m[1]), set: Number(m[2]), seconds: Number(m[3])}] : []
    })
    expect(seen.map((s) => s.set)).toEqual([5, 25, 50])
    // Clients move as their answers expire, evenly over the 60 s: each step is seen within half of
    // itself (and 5 points) only once a good part of the TTL has passed, never at the first look (15 s).
    for (const s of seen) expect(s.seconds).toBeGreaterThanOrEqual(30)
    for (const s of seen) expect(s.served).toBeLessThanOrEqual(s.set)
    // Each step's first verdict comes an interval after its split was seen, not an interval after its change.
    const changes = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.at)
    const firsts = [5, 25, 50].map((p) => run.steps[0].verdicts.find((v) => v.context === `api-west ${p}%`)!.at)
    firsts.forEach((at, k) => expect(at - changes[k]).toBe(seen[k].seconds + 15))
  })
})
