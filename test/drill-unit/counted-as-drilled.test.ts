import {describe, expect, it} from 'vitest'
import type {Gate} from '../../src/runbook/gate.js'
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

  it("a gate's minRequests is asked of the prediction at the drill's count, as of the real side", async () => {
    // A threshold gate a user would set, asking 600 requests a window: green's 10 s windows hold
    // 1,500 at the full count, 375 at a quarter, where the drill asks 150 of the real side.
    const target = loadDrillTarget('drill-judge-regression', undefined)
    if (target.kind !== 'runbook') throw new Error('drill-judge-regression is a runbook')
    const step = target.runbook.steps[0]
    if (!('gate' in step) || !step.gate) throw new Error('its step has a gate')
    const gate: Gate = {...step.gate, judge: 'threshold', baseline: undefined, threshold: 5, window: 10, interval: 5, minRequests: 600}
    const thresholded = {...target, runbook: {...target.runbook, steps: [{...step, gate}]}}
    const [full, quarter] = await Promise.all([predict(thresholded, 1), predict(thresholded, 0.25)])
    expect(full.runbook!.outcome, full.runbook!.message).toBe('completed')
    // Asked 600 of 375, every verdict would be inconclusive and the gate would fail on missing data.
    expect(quarter.runbook!.outcome, quarter.runbook!.message).toBe('completed')
    expect(quarter.runbook!.steps[0].lastVerdict).not.toMatch(/fewer than minRequests/)
  })
})
