import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

/**
 * assess's work is bounded by a budget of servers × ticks simulated (src/assess/budget.ts), and a
 * pool too big to simulate server by server within a run's share of it is asked of a scale model
 * (src/assess/scale.ts). These prove it ends with the right answer or says why not; how fast it
 * is, is `npm run bench` (assess.20k-servers-stuck.*, assess.2m-servers-stuck.quick).
 */

interface AssessJson {
  region: string
  out: number
  outNow: number
  stuckAboveDemand: number | null
  stuckOut: Array<[number, number]>
  levers: Array<{kind: string; value: number | null; holds: boolean; backInSeconds: number | null}>
  map: {axes: Array<{values: number[]}>} | null
  sentences: string[]
  model: {servers: number; modelled: number} | null
  work: {budget: number; spent: number; oneRun: number}
  skipped: string[]
}

async function assessJson(args: string[], exit = 3): Promise<AssessJson> {
  const r = await sluiceInProcess<AssessJson>(['assess', ...args, '--json'])
  expect(r.exit, r.stderr + r.stdout).toBe(exit)
  return JSON.parse(r.stdout) as AssessJson
}

describe('sluice assess: its work is bounded, whatever the pool (in process)', () => {
  it('asks a pool of 20,000 servers of a scale model, and gets the answer the full simulation gave', async () => {
    // outlook-2026 at 1,000 times its size: 6,000 of 20,000 out at 1,500,000 rps. At 60eccf4, which simulated
    // every server (8 s with --quick), this was stuck, placed at 5,500 broken, tipping below 1,453,125 rps,
    // stuck with 5,001–14,999 broken, a 52% ejection cap and a 4% shed getting it out.
    const a = await assessJson([
      '--scenario',
      'outlook-2026',
      '--setup',
      'no-guard',
      '--servers',
      '20000',
      '--demand',
      '1500000',
      '--in-rotation',
      '14000',
      '--quick',
    ])
    expect(a.model).toEqual({servers: 20_000, modelled: 1408})
    expect(a.region).toBe('stuck')
    expect(a.outNow).toBe(6000)
    expect(a.out).toBe(5500)
    expect(a.stuckAboveDemand).toBe(1_453_125)
    // Counts to the model's grain: a model server stands for 14.2 of the pool's, said to the nearest 10.
    expect(a.stuckOut).toHaveLength(1)
    expect(Math.abs(a.stuckOut[0][0] - 5001)).toBeLessThanOrEqual(15)
    expect(Math.abs(a.stuckOut[0][1] - 14_999)).toBeLessThanOrEqual(15)
    expect(a.levers.find((l) => l.kind === 'cap')).toMatchObject({value: 52, holds: true, backInSeconds: 30})
    expect(a.levers.find((l) => l.kind === 'shed')).toMatchObject({value: 4, holds: true, backInSeconds: 40})
    expect(a.work.spent).toBeLessThanOrEqual(a.work.budget)
    expect(a.skipped).toEqual([])
    expect(a.sentences).toContain(
      'Asked of a scale model: 1,408 servers standing for the 20,000, 14.2 each, with demand scaled alike (one run of every server would be 14,200,000 server-ticks, past the 1,000,000 server-ticks a run may take); counts of servers are good to about 15.',
    )
  }, 60_000)

  it('answers for a pool read as 2,000,000 servers within the budget, with the map in the pool’s numbers', async () => {
    // At 60eccf4 --quick was still running after 150 s (one run was 1.4 billion server-ticks).
    const a = await assessJson(['--scenario', 'outlook-2026', '--servers', '2000000', '--demand', '150000000', '--in-rotation', '1400000', '--workers', '1'])
    expect(a.model).toEqual({servers: 2_000_000, modelled: 1408})
    expect(a.region).toBe('stuck')
    expect(a.out).toBe(550_000)
    expect(a.work.spent).toBeLessThanOrEqual(a.work.budget)
    expect(a.skipped).toEqual([])
    // The map's axis of servers broken runs over the pool's 2,000,000, not the model's 1,408.
    expect(a.map!.axes[0].values.at(-1)).toBe(2_000_000)
    expect(a.map!.axes[1].values.at(-1)).toBe(300_000_000)
    // Servers to add are said in the pool's servers, rounded up to the model's grain (1,421 each: to the thousand).
    const add = a.levers.find((l) => l.kind === 'add-servers')!
    expect(add.holds).toBe(true)
    expect(add.value! % 1000).toBe(0)
  }, 120_000)

  it('says it cannot, exit 1, when placing the pool alone is past the budget: before simulating anything', async () => {
    // 20 servers, a 0.01 s tick and ejections of up to a day: one run of the question watches two days at 100 ticks a second, 345,820,000 server-ticks.
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-assess-budget-')), 'slow.yaml')
    writeFileSync(
      file,
      'name: slow\nduration: 600\ntick: 0.01\nmodel: seed\npools: [{name: web, servers: 20, capacity: 100}]\ndemand: {rps: 1500}\nhealthCheck: {interval: 10, baseEjection: 30, maxEjection: 86400}\nsetups: {no-guard: {}}\n',
    )
    const r = await sluiceInProcess(['assess', '--scenario', file, '--demand', '1500', '--in-rotation', '14', '--quick'])
    expect(r.exit).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(
      'Error: cannot assess within the budget of 300,000,000 server-ticks (with --quick; --budget N allows more): one run of the question is 345,820,000 server-ticks (20 servers × 17,291,000 ticks of 0.01 s), and placing the pool takes at least 24 runs',
    )
    // A budget given is said as given; outlook-2026's question is 14,200 server-ticks a run.
    const small = await sluiceInProcess(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick', '--budget', '300000'])
    expect(small.exit).toBe(1)
    expect(small.stderr.trim()).toBe(
      'Error: cannot assess within the budget of 300,000 server-ticks: one run of the question is 14,200 server-ticks (20 servers × 710 ticks of 1 s), and placing the pool takes at least 24 runs',
    )
    // Room for the grid along servers broken but not for the bisection of its edges: said when the budget runs out.
    const midway = await sluiceInProcess([
      'assess',
      '--scenario',
      'outlook-2026',
      '--servers',
      '100',
      '--demand',
      '7500',
      '--in-rotation',
      '70',
      '--quick',
      '--budget',
      '3150000',
    ])
    expect(midway.exit).toBe(1)
    expect(midway.stdout).toBe('')
    expect(midway.stderr.trim()).toBe(
      'Error: cannot assess within the budget of 3,150,000 server-ticks: one run of the question is 71,000 server-ticks (100 servers × 710 ticks of 1 s), and placing the pool takes more than the 44 runs that fitted',
    )
    const bad = await sluiceInProcess(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--budget', 'lots'])
    expect(bad.exit).toBe(2)
    expect(bad.stderr).toContain('--budget')
  })

  it('leaves out what does not fit after the verdict, and says what: the tipping point along demand and levers with --quick, the map without', async () => {
    // Room for the verdict (24 runs of 14,200) and little more.
    const tight = await assessJson(['--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick', '--budget', '360000'])
    expect(tight.region).toBe('stuck')
    expect(tight.out).toBe(6)
    expect(tight.stuckAboveDemand).toBeNull()
    expect(tight.skipped[0]).toBe('the tipping point along demand')
    expect(tight.skipped).toContain('the lever adding servers')
    expect(tight.work.spent).toBeLessThanOrEqual(360_000)
    expect(tight.sentences).toContain('Tipping point along demand: not looked for, to stay within the budget.')
    expect(tight.sentences.at(-1)).toBe(`Left out to stay within the budget of 360,000 server-ticks (--budget N allows more): ${tight.skipped.join('; ')}.`)
    expect(tight.sentences.join('\n')).not.toContain('Tipping point: none')

    // Room for everything but the map: the answer is whole, the map and its SVG are not drawn, and it says so.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-assess-budget-'))
    const r = await sluiceInProcess([
      'assess',
      '--scenario',
      'outlook-2026',
      '--demand',
      '1500',
      '--in-rotation',
      '14',
      '--budget',
      '4e6',
      '--workers',
      '1',
      '--svg',
      join(dir, 'map.svg'),
    ])
    expect(r.exit, r.stderr).toBe(3)
    expect(r.stdout).toContain('Left out to stay within the budget of 4,000,000 server-ticks (--budget N allows more): the map.')
    expect(r.stdout).toContain('Tipping point: with 6 broken it comes back on its own only below 1,402 rps')
    expect(r.stdout).not.toContain('The map:')
    expect(r.stderr).toContain(`--svg: ${join(dir, 'map.svg')} not written: the map was left out to stay within the budget`)
  }, 60_000)
})
