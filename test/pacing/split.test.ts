import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {planSplit, splitUnseen} from '../../src/pacing/split.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import type {MetricKind, MetricsPort} from '../../src/ports/control-plane.js'
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

  it('a read that waits out its window (HAProxy’s counters, a pool with no sample a window old) counts towards the next look', async () => {
    // Counters as HAProxy keeps them: totals, each pool served its share of 1,000 rps from the
    // change on. A read is the difference from a sample about a window old, or, with none, from
    // one taken now to another a window later (src/haproxy/metrics.ts). The gate reads only green,
    // so at each change green has a sample a window old (before the change) and blue has none.
    const dns = new FakeDns({blue: 100, green: 0}, 0)
    const totals: Record<string, number> = {blue: 0, green: 0}
    // Sleeps at once, as the reads of both pools wait together: each wakes in turn at its time,
    // the counters running on meanwhile.
    const sleeping: Array<{at: number; wake: () => void}> = []
    const clock = {
      t: 0,
      now: () => clock.t,
      sleep: (seconds: number) =>
        new Promise<void>((wake) => {
          sleeping.push({at: clock.t + seconds, wake})
          setImmediate(() => {
            sleeping.sort((a, b) => a.at - b.at)
            const next = sleeping.shift()
            if (!next) return
            const sum = Object.values(dns.weights).reduce((a, b) => a + b, 0)
            for (const pool of Object.keys(totals)) totals[pool] += ((dns.weights[pool] ?? 0) / sum) * 1000 * Math.max(0, next.at - clock.t)
            clock.t = Math.max(clock.t, next.at)
            next.wake()
          })
        }),
    }
    const samples = new Map<string, Array<{at: number; requests: number}>>()
    const sample = (key: string) => {
      const s = {at: clock.t, requests: key === 'all' ? totals.blue + totals.green : totals[key]}
      samples.set(key, [...(samples.get(key) ?? []), s])
      return s
    }
    const metrics: MetricsPort = {
      label: 'counters',
      async read(kind: MetricKind, w: number, pool?: string) {
        // Every kind from the same counters, as HAProxy's backend row: a gate's read of green samples green.
        const key = pool ?? 'all'
        const start = clock.t - w
        const fits = (samples.get(key) ?? []).filter((x) => x.at >= start - w / 4 && x.at <= start + w / 2)
        let then = fits.sort((a, b) => Math.abs(a.at - start) - Math.abs(b.at - start))[0]
        let now = sample(key)
        if (!then) {
          then = now
          for (let k = 0; k < 4; k++) {
            await clock.sleep(w / 4)
            now = sample(key)
          }
        }
        const requests = now.requests - then.requests
        return {value: kind === 'request-rate' ? requests / (now.at - then.at) : 0.1, requests}
      },
    }
    const io = new RecordingIO()
    const result = await runRunbook(book(dnsTargets), {control: control({weights: dns, metrics, clock}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    const seen = io
      .of('progress')
      .map((e) => /, (\d+) s after the change, baking/.exec(e.message)?.[1])
      .filter((s) => s !== undefined)
      .map(Number)
    // 0 → 10%: nothing sampled yet, both pools' reads wait out the window together: seen at 10 s.
    // 10 → 50%: the first look straddles the change (green's sample from before it) while blue's
    // waits out its window; the next comes a second later, on the samples the first took, all after
    // the change: 11 s. (Waiting a whole window after the first look instead, it found no sample a
    // window old, waited out another, and saw the split 30 s after the change.)
    // 50 → 100%: blue, waited out, serves nothing, so the first look sees all of it on green: 10 s.
    expect(seen).toEqual([10, 11, 10])
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
