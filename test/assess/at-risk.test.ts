import {describe, expect, it} from 'vitest'
import type {Assessment} from '../../src/assess/assess.js'
import {inProcess as sluice} from '../helpers/command.js'

// Issue 47: a pool at 95% of its capacity with clients that retry (near-capacity: ten servers of
// 100 rps at 950 rps, three attempts a request) is safe at the mean and tips by chance once
// arrivals and service times are drawn. assess asks "fixed now, does it come back?" on ten seeds
// by default, and calls a pool that tips on some of them at risk, naming the seeds and when.
describe('sluice assess over seeds', () => {
  const pool = ['assess', '--scenario', 'near-capacity', '--demand', '950', '--in-rotation', '10', '--quick']

  it('at 95% with retries: AT RISK by default (exit 3), with the seeds that tipped and when; --json has each seed', async () => {
    const [text, json] = await Promise.all([sluice(pool), sluice([...pool, '--json'])])
    expect(text.code, text.stderr).toBe(3)
    const a = JSON.parse(json.stdout) as Assessment
    expect(a.region).toBe('at-risk')
    const over = a.overSeeds!
    expect(over).toMatchObject({randomness: 'drawn', from: 'now'})
    expect(over.seeds.map((s) => s.seed)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const tipped = over.seeds.filter((s) => s.tipped)
    expect(tipped.length).toBeGreaterThan(0)
    expect(tipped.length).toBeLessThan(10)
    for (const s of over.seeds) expect(s.tipped ? s.tippedAfter! >= 0 && s.tippedAfter! <= a.watchedSeconds : s.tippedAfter === null).toBe(true)
    const first = text.stdout.split('\n').find((l) => l.startsWith('AT RISK: '))!
    expect(first).toContain(`tips on ${tipped.length} of 10 seeds (arrivals and service times drawn): `)
    for (const s of tipped.slice(0, 5)) expect(first).toContain(`seed ${s.seed} ${Math.round(s.tippedAfter!)} s from now`)
    expect(first).toContain(`on the other ${10 - tipped.length} it is at full service ${a.watchedSeconds} s from now.`)
    // No lever is offered on one run's luck.
    expect(a.levers).toEqual([])
  })

  it('the same pool at the mean (randomness none) is unharmed on its one run; at 80% drawn it holds on every seed', async () => {
    const mean = await sluice([...pool, '--randomness', 'none', '--json'])
    expect(mean.code, mean.stderr).toBe(0)
    expect(JSON.parse(mean.stdout)).toMatchObject({region: 'unharmed', overSeeds: null})
    const roomy = await sluice(['assess', '--scenario', 'near-capacity', '--demand', '800', '--in-rotation', '10', '--quick'])
    expect(roomy.code, roomy.stderr).toBe(0)
    expect(roomy.stdout).toContain(
      'UNHARMED: every server in rotation at 800 rps, 0% errors.\nAt full service on all 10 seeds, arrivals and service times drawn, ',
    )
  })

  it('--seeds 1 asks one run, as before randomness was drawn by default', async () => {
    const one = await sluice([...pool, '--seeds', '1', '--json'])
    const a = JSON.parse(one.stdout) as Assessment
    expect(a.overSeeds).toBeNull()
    expect(a.region).not.toBe('at-risk')
  })
})
