import {describe, expect, it} from 'vitest'
import {receivingKey, wayBack} from '../../src/way-back/way-back.js'

describe('the way back', () => {
  const full = {blue: 0, green: 100}
  const start = {blue: 100, green: 0}
  const passed = [{blue: 95, green: 5}, {blue: 75, green: 25}, {blue: 50, green: 50}, full]

  it('names the one key that gains traffic', () => {
    expect(receivingKey(full, start)).toBe('blue')
    expect(receivingKey({a: 50, b: 50, c: 0}, {a: 0, b: 50, c: 50})).toBe('c')
    expect(receivingKey({a: 0, b: 0, c: 100}, {a: 50, b: 50, c: 0})).toBeNull()
  })

  it('without a capacity, steps back through the weights the run passed, in reverse, ending where it found them', () => {
    const way = wayBack(full, start, passed, null)
    expect(way.steps).toEqual([{blue: 50, green: 50}, {blue: 75, green: 25}, {blue: 95, green: 5}, start])
    expect(way.why).toContain('back through the weights the run passed')
  })

  it('from partway back, keeps only the steps still ahead', () => {
    expect(wayBack({blue: 75, green: 25}, start, passed, null).steps).toEqual([{blue: 95, green: 5}, start])
  })

  it('sized by capacity: each step sends the receiving pool at most a quarter of what its healthy targets serve', () => {
    // 8 healthy × 100 rps = 800 rps against 1,600 rps: a quarter is 200 rps, 12.5% of demand: 12 points a step.
    const way = wayBack(full, start, passed, {pool: 'blue', healthy: 8, perTarget: 100, demand: 1600})
    const shares = way.steps.map((w) => w.blue)
    expect(shares).toEqual([12, 24, 36, 48, 60, 72, 84, 96, 100])
    for (const w of way.steps) expect(w.blue + w.green).toBe(100)
    expect(way.why).toBe('blue has 8 healthy targets × 100 rps = 800 rps against 1,600 rps of demand: each step adds at most a quarter of that (12 points)')
    // 800 rps cannot serve all 1,600: said, not hidden.
    expect(way.shortfall).toBe("blue would get 1,600 rps at 100% of today's demand, more than its 800 rps in rotation")
  })

  it('a receiving pool that holds four times the demand goes back in one step', () => {
    const way = wayBack(full, start, passed, {pool: 'blue', healthy: 20, perTarget: 100, demand: 500})
    expect(way.steps).toEqual([start])
    expect(way.shortfall).toBeUndefined()
  })

  it('with several pools losing traffic, each keeps its share of what is left', () => {
    const way = wayBack({a: 0, b: 50, c: 50}, {a: 100, b: 0, c: 0}, [], {pool: 'a', healthy: 1, perTarget: 100, demand: 100})
    expect(way.steps).toEqual([
      {a: 25, b: 38, c: 37},
      {a: 50, b: 25, c: 25},
      {a: 75, b: 13, c: 12},
      {a: 100, b: 0, c: 0},
    ])
  })
})

describe('the way back is distinct and monotone', () => {
  const start = {blue: 100, green: 0}
  it('a weight the run passed twice (a resumed run, written with other keys) is one step, baked once', () => {
    const passed: Array<Record<string, number>> = [
      {blue: 40, green: 60},
      {blue: 40, green: 60, grey: 0},
      {blue: 30, green: 70},
      {blue: 30, green: 70},
      {blue: 0, green: 100},
    ]
    const shares = wayBack({blue: 0, green: 100}, start, passed, null).steps.map((w) => w.blue)
    expect(shares).toEqual([30, 40, 100])
  })

  it('from live weights past some of the steps (a hand change), never a step back towards where traffic is leaving', () => {
    const passed = [
      {blue: 80, green: 20},
      {blue: 50, green: 50},
      {blue: 20, green: 80},
      {blue: 0, green: 100},
    ]
    const shares = wayBack({blue: 60, green: 40}, start, passed, null).steps.map((w) => w.blue)
    expect(shares).toEqual([80, 100])
  })
})

describe('the plan of a stepped way back', () => {
  it('names the receiving pool and says when it failed a gate in this run, from the run verdicts of its steps only', async () => {
    const {failedPools, describeStepBack} = await import('../../src/way-back/step-back.js')
    const gate = {
      metric: 'error-rate' as const,
      threshold: 2,
      window: 60,
      interval: 10,
      failureLimit: 1,
      inconclusiveLimit: 3,
      successes: 3,
      pool: 'blue',
      judge: 'threshold' as const,
      confidence: 99,
    }
    const runbook = {steps: [{index: 0, action: 'ramp', gate}]} as unknown as Parameters<typeof failedPools>[0]
    const verdict = (step: number, outcome: 'pass' | 'fail', context: string) =>
      ({
        step,
        gate: 'error-rate ≤ 2% over 60 s (blue)',
        metric: 'error-rate',
        value: outcome === 'fail' ? 9 : 0.1,
        threshold: 2,
        unit: '%',
        outcome,
        at: 0,
        context,
        requests: 1000,
        bound: 2,
      }) as const
    const failed = failedPools(runbook, [verdict(0, 'pass', 'blue 25%'), verdict(0, 'fail', 'blue 50%'), verdict(-1, 'fail', 'way back: green 80%')])
    expect([...failed.keys()]).toEqual(['blue'])
    expect(failed.get('blue')).toMatch(/^step 1 at blue 50%: error-rate ≤ 2% over 60 s \(blue\) measured 9\.00%/)
    const undo = {
      kind: 'weights' as const,
      resource: 'r',
      describe: 'set the weights of r back to blue=100 green=0',
      before: {blue: 25, green: 75},
      after: {blue: 100, green: 0},
      apply: async () => undefined,
    }
    const line = describeStepBack({
      undo,
      way: {
        steps: [
          {blue: 50, green: 50},
          {blue: 100, green: 0},
        ],
        why: 'back through the weights the run passed',
      },
      receiving: 'blue',
      gate,
      gateFrom: 'the gate of step 1',
      bake: 60,
      receivingFailed: failed.get('blue'),
    })
    expect(line).toContain('traffic goes onto blue, which failed a gate in this run (step 1 at blue 50%')
    expect(line).toContain('each baked 60 s behind the gate of step 1: error-rate ≤ 2% over 60 s (blue)')
    expect(line).not.toContain('Note:')

    // A gate relative to the pool traffic leaves, which failed: a pass there is weak, and the plan says so.
    const judged = describeStepBack({
      undo,
      way: {
        steps: [
          {blue: 50, green: 50},
          {blue: 100, green: 0},
        ],
        why: 'back through the weights the run passed',
      },
      receiving: 'blue',
      gate: {...gate, baseline: {pool: 'green'}, judge: 'counts'},
      gateFrom: 'the gate of step 1',
      bake: 60,
      baselineFailed: {pool: 'green', where: 'step 1 at green 75%: …'},
    })
    expect(judged).toMatch(
      /\. Note: the gate measures blue against green, the pool traffic leaves, which failed a gate in this run \(step 1 at green 75%: …\): a pass says only that it is no worse than that$/,
    )
  })
})
