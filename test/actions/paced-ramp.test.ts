import {describe, expect, it} from 'vitest'
import {ramp} from '../../src/actions/ramp/ramp.js'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {RampStep} from '../../src/actions/ramp/schema.js'
import type {MetricKind} from '../../src/ports/control-plane.js'
import {preflight} from '../../src/live/preflight.js'
import {control, FakeClock, FakeDns, FakeGroup, FakeMetrics, RecordingIO} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

/** A runbook ramping green by `schedule: auto`, with green's capacity stated or not. */
function pacedRunbook(pace: string, capacity: number | null) {
  return parseRunbook(
    'paced.yaml',
    `name: paced
targets:
  dns: {zone: Z1, record: app.example.com., ttl: 60, sets: {blue: blue, green: green}}
  targetGroups: {blue: arn:blue, green: arn:green}
${capacity === null ? '' : `  capacityPerTarget: {green: ${capacity}}\n`}  metrics: {source: cloudwatch, loadBalancer: app/test/1}
steps:
  - action: ramp
    set: green
    schedule: auto
${pace ? `    pace: ${pace}\n` : ''}    bake: 60
    gate: {metric: error-rate, threshold: 1, window: 30, interval: 10, successes: 3, pool: green}
`,
  )
}

const ids = (n: number) => Array.from({length: n}, (_, i) => `g${i}`)

function setup(opts: {demand: number; targets?: number; latency?: (green: number) => number; errors?: (green: number) => number}) {
  const dns = new FakeDns({blue: 100, green: 0})
  const green = new FakeGroup('green', ids(opts.targets ?? 10))
  const clock = new FakeClock()
  const metrics = new FakeMetrics((kind: MetricKind, pool?: string) => {
    // The split is served as set (a load balancer's): each pool its share of the demand.
    if (kind === 'request-rate')
      return pool === 'green' ? (opts.demand * dns.weights.green) / 100 : pool === 'blue' ? (opts.demand * dns.weights.blue) / 100 : opts.demand
    if (kind === 'latency-p99') return opts.latency?.(dns.weights.green) ?? 100
    return opts.errors?.(dns.weights.green) ?? 0.1
  })
  const io = new RecordingIO()
  return {dns, green, clock, io, plane: control({weights: dns, metrics, clock, pools: new Map([['green', green]])})}
}

const progress = (io: RecordingIO) => io.of('progress').map((e) => e.message)

describe('ramp with schedule: auto', () => {
  it('steps to the largest share the receiving pool can take, within maxStep', async () => {
    // 10 × 200 rps = 2,000, 1,600 with 20% headroom, against 1,000 rps: room for it all; maxStep 50.
    const s = setup({demand: 1000})
    const result = await runRunbook(pacedRunbook('', 200), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(s.dns.applied.map((w) => w.green)).toEqual([50, 100])
    expect(progress(s.io)[0]).toBe(
      'paced to 50%: green: 10 targets in rotation × 200 rps = 2,000 rps now; 50% of 1,000 rps of demand asks it for 500 rps of the 1,600 rps with 20% headroom',
    )
  })

  it('steps in what the pool can take, counting targets in slow start at their share, and holds with the numbers when it can take no more', async () => {
    // 10 × 50 = 500 rps, 400 usable, against 1,000: 40%; then no room for 45%.
    const s = setup({demand: 1000})
    const result = await runRunbook(pacedRunbook('{wait: 60}', 50), {control: s.plane, io: s.io, signal: noAbort()})
    expect(s.dns.applied.map((w) => w.green)).toEqual([40])
    expect(result.outcome).toBe('held')
    expect(result.message).toContain(
      'holding at 40% after waiting 60 s for room: green: 10 targets in rotation × 50 rps = 500 rps now; 45% of 1,000 rps of demand would ask it for 450 rps, more than the 400 rps with 20% headroom',
    )
    expect(result.message).toContain('holding at green 40% (blue=60 green=40)')
    expect(s.dns.weights).toEqual({blue: 60, green: 40})
  })

  it('waits for targets warming up, and goes on when they have', async () => {
    const s = setup({demand: 1000, targets: 4})
    // Four targets just back, at a tenth of their weight: 4 × 0.1 × 500 = 200, 160 usable: 16%.
    for (const id of ids(4)) s.green.warmth.set(id, 0.1)
    // Their slow start ends two minutes in.
    const list = s.green.targets.bind(s.green)
    s.green.targets = async () => {
      if (s.clock.t >= 120) s.green.warmth.clear()
      return list()
    }
    const result = await runRunbook(pacedRunbook('{handshakeCost: 4, minStep: 20}', 500), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    // Warm: 2,000 rps, 1,600 usable against 1,000; with handshakes at 4×, from 0: 1.6 / 4 = 40%; from 40:
    // (1.6 + 3 × 0.4) / 4 = 70%; from 70: (1.6 + 3 × 0.7) / 4 = 92.5%; from 92: past 100.
    expect(s.dns.applied.map((w) => w.green)).toEqual([40, 70, 92, 100])
    expect(progress(s.io).some((m) => m.startsWith('waiting for room at 0% (0 of 300 s): green: 4 targets in rotation (4 warming)'))).toBe(true)
  })

  it('probes where no capacity is stated: doubles while the pool stays in its band, halves on a rise', async () => {
    // Latency doubles once green carries 30% or more.
    const s = setup({demand: 1000, latency: (g) => (g >= 30 ? 200 : 100)})
    const result = await runRunbook(pacedRunbook('{minStep: 5, maxStep: 40}', null), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    // 5, +10, +20 = 35 (a rise: halve to 10), +10 = 45 (in band at 200 ms: 20), +40 = 105 → 100.
    expect(s.dns.applied.map((w) => w.green)).toEqual([5, 15, 35, 45, 65, 100])
    expect(progress(s.io)).toContain(
      "green's p99 latency rose from 100 to 200 ms, more than 25%: the next step is 10 points, after a bake at 35% and once green has stopped rising",
    )
  })

  it('a gate failure on a paced step goes back to the last step that passed, as a written ramp does', async () => {
    const s = setup({demand: 1000, errors: (g) => (g > 50 ? 5 : 0.1)})
    const result = await runRunbook(pacedRunbook('', 200), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('gate-failed')
    expect(s.dns.weights).toEqual({blue: 50, green: 50})
  })

  it('sizes shares by what the pool receives per point once it carries some, not by a total swollen with retries from elsewhere', async () => {
    const s = setup({demand: 1000})
    // The balancer counts 3,000 rps, two thirds of them clients retrying a maintenance page; green
    // receives 10 rps a point of share.
    const metrics = new FakeMetrics((kind, pool) =>
      kind !== 'request-rate' ? 0.1 : pool === 'green' ? s.dns.weights.green * 10 : pool === 'blue' ? s.dns.weights.blue * 10 : 3000,
    )
    const result = await runRunbook(pacedRunbook('{maxStep: 30, to: 80}', 100), {control: {...s.plane, metrics}, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    // From 0 only the total can be read: 800 / 3,000 = 26%; then 800 / 1,000 = 80%, within 30 points: 56, 80.
    expect(s.dns.applied.map((w) => w.green)).toEqual([26, 56, 80])
    expect(progress(s.io)).toContain(
      "paced to 56%: green: 10 targets in rotation × 100 rps = 1,000 rps now; 56% of 1,000 rps of demand (green's 260 rps at 26%, scaled to the whole) asks it for 560 rps of the 800 rps with 20% headroom",
    )
  })

  it('holds rather than guess when demand cannot be read', async () => {
    const s = setup({demand: 1000})
    const metrics = new FakeMetrics((kind) => (kind === 'request-rate' ? null : 0.1))
    const result = await runRunbook(pacedRunbook('', 200), {control: {...s.plane, metrics}, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('held')
    expect(result.message).toContain('no request-rate data over the last 30 s to pace by (missing data is never room)')
    expect(s.dns.applied).toEqual([])
  })

  it('plans the rule it paces by, and refuses bounds that cannot hold', () => {
    const step = pacedRunbook('{headroom: 30, handshakeCost: 4}', 200).steps[0] as RampStep
    expect(ramp.title(step)).toBe("Ramp green: paced to 100% on green's room (5–50 points a step)")
    const lines = ramp.plan(step, {targets: pacedRunbook('', 200).targets})
    expect(lines.join('\n')).toContain(
      "schedule auto: each step is the largest green can take now: its targets in rotation × 200 rps × each one's warm-up, less 30% headroom, against the demand over the gate's window (once green has a share, what it receives, scaled to the whole), with the handshakes of what moved at 4× a request (all at once)",
    )
    const probing = pacedRunbook('', null).steps[0] as RampStep
    expect(ramp.plan(probing, {targets: pacedRunbook('', null).targets}).join('\n')).toContain('so it probes')
    expect(() => pacedRunbook('{minStep: 30, maxStep: 20}', 200)).toThrow(/paced\.yaml:\d+:\d+.*expected minStep at most maxStep \(20 points\), got 30/s)
  })

  it('the live plan says what the ramp would do if it started now', async () => {
    const s = setup({demand: 1000})
    for (const id of ids(10).slice(0, 4)) s.green.warmth.set(id, 0.5)
    const {plan} = await preflight(pacedRunbook('', 200), s.plane)
    // 6 warm + 4 at half × 200 = 1,600 rps, 1,280 usable: room for 100%, bounded by maxStep.
    expect(plan[0].details).toContain(
      'now: its first step would be to 50%: green: 10 targets in rotation (4 warming) × 200 rps = 1,600 rps now, 2,000 rps warm; 50% of 1,000 rps of demand asks it for 500 rps of the 1,280 rps with 20% headroom',
    )
    const probing = await preflight(pacedRunbook('', null), s.plane)
    expect(probing.plan[0].details).toContain('now: it would probe, a first step of 5 points to 5%')
  })
})
