import {describe, expect, it} from 'vitest'
import {failuresOf} from '../../src/drill/timeline.js'
import type {LoadRecord} from '../../src/drill/load-generator.js'
import {loadDrillTarget} from '../../src/wiring/drill-target.js'
import {notEnacted, predict} from '../../src/wiring/drill.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

// What a drill compares has to be what both sides did: the same start, the same units.

describe('a drill of a runbook', () => {
  it("predicts from the runbook's own start (rehearsal.startAt), where the real run starts too", async () => {
    const target = loadDrillTarget('outlook-staged-return-haproxy', undefined)
    expect(target.kind === 'runbook' && target.runbook.rehearsal?.startAt).toBe(300)
    const predicted = await predict(target)
    expect(predicted.startAt).toBe(300)
  })
})

describe('failuresOf', () => {
  it("counts in the scenario's units: a real count divided by the rate scale and the time scale", () => {
    // Four wall seconds at 20 timeouts a second is 80 real timeouts; at a rate scale of 0.1 and a
    // time scale of 0.25 that load stands for 80 / 0.1 / 0.25 = 3200 in the scenario.
    const zeros = [0, 0, 0, 0, 0]
    const record: LoadRecord = {
      bucketSeconds: 1,
      t: [0, 1, 2, 3, 4],
      series: {timeouts: [20, 20, 20, 20, 999]} as unknown as LoadRecord['series'],
      latencyP99: zeros,
      cpuSeconds: 0,
      wallSeconds: 5,
      inFlightAtStop: 0,
    } as LoadRecord
    for (const key of ['refused', 'errors', 'rejected', 'givenUp'] as const) (record.series as Record<string, number[]>)[key] = zeros
    const scales = {rateScale: 0.1, timeScale: 0.25}
    expect(failuresOf(record, scales, 0).timeouts).toBeCloseTo(3200)
    // From scenario second 8 (wall second 2): the last two whole buckets.
    expect(failuresOf(record, scales, 8).timeouts).toBeCloseTo(1600)
  })
})

describe('settings the fleet does not enact', () => {
  it('are refused by name: a churn of client connections, a collapse other than 1; the shipped drills set neither', () => {
    for (const name of ['drill-headroom', 'outlook-2026-haproxy', 'outlook-recovery-haproxy']) expect(notEnacted(loadScenario(name).scenario)).toEqual([])
    const {scenario} = loadScenario('drill-headroom')
    const churning = {...scenario, pools: scenario.pools.map((p) => ({...p, connectionChurn: 0.2, collapse: 0.5}))}
    expect(notEnacted(churning)).toEqual([
      "drill-headroom: pools[0].connectionChurn is 0.2, which the drill's fleet does not enact: its servers see HAProxy's connections, which HAProxy keeps open; drill it with connectionChurn 0",
      "drill-headroom: pools[0].collapse is 0.5, which the drill's fleet does not enact: its servers waste what they really waste, answering queued requests whose clients have gone; drill it with the default collapse 1",
    ])
  })
})
