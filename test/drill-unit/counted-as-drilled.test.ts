import {describe, expect, it} from 'vitest'
import {SimMetrics} from '../../src/sim/adapters/metrics.js'
import {ScenarioRun} from '../../src/sim/scenario-run.js'
import {predict} from '../../src/wiring/drill.js'
import {loadDrillTarget} from '../../src/wiring/drill-target.js'

// A drill's real fleet serves rate scale × time scale of the scenario's requests, and its gates
// count those. The prediction's gates count as many (predict's countScale): a judge that weighs
// requests is given what the real run's will have, not the scenario's full count.

describe("a drill's prediction counts the requests its real fleet serves", () => {
  it('the simulated metrics give a gate countScale of each window’s requests, at the same rate', async () => {
    const {scenario, setup} = loadDrillTarget('drill-judge-regression', undefined)
    const {fleet} = new ScenarioRun(scenario, setup.policy)
    fleet.runUntil(60)
    const [full, quarter] = await Promise.all([
      new SimMetrics(fleet).read('error-rate', 10, 'blue'),
      new SimMetrics(fleet, 0.25).read('error-rate', 10, 'blue'),
    ])
    expect(full.requests).toBeGreaterThan(1000)
    expect(quarter.requests).toBeCloseTo(full.requests! / 4, 6)
    expect(quarter.value).toBe(full.value)
  })

  it('the counts judge fails green at the full count, later at a quarter, and holds at a sixteenth, where it cannot tell 1 point apart in its bake', async () => {
    const target = loadDrillTarget('drill-judge-regression', undefined)
    const [full, quarter, sixteenth] = await Promise.all([predict(target, 1), predict(target, 0.25), predict(target, 1 / 16)])
    const step = (p: typeof full) => p.runbook!.steps[0]
    expect(full.runbook!.outcome).toBe('gate-failed')
    expect(quarter.runbook!.outcome).toBe('gate-failed')
    expect(step(quarter).endedAt!).toBeGreaterThan(step(full).endedAt!)
    expect(sixteenth.runbook!.outcome).toBe('held')
    expect(step(sixteenth).lastVerdict).toMatch(/green [\d.]+% of [\d,]+ against blue .*→ inconclusive/)
  })
})
