import {describe, expect, it} from 'vitest'
import {ScenarioRun} from '../../src/sim/scenario-run.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {classify, runCell} from '../../src/sweep/classify.js'
import {buildAxes} from '../../src/sweep/grid.js'
import {outcomeCounts, runSweep, sweepJson, tippingRow} from '../../src/sweep/sweep.js'
import {cellRunner} from '../../src/sweep/workers.js'

const {scenario} = loadScenario('outlook-2026')
const setups = pickSetups(scenario, 'all')

describe('one cell', () => {
  it('is the run simulate makes: the seed numbers give no-guard stuck and cap-shed-slow-start back within seconds', () => {
    const job = {scenario, setups, params: ['broken', 'demand']}
    expect(runCell(job, {setup: 0, x: 6, y: 1500}).outcome).toBe('stuck')
    const guarded = runCell(job, {setup: 3, x: 6, y: 1500})
    expect(guarded.outcome).toBe('recovered')
    expect(guarded.recoveredSecondsAfterFix).toBeLessThanOrEqual(15)
    expect(guarded.meanServedDuringFault).toBeGreaterThan(1260)
    expect(runCell(job, {setup: 0, x: 0, y: 1500})).toMatchObject({outcome: 'unharmed', recoveredSecondsAfterFix: 0})
  })

  it('classifies from the run summary: stuck exactly when not at full service at the end', () => {
    for (const {policy} of setups) {
      const {record, summary} = new ScenarioRun(scenario, policy).finish()
      const cell = classify(record, summary)
      expect(cell.outcome === 'stuck').toBe(summary.recoveredSecondsAfterFix === null)
      expect(cell.meanServedDuringFault).toBe(summary.meanServedDuringFault)
    }
  })
})

describe('runSweep, in this thread', () => {
  it('maps every setup; no-guard has a stuck region that cap-shed-slow-start does not, and the edge is bisected', async () => {
    const axes = buildAxes(['broken=0..20:6', 'demand=500..2000:4'], scenario, setups.length)
    const result = await runSweep(scenario, setups, axes, cellRunner({scenario, setups, params: ['broken', 'demand']}, 1))
    expect(result.setups.map((s) => s.name)).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
    for (const s of result.setups) expect(s.cells).toHaveLength(24)
    const noGuard = outcomeCounts(result.setups[0].cells)
    const guarded = outcomeCounts(result.setups[3].cells)
    expect(noGuard.stuck).toBeGreaterThan(0)
    expect(guarded.unharmed + guarded.recovered).toBeGreaterThan(noGuard.unharmed + noGuard.recovered)
    // 1,500 rps, the scenario's own demand, is a row of this grid (500, 1,000, 1,500, 2,000).
    expect(result.setups[0].tipping.y).toBe(1500)
    const tip = result.setups[0].tipping.transitions[0]
    // The grid has 0, 4, 8, …: bisection must say more than the grid does.
    expect(tip.stuck - tip.holds).toBe(1)
    expect(result.setups[0].sentence).toMatch(new RegExp(`^no-guard tips into a stuck pool when more than ${tip.holds} of 20 servers break at 1,500 rps`))
    expect(result.setups[3].sentence).toMatch(/^cap-shed-slow-start never tips into a stuck pool within the sweep at 1,500 rps/)
  })

  it("runs the scenario's own row when it falls between grid rows, and keeps it out of the grid", async () => {
    const axes = buildAxes(['broken=0..20:3', 'demand=1000..2000:3'], scenario, 1)
    expect(tippingRow(axes[1], scenario)).toBe(1500)
    const one = setups.slice(0, 1)
    const result = await runSweep(scenario, one, axes, cellRunner({scenario, setups: one, params: ['broken', 'demand']}, 1))
    const json = sweepJson(result)
    expect(json.setups[0].cells.map((c) => c.y)).toEqual([1000, 1000, 1000, 1500, 1500, 1500, 2000, 2000, 2000])
    expect(json.setups[0].edges).toHaveLength(3)
    expect(json.setups[0].tipping.at).toEqual({param: 'demand', value: 1500})
  })

  it('says when the edge is where demand passes what the healthy pool serves: too small a pool, not a stuck one', async () => {
    const one = pickSetups(scenario, ['cap-shed-slow-start'])
    const axes = buildAxes(['demand=1500..2500:3'], scenario, 1)
    const [s] = (await runSweep(scenario, one, axes, cellRunner({scenario, setups: one, params: ['demand']}, 1))).setups
    const tip = s.tipping.transitions[0]
    expect(tip.into).toBe(true)
    expect(tip.stuck).toBeGreaterThan(2000)
    expect(s.sentence).toMatch(
      /^cap-shed-slow-start tips into a stuck pool when demand is above [\d,]+ rps \(there demand is past the 2,000 rps the pool serves with every server healthy: too small a pool, not a stuck one\)\.$/,
    )
  })

  it('--json has each cell as {x, y, outcome, recoveredSecondsAfterFix, meanServedDuringFault} and the figures behind each sentence', async () => {
    const one = setups.slice(0, 1)
    const axes = buildAxes(['broken=4..8'], scenario, 1)
    const json = sweepJson(await runSweep(scenario, one, axes, cellRunner({scenario, setups: one, params: ['broken']}, 1)))
    expect(json.axes).toEqual([{param: 'broken', unit: 'servers', from: 4, to: 8, values: [4, 5, 6, 7, 8]}])
    const [s] = json.setups
    for (const cell of s.cells) expect(Object.keys(cell)).toEqual(['x', 'y', 'outcome', 'recoveredSecondsAfterFix', 'meanServedDuringFault'])
    expect(s.cells.map((c) => c.x)).toEqual([4, 5, 6, 7, 8])
    expect(s.cells.every((c) => c.y === null)).toBe(true)
    const firstStuck = s.cells.find((c) => c.outcome === 'stuck')!
    expect(firstStuck.recoveredSecondsAfterFix).toBeNull()
    expect(s.tipping.stuckFrom).toBe(firstStuck.x)
    expect(s.tipping.holdsUpTo).toBe(firstStuck.x - 1)
    expect(json.tippingPoints).toEqual([s.tipping.sentence])
  })
})
