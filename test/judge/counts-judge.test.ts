import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {countsSentence, judgeCounts, requestsNeeded, type Counts} from '../../src/judge/counts.js'
import {countsJudge, mannWhitneyJudge, runTrials, thresholdJudge, type PoolModel, type TrialCase, type TrialTally} from '../../src/judge/trials.js'

// The counts judge over 10,000 simulated gates a case (seeded), beside today's threshold gate set
// to the same margin and a Mann–Whitney judge on the windows' rates, all on the same windows. A
// gate is a bake of ten windows; the receiving pool gets a tenth of the requests. Each case's
// requests are what the plan says the judge needs (requestsNeeded), unless the case is about too
// few. Targets: false failures ≤ 1%, misses of a regression of twice the margin ≤ 5%, and tiny
// samples never pass. Every case's shares are written to .artifacts/judge-trials.json.

const gates = 10_000
const intervals = 10
const share = 0.1
const confidence = 0.99
const table: Record<string, Record<string, TrialTally>> = {}
afterAll(() => {
  mkdirSync('.artifacts', {recursive: true})
  writeFileSync(join('.artifacts', 'judge-trials.json'), `${JSON.stringify({gates, intervals, share, confidence, cases: table}, null, 2)}\n`)
})

/** A case at the plan's sample: windows of the requests the judge needs over the bake, the baseline nine times as many. */
function planned(baselineRate: number, marginPoints: number) {
  const needed = requestsNeeded({baselineRate, marginPoints, share, confidence, looks: intervals})
  const perWindow = Math.ceil(needed / intervals)
  return {needed, receiving: perWindow, baseline: Math.ceil((perWindow * (1 - share)) / share)}
}

function trial(name: string, c: TrialCase, margin: number): Record<string, TrialTally> {
  const judges = {counts: countsJudge({marginPoints: margin, confidence}), threshold: thresholdJudge(margin), mannWhitney: mannWhitneyJudge(1 - confidence)}
  const tallies = runTrials(c, judges, gates, 20261207)
  table[name] = tallies
  return tallies
}

describe('the counts judge over 10,000 simulated gates a case', () => {
  const margin = 1
  const base = 0.5
  const n = planned(base, margin)

  it('says how many requests it needs: about 10,000 for 1 point over 0.5%, more for a thinner margin, more of all requests for a smaller share', () => {
    expect(n.needed).toBeGreaterThan(8_000)
    expect(n.needed).toBeLessThan(13_000)
    expect(requestsNeeded({baselineRate: base, marginPoints: 0.5, share, confidence, looks: intervals})).toBeGreaterThan(2 * n.needed)
    // Half the traffic each: the pool needs a few more of its own (the baseline is smaller), far fewer of all.
    const half = requestsNeeded({baselineRate: base, marginPoints: margin, share: 0.5, confidence, looks: intervals})
    expect(half / 0.5).toBeLessThan(n.needed / share / 3)
  })

  it('equal pools, binomial windows: no more than 1% fail', () => {
    const t = trial('equal, binomial', {intervals, receiving: {requests: n.receiving, rate: base}, baseline: {requests: n.baseline, rate: base}}, margin)
    expect(t.counts.fail).toBeLessThanOrEqual(1)
    expect(t.counts.pass).toBeGreaterThanOrEqual(95)
  })

  it('equal pools whose windows vary far more than a binomial (bursts, retries): no more than 1% fail, where the threshold gate fails half', () => {
    const over = {concentration: 200}
    const t = trial(
      'equal, overdispersed',
      {intervals, receiving: {requests: n.receiving, rate: base, ...over}, baseline: {requests: n.baseline, rate: base, ...over}},
      margin,
    )
    expect(t.counts.fail).toBeLessThanOrEqual(1)
    expect(t.threshold.fail).toBeGreaterThan(25)
  })

  it('equal rates, only the receiving pool varying far more than a binomial (a bursty client on it): no more than 1% fail', () => {
    const t = trial(
      'equal, only the pool overdispersed',
      {intervals, receiving: {requests: n.receiving, rate: base, concentration: 200}, baseline: {requests: n.baseline, rate: base}},
      margin,
    )
    expect(t.counts.fail).toBeLessThanOrEqual(1)
  })

  it('a burst in one window of an equal pool: no more than 1% fail', () => {
    const t = trial(
      'equal, a 10× burst in one window',
      {intervals, receiving: {requests: n.receiving, rate: base, bursts: {4: 10}}, baseline: {requests: n.baseline, rate: base}},
      margin,
    )
    expect(t.counts.fail).toBeLessThanOrEqual(1)
    expect(t.threshold.fail).toBeGreaterThan(90)
  })

  it('a regression of exactly the margin: never passed (it is not ruled out) more than 1% of the time', () => {
    const t = trial(
      'worse by the margin',
      {intervals, receiving: {requests: n.receiving, rate: base + margin}, baseline: {requests: n.baseline, rate: base}},
      margin,
    )
    expect(t.counts.pass).toBeLessThanOrEqual(1)
  })

  it('a regression of twice the margin at the sample the plan needs: missed (not failed) no more than 5% of the time, passed no more than 1%', () => {
    const t = trial(
      'worse by twice the margin',
      {intervals, receiving: {requests: n.receiving, rate: base + 2 * margin}, baseline: {requests: n.baseline, rate: base}},
      margin,
    )
    expect(100 - t.counts.fail).toBeLessThanOrEqual(5)
    expect(t.counts.pass).toBeLessThanOrEqual(1)
  })

  it('rare errors (0.01%, margin 0.05 points): no more than 1% false failures, 5% misses of twice the margin', () => {
    const rare = planned(0.01, 0.05)
    const equal = trial(
      'rare errors, equal',
      {intervals, receiving: {requests: rare.receiving, rate: 0.01}, baseline: {requests: rare.baseline, rate: 0.01}},
      0.05,
    )
    expect(equal.counts.fail).toBeLessThanOrEqual(1)
    const worse = trial(
      'rare errors, twice the margin',
      {intervals, receiving: {requests: rare.receiving, rate: 0.11}, baseline: {requests: rare.baseline, rate: 0.01}},
      0.05,
    )
    expect(100 - worse.counts.fail).toBeLessThanOrEqual(5)
  })

  it('a baseline with no errors: no more than 1% false failures, 5% misses of twice the margin', () => {
    const clean = planned(0, margin)
    const equal = trial(
      'no errors in either',
      {intervals, receiving: {requests: clean.receiving, rate: 0}, baseline: {requests: clean.baseline, rate: 0}},
      margin,
    )
    expect(equal.counts.fail).toBe(0)
    const worse = trial(
      'no errors in the baseline, twice the margin in the pool',
      {intervals, receiving: {requests: clean.receiving, rate: 2 * margin}, baseline: {requests: clean.baseline, rate: 0}},
      margin,
    )
    expect(100 - worse.counts.fail).toBeLessThanOrEqual(5)
  })

  it('tiny samples never pass, whatever the rates', () => {
    for (const [name, rate] of [
      ['tiny, equal', base],
      ['tiny, no errors', 0],
    ] as const) {
      const t = trial(name, {intervals, receiving: {requests: 3, rate}, baseline: {requests: 30, rate}}, margin)
      expect(t.counts.pass, name).toBe(0)
    }
  })
})

describe('relative to before: the pool over six intervals before the change, against its own bake of ten, 10,000 gates a case', () => {
  // The pool's traffic is the same before and after: the baseline holds six tenths of the bake's requests.
  const before = 6
  const margin = 1
  const base = 0.5
  const needed = requestsNeeded({
    baselineRate: base,
    marginPoints: margin,
    baselineRatio: before / intervals,
    baselineIntervals: before,
    confidence,
    looks: intervals,
  })
  const perWindow = Math.ceil(needed / intervals)
  const at = (rate: number, extra: Partial<PoolModel> = {}) => ({requests: perWindow, rate, ...extra})
  const beforeTrial = (name: string, receiving: PoolModel, baseline: PoolModel) =>
    trial(`before: ${name}`, {intervals, receiving, baseline, baselineBefore: before}, margin)

  it('needs more of the pool’s requests than against a pool nine times its size, since its baseline is smaller', () => {
    expect(needed).toBeGreaterThan(planned(base, margin).needed)
    expect(needed).toBeLessThan(4 * planned(base, margin).needed)
  })

  it('equal, binomial windows: no more than 1% fail', () => {
    const t = beforeTrial('equal, binomial', at(base), at(base))
    expect(t.counts.fail).toBeLessThanOrEqual(1)
    expect(t.counts.pass).toBeGreaterThanOrEqual(95)
  })

  it('equal, windows far more varied than a binomial on both sides: no more than 1% fail', () => {
    const t = beforeTrial('equal, overdispersed', at(base, {concentration: 200}), at(base, {concentration: 200}))
    expect(t.counts.fail).toBeLessThanOrEqual(1)
  })

  it('a regression of twice the margin at the sample the plan needs: missed no more than 5% of the time, passed no more than 1%', () => {
    const t = beforeTrial('worse by twice the margin', at(base + 2 * margin), at(base))
    expect(100 - t.counts.fail).toBeLessThanOrEqual(5)
    expect(t.counts.pass).toBeLessThanOrEqual(1)
  })

  it('a regression of exactly the margin: passed no more than 1% of the time', () => {
    const t = beforeTrial('worse by the margin', at(base + margin), at(base))
    expect(t.counts.pass).toBeLessThanOrEqual(1)
  })

  it('tiny samples never pass', () => {
    const t = beforeTrial('tiny, equal', {requests: 3, rate: base}, {requests: 3, rate: base})
    expect(t.counts.pass).toBe(0)
  })

  it('judges a fixed baseline at every look: its dispersion and degrees of freedom are its own six intervals’', () => {
    const baseline: Counts[] = [5, 3, 6, 4, 5, 7].map((e) => ({requests: 1_000, errors: e}))
    const three = judgeCounts(baseline.slice(0, 3), baseline, {marginPoints: margin, confidence, looks: intervals})
    expect(three.baseline).toEqual({rate: 0.5, requests: 6_000})
    expect(three.receiving.requests).toBe(3_000)
    expect(three.why).toBeUndefined()
    const two = judgeCounts(baseline.slice(0, 2), baseline, {marginPoints: margin, confidence, looks: intervals})
    expect(two.why).toBe('2 intervals so far; how much the windows vary needs 3')
  })
})

describe('Kayenta’s hole (spinnaker 6278, kayenta 780): a canary of [100×7, 1×3] errors against a control of [1×10]', () => {
  const windows = (errors: number[]): Counts[] => errors.map((e) => ({requests: 1_000, errors: e}))
  const canary = windows([100, 100, 100, 100, 100, 100, 100, 1, 1, 1])
  const control = windows([1, 1, 1, 1, 1, 1, 1, 1, 1, 1])

  it('fails it, in words with its numbers', () => {
    const verdict = judgeCounts(canary, control, {marginPoints: 1, confidence, looks: intervals})
    expect(verdict.outcome).toBe('fail')
    expect(verdict.receiving).toEqual({rate: 7.03, requests: 10_000})
    expect(verdict.baseline).toEqual({rate: 0.1, requests: 10_000})
    expect(verdict.sure).toBeGreaterThan(verdict.needs)
    // The canary's windows vary far beyond a binomial, the control's do not: the judge says so, and
    // fails it, since a pool no worse than its control would vary as the control does.
    expect(verdict.dispersion).toBeGreaterThan(20)
    expect(verdict.baselineDispersion).toBe(1)
    expect(countsJudge({marginPoints: 1, confidence})(canary, control, false)).toBe('fail')
    expect(countsSentence(verdict, {receiving: 'canary', baseline: 'control'}, 1)).toMatch(
      /^canary 7\.0% of 10,000 against control 0\.1% of 10,000: worse by 6\.9 points, margin 1; windows vary \d+\.\d× and 1\.0× a binomial, >99\.9% sure → fail$/,
    )
    // Too early to say: the sentence says why.
    const early = judgeCounts(canary.slice(0, 2), control.slice(0, 2), {marginPoints: 1, confidence, looks: intervals})
    expect(countsSentence(early, {receiving: 'canary', baseline: 'control'}, 1)).toMatch(
      /: worse by [\d.]+ points, margin 1, 2 intervals so far; how much the windows vary needs 3 → inconclusive$/,
    )
  })
})
