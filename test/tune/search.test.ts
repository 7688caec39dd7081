import {describe, expect, it} from 'vitest'
import {choicesFor, costOf, schedulesOf, shippedChoice, type RampChoice, type RampSite} from '../../src/tune/ramps.js'
import {robustnessVariants, searchRamps, type Judge, type Score, type Standing} from '../../src/tune/search.js'

// A made-up fleet with known physics, so the search can be checked against every candidate: a
// step may add at most 30 points when the bake is at least 45 s, or 15 points at a shorter bake;
// the climb may pause (for a lift) at no more than 45%; and the nominal case tolerates 10 points
// more per step than the robustness set does.
const sites: RampSite[] = [
  {index: 1, title: 'first half', set: 'web', shipped: {schedule: [10, 20, 50], bake: 60}, interval: null, waypoint: true, previous: null, startWeight: 0, final: false},
  {index: 3, title: 'the rest', set: 'web', shipped: {schedule: [75, 100], bake: 60}, interval: null, waypoint: false, previous: 0, startWeight: 50, final: true},
]
const fixed = 200

function safe(schedules: number[][], choices: RampChoice[], slack: number): boolean {
  if (choices[0].end > 45) return false
  let at = 0
  return schedules.every((schedule, i) => schedule.every((p) => {
    const ok = p - at <= (choices[i].bake >= 45 ? 30 : 15) + slack
    at = p
    return ok
  }))
}

function scoreOf(schedules: number[][], choices: RampChoice[]): Score {
  const costs = sites.map((s, i) => costOf(s, schedules[i], choices[i].bake))
  const beforeFull = costs.reduce((a, c) => a + c.beforeFull, 0)
  const total = costs.reduce((a, c) => a + c.total, 0)
  return {secondsToFullTraffic: fixed + beforeFull, seconds: fixed + total + 100}
}

class FakeJudge implements Judge {
  rehearsals = 0
  robustnessRuns = 0
  async evaluate(schedules: number[][], choices: RampChoice[], toBeat: Score | null): Promise<Standing> {
    this.rehearsals++
    if (!safe(schedules, choices, 10)) return {score: null, robust: false}
    const score = scoreOf(schedules, choices)
    const beats = toBeat === null || score.secondsToFullTraffic < toBeat.secondsToFullTraffic || (score.secondsToFullTraffic === toBeat.secondsToFullTraffic && score.seconds < toBeat.seconds)
    if (!beats) return {score, robust: null}
    this.robustnessRuns++
    return {score, robust: safe(schedules, choices, 0)}
  }
  report(): void {}
}

describe('tune: the search', () => {
  it('finds the soonest full traffic that passes the robustness set, as trying every candidate would, trying few of them', async () => {
    const judge = new FakeJudge()
    const shipped = sites.map(shippedChoice)
    const result = await searchRamps(judge, sites, 30, await judge.evaluate(schedulesOf(sites, shipped)!, shipped, null))
    // Every combination of the two ramps' choices, judged by the same physics.
    let best: Score | null = null
    let combinations = 0
    for (const a of choicesFor(sites[0], 30))
      for (const b of choicesFor(sites[1], 30)) {
        const choices = [a, b]
        const schedules = schedulesOf(sites, choices)
        if (!schedules || !safe(schedules, choices, 0)) continue
        combinations++
        const score = scoreOf(schedules, choices)
        if (!best || score.secondsToFullTraffic < best.secondsToFullTraffic) best = score
      }
    expect(combinations).toBeGreaterThan(10_000)
    expect(result.score?.secondsToFullTraffic).toBe(best!.secondsToFullTraffic)
    expect(safe(result.schedules!, result.choices!, 0)).toBe(true)
    expect(result.choices![0].end).toBeLessThanOrEqual(45)
    expect(judge.rehearsals).toBeLessThan(combinations / 10)
  })

  it('leaves the ramps alone when nothing passes', async () => {
    const judge: Judge = {rehearsals: 0, evaluate: async () => ({score: null, robust: false}), report() {}}
    const result = await searchRamps(judge, sites, 30, null)
    expect(result).toMatchObject({choices: null, schedules: null, score: null})
  })

  it('rehearses the nominal case first, then demand off each way, then the other seeds', () => {
    expect(robustnessVariants({seeds: [4, 5], demandFactors: [0.9, 1, 1.1]})).toEqual([
      {seed: 4, demandFactor: 1}, {seed: 4, demandFactor: 0.9}, {seed: 4, demandFactor: 1.1},
      {seed: 5, demandFactor: 0.9}, {seed: 5, demandFactor: 1.1}, {seed: 5, demandFactor: 1},
    ])
    expect(robustnessVariants({seeds: [1], demandFactors: [1]})).toEqual([{seed: 1, demandFactor: 1}])
  })
})
