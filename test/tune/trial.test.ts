import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {GateVerdict} from '../../src/ports/io.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {allowsSlowMinority, groundOf, runTrial, tuneCapacitySpread, tuneSlowMinority, variantScenario, type Trial} from '../../src/tune/trial.js'
import {gateMargins} from '../../src/tune/tune.js'
import {RecordingIO} from '../helpers/fakes.js'

const outlook = loadRunbookFile('runbooks/outlook-staged-return.yaml')

describe('tune: one rehearsal of a candidate', () => {
  it('varies the seed and scales demand, a constant rate and a curve alike; off the scenario own seed, servers that do not differ get a spread and requests arrive as a Poisson process', () => {
    const flat = loadScenario('outlook-recovery').scenario
    const varied = variantScenario(flat, {seed: 7, demandFactor: 1.1, slowMinority: null})
    expect(varied.seed).toBe(7)
    expect(varied.demand.rps).toBeCloseTo(1650)
    expect(varied.pools.map((p) => p.capacitySpread)).toEqual([tuneCapacitySpread, 0])
    // outlook-recovery says nothing of its arrivals: its randomness decides them (randomnessOf).
    expect([flat.demand.arrivals, varied.demand.arrivals]).toEqual([undefined, 'poisson'])
    expect({...varied, seed: flat.seed, demand: flat.demand, pools: flat.pools}).toEqual(flat)
    // The scenario's own seed is the scenario as written.
    expect(variantScenario(flat, {seed: flat.seed, demandFactor: 1, slowMinority: null})).toEqual(flat)
    // A pool with a spread of its own keeps it.
    const cafe = loadScenario('cafe-2024').scenario
    expect(variantScenario(cafe, {seed: 9, demandFactor: 1, slowMinority: null}).pools[0].capacitySpread).toBe(0.2)
    const curved = {
      ...flat,
      demand: {
        ...flat.demand,
        rps: undefined,
        curve: [
          [0, 1000],
          [300, 1500],
        ] as Array<[number, number]>,
      },
    }
    expect(variantScenario(curved, {seed: 1, demandFactor: 0.9, slowMinority: null}).demand.curve).toEqual([
      [0, 900],
      [300, 1350],
    ])
  })

  it('makes a tenth of the servers slow in each pool of ten or more that has no slow minority of its own, and only there', () => {
    const flat = loadScenario('outlook-recovery').scenario
    expect(allowsSlowMinority(flat)).toBe(true)
    const slow = variantScenario(flat, {seed: flat.seed, demandFactor: 1, slowMinority: tuneSlowMinority})
    expect(slow.pools.map((p) => [p.name, p.slowMinority])).toEqual([
      ['mailbox', tuneSlowMinority],
      ['maintenance', undefined],
    ])
    // Nothing else changes on the scenario's own seed.
    expect({...slow, pools: flat.pools}).toEqual(flat)
    const own = {share: 0.3, factor: 0.5}
    const declared = {...flat, pools: flat.pools.map((p) => (p.name === 'mailbox' ? {...p, slowMinority: own} : p))}
    expect(allowsSlowMinority(declared)).toBe(false)
    expect(variantScenario(declared, {seed: 1, demandFactor: 1, slowMinority: tuneSlowMinority}).pools[0].slowMinority).toEqual(own)
    const small = {...flat, pools: flat.pools.map((p) => ({...p, servers: p.kind === 'servers' ? 9 : p.servers}))}
    expect(allowsSlowMinority(small)).toBe(false)
    expect(variantScenario(small, {seed: 1, demandFactor: 1, slowMinority: tuneSlowMinority}).pools[0].slowMinority).toBeUndefined()
  })

  it("times full traffic as the rehearsal records the last ramp's last weight change, from the runbook's start", async () => {
    const {ground} = await groundOf(outlook)
    expect(ground).toMatchObject({setup: 'no-guard', startAt: 300})
    const trial = await runTrial(outlook, ground, {seed: ground.scenario.seed, demandFactor: 1, slowMinority: null}, {stopEarly: true})
    expect(trial).toMatchObject({outcome: 'completed', passed: true, reason: null})
    const {rehearsal} = await rehearse(outlook, {io: new RecordingIO('no-tty'), signal: new AbortController().signal, operator: 'test'}, {pace: null})
    const last = rehearsal.weights[rehearsal.weights.length - 1]
    expect(last.weights.mailbox).toBe(100)
    expect(trial.secondsToFullTraffic).toBe(last.at - rehearsal.startAt)
    expect(trial.seconds).toBe(rehearsal.endAt - rehearsal.startAt)
    // The half-traffic ramp starts from the parked weights.
    expect(trial.startWeights.get(4)).toEqual({mailbox: 0, maintenance: 100})
  })

  it('times full traffic to the microsecond where ticks of a tenth of a second add up with float noise (it once read 1364.6000000000001 s)', async () => {
    const haproxy = loadRunbookFile('runbooks/outlook-staged-return-haproxy.yaml')
    const {ground} = await groundOf(haproxy)
    const trial = await runTrial(haproxy, ground, {seed: ground.scenario.seed, demandFactor: 1, slowMinority: null}, {stopEarly: true})
    expect(trial.secondsToFullTraffic).not.toBeNull()
    expect(Math.round(trial.secondsToFullTraffic! * 1e6) / 1e6).toBe(trial.secondsToFullTraffic)
    expect(String(trial.secondsToFullTraffic)).toMatch(/^\d+(\.\d{1,6})?$/)
  })

  it('shows the shipped runbook fail with demand 30% up, and stops at the first verdict that does not pass when asked', async () => {
    const {ground} = await groundOf(outlook)
    const whole = await runTrial(outlook, ground, {seed: 1, demandFactor: 1.3, slowMinority: null}, {stopEarly: false})
    expect(whole).toMatchObject({outcome: 'gate-failed', passed: false, secondsToFullTraffic: null})
    expect(whole.reason).toMatch(/^step \d+: gate error-rate ≤ 2% over 30 s \(mailbox\): [\d.]+% fail/)
    const early = await runTrial(outlook, ground, {seed: 1, demandFactor: 1.3, slowMinority: null}, {stopEarly: true})
    expect(early).toMatchObject({outcome: 'interrupted', passed: false, reason: whole.reason})
    expect(early.verdicts[early.verdicts.length - 1].outcome).toBe('fail')
    expect(early.verdicts.filter((v) => v.outcome === 'fail')).toHaveLength(1)
    expect(whole.verdicts.length).toBeGreaterThan(early.verdicts.length)
  })
})

describe('tune: gate margins', () => {
  // The shipped runbook with a gate on the whole pool's health after each batch of its cycle (step
  // 4), as it once had: one gate of each direction.
  const dir = mkdtempSync(join(tmpdir(), 'sluice-margins-'))
  const file = join(dir, 'outlook-with-health-gate.yaml')
  const cycleBake = '    bake: 30\n  - action: ramp\n    name: Bring half'
  const shippedText = readFileSync('runbooks/outlook-staged-return.yaml', 'utf8')
  expect(shippedText).toContain(cycleBake)
  writeFileSync(
    file,
    shippedText.replace(cycleBake, cycleBake.replace('bake: 30\n', 'bake: 30\n    gate: {metric: healthy-targets, threshold: 95, pool: mailbox}\n')),
  )
  const withHealthGate = loadRunbookFile(file)
  const verdict = (step: number, metric: GateVerdict['metric'], value: number | null, context = ''): GateVerdict => ({
    step,
    gate: '',
    metric,
    value,
    threshold: 0,
    unit: '%',
    outcome: 'pass',
    at: 0,
    context,
  })
  const trial = (seed: number, demandFactor: number, verdicts: GateVerdict[]) =>
    ({variant: {seed, demandFactor, slowMinority: null}, verdicts}) as unknown as Trial

  it("takes the value nearest each gate's threshold across every trial: the lowest healthy share, the highest error rate", () => {
    const margins = gateMargins(withHealthGate, [
      trial(1, 1, [verdict(3, 'healthy-targets', 100), verdict(4, 'error-rate', 0.5), verdict(8, 'error-rate', null)]),
      trial(2, 1.1, [verdict(3, 'healthy-targets', 97, 'batch 2 of 4'), verdict(4, 'error-rate', 1.25, 'mailbox 5%'), verdict(4, 'error-rate', 0)]),
    ])
    expect(margins.map((m) => m.index)).toEqual([3, 4, 6, 7, 8])
    expect(margins[0]).toMatchObject({
      gate: 'healthy-targets ≥ 95% over 30 s (mailbox)',
      worst: 97,
      margin: 2,
      at: {seed: 2, demandPercent: 110, slowMinority: false, context: 'batch 2 of 4'},
      verdicts: 2,
    })
    expect(margins[1]).toMatchObject({
      gate: 'error-rate ≤ 2% over 30 s (mailbox)',
      worst: 1.25,
      margin: 0.75,
      at: {seed: 2, demandPercent: 110, slowMinority: false, context: 'mailbox 5%'},
      verdicts: 3,
    })
    // No data is never a value: a gate with only that has no margin to show.
    expect(margins[4]).toMatchObject({worst: null, margin: null, at: null, verdicts: 1})
    expect(margins[2]).toMatchObject({worst: null, margin: null, verdicts: 0})
  })

  it("refuses a step its pool could not take then, even where the rehearsal's gates passed: tune's drilled Outlook proposal, 30% at once onto the just-restarted pool", async () => {
    // Proposed by tune on 2026-12-06 (--demand-margin 0) and drilled against HAProxy: the real
    // run failed its gate at this step. Its 360 rps arrive on new connections at 4× a request's
    // work, 1,440 rps of work onto twenty servers serving 1,000 rps cold.
    const shipped = readFileSync('runbooks/outlook-staged-return-haproxy.yaml', 'utf8')
    const proposal = shipped.replace('schedule: [1, 5, 10, 20, 30, 40, 50]\n    bake: 30', 'schedule: [30]\n    bake: 10')
    expect(proposal).not.toBe(shipped)
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-overreach-')), 'proposal.yaml')
    writeFileSync(file, proposal)
    const runbook = loadRunbookFile(file)
    const {ground} = await groundOf(runbook)
    const trial = await runTrial(runbook, ground, {seed: ground.scenario.seed, demandFactor: 1, slowMinority: null}, {stopEarly: false})
    expect(trial.outcome).toBe('completed')
    expect(trial.passed).toBe(false)
    expect(trial.failedStep).toBe(4)
    expect(trial.reason).toMatch(
      /^step 5: \+30 points, 360 rps onto mailbox, its new connections at 4× a request's work: 1,440 rps of work against [\d,]+ rps served then by its servers in rotation, 2,000 rps when warm, more than the pool could take$/,
    )
    // The shipped ramp's steps stay within what the pool serves at each.
    const own = await runTrial(
      loadRunbookFile('runbooks/outlook-staged-return-haproxy.yaml'),
      ground,
      {seed: ground.scenario.seed, demandFactor: 1, slowMinority: null},
      {stopEarly: false},
    )
    expect(own.passed).toBe(true)
    expect(own.loads.filter((l) => l.step === 4).map((l) => l.points)).toEqual([1, 4, 5, 10, 10, 10, 10])
    for (const load of own.loads) expect(load.workRps).toBeLessThanOrEqual(load.capacityRps)
  })
})

describe('tune: a candidate behind the counts judge', () => {
  // Both pools err on 6% (scenarios/drill-judge-shared-errors.yaml); half the traffic to green for
  // a minute behind the counts judge, then the rest behind a threshold gate.
  const dir = mkdtempSync(join(tmpdir(), 'sluice-tune-counts-'))
  const file = join(dir, 'canary.yaml')
  writeFileSync(
    file,
    `name: canary
targets:
  haproxy: {socket: /run/haproxy/admin.sock, backends: {blue: blue, green: green}, rampMap: /etc/haproxy/ramp.map}
  metrics: {source: haproxy}
rehearsal: {scenario: drill-judge-shared-errors, setup: checks-only}
steps:
  - action: ramp
    set: green
    schedule: [50]
    bake: 60
    gate: {metric: error-rate, judge: counts, relativeTo: stable, threshold: 2, pool: green, interval: 5}
  - action: ramp
    set: green
    schedule: [100]
    bake: 10
    gate: {metric: error-rate, threshold: 8, pool: green, window: 10, interval: 5}
`,
  )
  const canary = loadRunbookFile(file)

  it('passes on its decision, not its first looks: the judge is always unsure before three intervals, and that is its bake going on', async () => {
    const {ground} = await groundOf(canary)
    const trial = await runTrial(canary, ground, {seed: ground.scenario.seed, demandFactor: 1, slowMinority: null}, {stopEarly: true})
    expect(trial).toMatchObject({outcome: 'completed', passed: true, reason: null})
    const looks = trial.verdicts.filter((v) => v.step === 0)
    expect(looks.slice(0, 2).map((v) => v.outcome)).toEqual(['inconclusive', 'inconclusive'])
    expect(looks.at(-1)!.outcome).toBe('pass')
    // Its margin is to the baseline's rate and 2 points, as a relative gate's: pools alike leave about 2.
    const [counts] = gateMargins(canary, [trial])
    expect(counts.margin).toBeGreaterThan(1)
    expect(counts.margin).toBeLessThan(3)
  })
})
