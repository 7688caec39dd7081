import {describe, expect, it} from 'vitest'
import {realTimeline} from '../../src/drill/timeline.js'
import {loadSeries, type LoadRecord, type LoadSeriesKey} from '../../src/drill/load-generator.js'

/** A load record of quarter-second buckets with the given demand and served rates (per wall second). */
function record(demand: number[], served: number[]): LoadRecord {
  const series = Object.fromEntries(loadSeries.map((k) => [k, demand.map(() => 0)])) as Record<LoadSeriesKey, number[]>
  series.demand = demand
  series.served = served
  return {
    bucketSeconds: 0.25,
    t: demand.map((_, i) => i * 0.25),
    series,
    latencyP99: demand.map(() => Number.NaN),
    cpuSeconds: 1,
    wallSeconds: demand.length * 0.25,
    inFlightAtStop: 0,
    loopDelay: {p99: 1, max: 2},
  }
}

describe('realTimeline', () => {
  const scales = {rateScale: 0.2, timeScale: 0.25}

  it("puts the load's buckets in scenario seconds and rps, and drops the last one the stop cut short", () => {
    const line = realTimeline(record([40, 40, 44, 38, 40], [40, 30, 44, 20, 5]), {t: [], inRotation: []}, scales)
    expect(Array.from(line.t)).toEqual([0, 1, 2, 3])
    expect(Array.from(line.demand)).toEqual([200, 200, 220, 190])
    expect(Array.from(line.served)).toEqual([200, 150, 220, 100])
    expect(line.inRotation).toHaveLength(4)
    expect(Array.from(line.inRotation).every(Number.isNaN)).toBe(true)
  })

  it('takes servers in rotation from the last sample in each bucket, NaN where there is none', () => {
    const samples = {
      // Buckets end at 0.25, 0.5, 0.75 and 1 s (wall); a sample at an end belongs to the next one.
      t: [0.1, 0.2, 0.5, 0.6, 0.74, 1.1],
      inRotation: [4, 3, 2, 1, 0, 4],
    }
    const line = realTimeline(record([40, 40, 40, 40, 40], [40, 40, 40, 40, 40]), samples, scales)
    expect(Array.from(line.inRotation)).toEqual([3, Number.NaN, 0, Number.NaN])
  })

  it('is empty for a record of one bucket or none', () => {
    expect(realTimeline(record([40], [40]), {t: [0.1], inRotation: [4]}, scales).t).toHaveLength(0)
    expect(realTimeline(record([], []), {t: [], inRotation: []}, scales).t).toHaveLength(0)
  })
})
