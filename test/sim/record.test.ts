import {describe, expect, it} from 'vitest'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {Fleet} from '../../src/sim/fleet.js'
import {SimMetrics} from '../../src/sim/adapters/metrics.js'
import {fullResolutionPoints, fullServiceShare, recordSeries, SimulationRecord, type TickValues} from '../../src/sim/record.js'
import {summarize} from '../../src/sim/summary.js'
import {faultWindow} from '../../src/sim/fault-window.js'

const tick = (t: number, served: number): TickValues => {
  const v = Object.fromEntries(recordSeries.map((k) => [k, 0])) as TickValues
  return {...v, t, demand: 100, offered: 100, served}
}

describe('the record keeps a bounded number of points', () => {
  it('one a tick up to the bound, then each the mean of its ticks, with their lowest and highest kept', () => {
    const record = new SimulationRecord(1000, 1, ['p'], null, 8)
    // A saw with one spike: a mean alone would hide it.
    const served = Array.from({length: 100}, (_, i) => (i === 37 ? 1000 : i % 4))
    served.forEach((v, i) => {
      record.pool(0, {offered: 100, served: v, failed: 0, inRotation: 1, latencyP99: Number.NaN})
      record.commit(tick(i, v))
      expect(record.ticks).toBeLessThanOrEqual(8)
    })
    expect(record.stride).toBe(16)
    expect(record.resolution).toBe(16)
    expect(record.ticks).toBe(7)
    const range = record.range('served')!
    for (let j = 0; j < record.ticks; j++) {
      const ticks = served.slice(16 * j, 16 * (j + 1))
      expect(record.t[j]).toBe(16 * j)
      expect(record.served[j]).toBeCloseTo(ticks.reduce((a, b) => a + b, 0) / ticks.length, 9)
      expect(range.low[j]).toBe(Math.min(...ticks))
      expect(range.high[j]).toBe(Math.max(...ticks))
      // A latency with no traffic stays no data, not 0.
      expect(record.pools[0].latencyP99[j]).toBeNaN()
    }
    expect(record.last.served).toBe(served[99])
  })

  it('has no envelope while every point is one tick', () => {
    const record = new SimulationRecord(10, 1, [], null, 8)
    for (let i = 0; i < 8; i++) record.commit(tick(i, 1))
    expect(record.range('served')).toBeNull()
    expect(Array.from(record.served.subarray(0, record.ticks))).toEqual(new Array(8).fill(1))
  })
})

describe('past the bound, a run is summed up exactly and its gates read every tick', () => {
  // outlook-2026 for twice the bound and more: the record downsamples, the figures must not.
  const ticks = 2 * fullResolutionPoints + 1234
  const {scenario} = loadScenario('outlook-2026', {duration: ticks})
  const config = fleetConfig(scenario, pickSetups(scenario, ['no-guard'])[0].policy)
  const fleet = new Fleet(config)
  const seen: Record<'t' | 'demand' | 'offered' | 'served' | 'failed' | 'inRotation' | 'restrictedDemand', number[]> = {
    t: [],
    demand: [],
    offered: [],
    served: [],
    failed: [],
    inRotation: [],
    restrictedDemand: [],
  }
  const poolTicks: Array<{offered: number; failed: number}> = []
  const commit = fleet.record.commit.bind(fleet.record)
  const pool = fleet.record.pool.bind(fleet.record)
  fleet.record.commit = (v) => {
    for (const k of Object.keys(seen) as Array<keyof typeof seen>) seen[k].push(v[k])
    commit(v)
  }
  fleet.record.pool = (p, v) => {
    poolTicks.push({offered: v.offered, failed: v.failed})
    pool(p, v)
  }

  it('the summary is the one taken from every tick', () => {
    fleet.runUntil(ticks - 500)
    const metrics = new SimMetrics(fleet)
    const window = faultWindow(config.faults)!
    // What summary.ts computed from a full-resolution record before it streamed.
    let demand = 0,
      served = 0,
      min = Infinity,
      peak = 0,
      during = 0,
      count = 0,
      since: number | null = null
    const check = () => {
      demand = served = peak = during = count = 0
      min = Infinity
      since = null
      for (let i = 0; i < seen.t.length; i++) {
        demand += seen.demand[i]
        served += seen.served[i]
        min = Math.min(min, seen.inRotation[i])
        if (seen.offered[i] > 0) peak = Math.max(peak, seen.failed[i] / seen.offered[i])
        if (seen.t[i] >= window.from && seen.t[i] < window.to) {
          during += seen.served[i]
          count++
        }
      }
      for (let i = seen.t.length - 1; i >= 0; i--) {
        if (seen.served[i] + 1e-9 < fullServiceShare * Math.max(0, seen.demand[i] - seen.restrictedDemand[i])) break
        since = seen.t[i]
      }
    }
    check()
    expect(fleet.record.stride).toBeGreaterThan(1)
    expect(fleet.record.ticks).toBeLessThanOrEqual(fullResolutionPoints)
    const summary = summarize(fleet.record, window)
    expect(summary.meanServedDuringFault).toBe(during / count)
    expect(summary.lostPercent).toBe(Math.max(0, ((demand - served) / demand) * 100))
    expect(summary.minInRotation).toBe(min)
    expect(summary.peakErrorRatePercent).toBe(peak * 100)
    expect(summary.recoveredSecondsAfterFix).toBe(since === null ? null : Math.max(0, since - window.to))
    return metrics.read('error-rate', 30).then(({value: rate, requests}) => {
      const last = poolTicks.slice(-30)
      const offered = last.reduce((a, b) => a + b.offered, 0)
      const failed = last.reduce((a, b) => a + b.failed, 0)
      expect(rate).toBe((failed / offered) * 100)
      // The record holds rates: the window's requests are their sum times the tick.
      expect(requests).toBeCloseTo(offered * fleet.dt, 6)
    })
  })
})
