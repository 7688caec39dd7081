import {describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {isolatedInProcess} from '../helpers/command.js'
import {ontoWestRunbook} from '../helpers/onto-west.js'

const sluice = isolatedInProcess('gates')
const runbookWith = ontoWestRunbook

describe('gates for incidents, rehearsed through the CLI', () => {
  it('a gate at 1% weight with too few requests stays inconclusive, says how many it saw, and never passes', async () => {
    const file = runbookWith('few', '{metric: error-rate, threshold: 1, window: 30, interval: 10, pool: west, minRequests: 2000}')
    // At the mean (randomness none), so each window's count is the arithmetic below to the request.
    const [json, text] = await Promise.all([
      sluice(['run', file, '--dry-run', '--randomness', 'none', '--json']),
      sluice(['run', file, '--dry-run', '--randomness', 'none']),
    ])
    expect(json.code, json.stderr).toBe(3)
    const verdicts = (JSON.parse(json.stdout) as RunJson).steps[0].verdicts
    expect(verdicts.map((v) => v.outcome)).toEqual(['inconclusive', 'inconclusive', 'inconclusive'])
    // 1% of 1,700 rps is 17 rps: a verdict every 10 s once the bake starts, 10 s after the change
    // (the split is seen served at the first look), each window holding the seconds since the change, up to 30.
    verdicts.forEach((v, i) => {
      expect(v.requests).toBeCloseTo(17 * Math.min(30, 10 * (i + 2)), 0)
      expect(v.why).toBe(`${Math.round(v.requests!)} requests in the window, fewer than minRequests 2000`)
    })
    expect(text.code).toBe(3)
    expect(text.stdout).toMatch(
      /was inconclusive 3 times at west 1% \(last: \d+ requests in the window, fewer than minRequests 2000\); missing data is never a pass/,
    )
  })

  it('the same gate with enough requests judges each window, and --json gives each verdict its sample size and bound', async () => {
    const file = runbookWith('enough', '{metric: error-rate, threshold: 1, window: 30, interval: 10, pool: west, minRequests: 300}')
    // At the mean, as above (drawn, a tighter gate fails on some seeds: test/commands/outcome-first-and-last.test.ts).
    const json = await sluice(['run', file, '--dry-run', '--randomness', 'none', '--json'])
    expect(json.code, json.stderr).toBe(0)
    const verdicts = (JSON.parse(json.stdout) as RunJson).steps[0].verdicts
    // The bake starts once the split is seen served, 10 s after the change: its first window holds
    // 20 s at 1%, 340 requests, enough to judge; every verdict passes on its sample.
    expect(verdicts[0]).toMatchObject({outcome: 'pass', bound: 1, requests: 340})
    expect(verdicts.every((v) => v.outcome === 'pass' && v.bound === 1 && v.requests! >= 300)).toBe(true)
  })

  it('a gate relative to the stable pool reads both pools over the same window and prints the baseline with each verdict', async () => {
    const file = runbookWith('stable', '{metric: error-rate, threshold: 2, window: 30, interval: 10, pool: west, relativeTo: stable}')
    const [json, plan] = await Promise.all([sluice(['run', file, '--dry-run', '--json']), sluice(['plan', file])])
    expect(json.code, json.stderr).toBe(0)
    const verdicts = (JSON.parse(json.stdout) as RunJson).steps[0].verdicts
    expect(verdicts.length).toBeGreaterThan(0)
    for (const v of verdicts) {
      expect(v.baseline?.of).toBe('pool east')
      // East carries the rest: never fewer requests than west, up to the even split.
      expect(v.baseline?.requests).toBeGreaterThanOrEqual(v.requests!)
      expect(v.bound).toBeCloseTo(v.baseline!.value! + 2, 9)
    }
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('gate: error-rate ≤ pool east + 2 points over 30 s (west)')
  })
})
