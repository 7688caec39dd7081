import {describe, expect, it} from 'vitest'
import {lift} from '../../src/actions/lift/lift.js'
import type {LiftStep} from '../../src/actions/lift/schema.js'
import {runRunbook} from '../../src/engine/engine.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {control, FakeClock, FakeMetrics, FakeRules, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('lift', () => {
  it('removes the rule for that type only, as one recorded change', async () => {
    const rules = new FakeRules()
    const sync = {type: 'sync', paths: ['/sync/*'], headers: {}, retryAfterSeconds: 300}
    const search = {type: 'search', paths: ['/search/*'], headers: {}, retryAfterSeconds: 60}
    rules.rules = [sync, search]
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: lift, type: sync}\n`), {control: control({restrictions: rules}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({
      action: 'lift',
      status: 'done',
      title: 'Lift the restriction on sync traffic',
      message: 'sync traffic is let through again',
    })
    expect(rules.rules).toEqual([search])
    const intents = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'intent')
      .map((e) => e.mutation)
    expect(intents).toEqual([expect.objectContaining({kind: 'lift', resource: 'listener L1', before: sync, after: null})])
  })

  it('is idempotent: a type that is not restricted is left alone', async () => {
    const rules = new FakeRules()
    let removed = 0
    rules.remove = async () => {
      removed++
      return false
    }
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: lift, type: sync}\n`), {control: control({restrictions: rules}), io, signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'nothing to lift: sync is not restricted'})
    expect(removed).toBe(0)
    expect(io.of('mutation')).toEqual([])
  })
})

/** A lift of lookup by `schedule: auto` on HAProxy, its gate on cafe. */
function pacedLift(pace = '', gate = '{metric: error-rate, threshold: 2, window: 30, interval: 10, successes: 3, pool: cafe}') {
  return parseRunbook(
    'paced-lift.yaml',
    `name: paced-lift
targets:
  haproxy: {socket: /run/haproxy/admin.sock, backends: {cafe: cafe}, restrictMap: /etc/haproxy/restricted.map}
  metrics: {source: haproxy}
steps:
  - action: lift
    type: lookup
    schedule: auto
${pace ? `    pace: ${pace}\n` : ''}    bake: 60
    gate: ${gate}
`,
  )
}

/** Rules whose add replaces the type's entry, as HAProxy's map does. */
function replacingRules(): FakeRules {
  const rules = new FakeRules()
  rules.rules = [{type: 'lookup', paths: ['/routing/lookup/'], headers: {}, retryAfterSeconds: 60}]
  rules.add = async (r) => {
    rules.rules = [...rules.rules.filter((x) => x.type !== r.type), r]
  }
  return rules
}

const letBack = (rules: FakeRules) => 100 - (rules.rules.find((r) => r.type === 'lookup')?.share ?? (rules.rules.length ? 100 : 0))

describe('lift with schedule: auto', () => {
  it('probes the gate pool: doubles its step while the pool stays in its band, halves on a rise, goes on once it has stopped rising', async () => {
    const rules = replacingRules()
    const clock = new FakeClock()
    // The pool's p99 triples once more than 40% of lookups are let back, and stays there.
    const metrics = new FakeMetrics((kind) => (kind === 'latency-p99' ? (letBack(rules) > 40 ? 300 : 100) : kind === 'request-rate' ? 500 : 0.1))
    const io = new RecordingIO()
    const shares: number[] = []
    const add = rules.add.bind(rules)
    rules.add = async (r) => {
      shares.push(r.share!)
      return add(r)
    }
    const result = await runRunbook(pacedLift(), {control: control({restrictions: rules, metrics, clock}), io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    // Let back 5, +10 = 15, +20 = 35, +40 = 75 (a rise: halve to 20), +20 = 95, +40 → 100 (lifted).
    expect(shares).toEqual([95, 85, 65, 25, 5])
    expect(rules.rules).toEqual([])
    expect(result.steps[0].title).toBe('Lift the restriction on lookup: probing to 100% on cafe (5–50 points a step)')
    expect(result.steps[0].message).toBe('lookup traffic is let through again, by degrees: 5% → 15% → 35% → 75% → 95% → 100%')
    expect(io.of('progress').map((e) => e.message)).toContain(
      "cafe's p99 latency rose from 100 to 300 ms, more than 25%: the next step is 20 points, after a bake at 75% and once cafe has stopped rising",
    )
  })

  it('holds where it is when the pool keeps rising after a step, past the wait', async () => {
    const rules = replacingRules()
    const clock = new FakeClock()
    // Past 20% let back, the p99 doubles every minute: the pool never settles.
    let rising: number | null = null
    const metrics = new FakeMetrics((kind) => {
      if (kind !== 'latency-p99') return kind === 'request-rate' ? 500 : 0.1
      if (letBack(rules) <= 20) return 100
      rising ??= clock.t
      return 100 * 2 ** ((clock.t - rising) / 60 + 1)
    })
    const result = await runRunbook(pacedLift('{wait: 120}'), {
      control: control({restrictions: rules, metrics, clock}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(result.outcome).toBe('held')
    expect(result.steps[0].message).toMatch(
      /^holding at 35% after waiting 1\d\d s for cafe to stop rising: cafe's p99 latency rose from \d+ to \d+ ms, more than 25%; holding at lookup \(65% turned away\)$/,
    )
    expect(letBack(rules)).toBe(35)
  })

  it('is refused without a gate pool to probe, with a written schedule bounded by pace, or ending short of 100', () => {
    expect(() => pacedLift('', '{metric: error-rate, threshold: 2}')).toThrow(
      /steps\[0\]\.gate: a lift with `schedule: auto` probes the pool its gate reads: give it a gate with a `pool`/,
    )
    expect(() => pacedLift('{to: 60}')).toThrow(/steps\[0\]\.pace\.to: expected a lift to end with the type let back whole \(100\), got 60/)
    const written = (pacedLift().source as {text: string}).text.replace('schedule: auto', 'schedule: [50, 100]\n    pace: {minStep: 5}')
    expect(() => parseRunbook('written.yaml', written)).toThrow(/steps\[0\]\.pace: pace bounds a ramp whose schedule is `auto`/)
  })

  it('plans why it probes: the type’s demand cannot be read', () => {
    const step = pacedLift().steps[0] as LiftStep
    const plan = lift.plan(step, {targets: pacedLift().targets}).join('\n')
    expect(plan).toContain('no source sluice reads counts the lookup requests a restriction turns away')
    expect(plan).toContain('so it probes: steps from 5 points, doubling while cafe')
  })
})
