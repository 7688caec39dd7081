import {describe, expect, it} from 'vitest'
import {fitCapacity, fitDemand, fitQueue} from '../../src/calibrate/fit.js'
import type {PoolPeriod} from '../../src/ports/pool-readings.js'
import {Random} from '../../src/sim/random.js'

/**
 * A day of minute periods of a pool of `servers` with a true per-server `capacity`: demand on a
 * diurnal curve from `low` to `high` rps; past capacity a server answers what it can and the rest
 * fails; latency is flat until utilisation `kneeAt` and climbs after it. 2% noise on every reading.
 */
function day(o: {servers: number; capacity: number; low: number; high: number; kneeAt?: number; seed?: number}): PoolPeriod[] {
  const random = new Random(o.seed ?? 7)
  const noise = () => 1 + (random.next() - 0.5) * 0.04
  const kneeAt = o.kneeAt ?? 1
  return Array.from({length: 1440}, (_, i) => {
    const rps = (o.low + (o.high - o.low) * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / 1440))) * noise()
    const perServer = rps / o.servers
    const served = Math.min(perServer, o.capacity * noise())
    const utilisation = perServer / o.capacity
    const latency = (0.05 + Math.max(0, utilisation - kneeAt) * 2) * noise()
    return {at: 1_700_000_000 + i * 60, requests: rps * 60, errors: Math.max(0, perServer - served) * o.servers * 60, healthy: o.servers, latency}
  })
}

describe('calibrate: capacity and demand from a window of metrics', () => {
  it('finds the plateau where the window overloaded the pool, within a few percent, with an interval around it', () => {
    const fit = fitCapacity(day({servers: 10, capacity: 100, low: 400, high: 1300}), 60)
    expect(fit.method).toBe('plateau')
    expect(Math.abs(fit.capacity.value - 100) / 100).toBeLessThan(0.05)
    expect(fit.capacity.low!).toBeLessThanOrEqual(fit.capacity.value)
    expect(fit.capacity.high!).toBeGreaterThanOrEqual(fit.capacity.value)
    expect(fit.capacity.high! - fit.capacity.low!).toBeLessThan(10)
    expect(fit.pastKnee).toBeGreaterThan(100)
  })

  it('without overload, finds the latency knee, and says it is where queueing starts', () => {
    const fit = fitCapacity(day({servers: 10, capacity: 100, low: 300, high: 950, kneeAt: 0.8}), 60)
    expect(fit.method).toBe('latency-knee')
    expect(Math.abs(fit.capacity.value - 80) / 80).toBeLessThan(0.1)
    expect(fit.capacity.source).toContain('at or below the true capacity')
  })

  it('with neither, gives a lower bound and says the true capacity may be well above', () => {
    const fit = fitCapacity(day({servers: 10, capacity: 100, low: 200, high: 500}), 60)
    expect(fit.method).toBe('lower-bound')
    expect(fit.capacity.how).toBe('bound')
    expect(fit.capacity.value).toBeGreaterThan(45)
    expect(fit.capacity.value).toBeLessThan(55)
  })

  it('is the same for the same metrics, and refuses a window with nothing in it', () => {
    const periods = day({servers: 10, capacity: 100, low: 400, high: 1300})
    expect(fitCapacity(periods, 60)).toEqual(fitCapacity(periods, 60))
    expect(() => fitCapacity([], 60)).toThrow('nothing to fit a capacity on')
  })

  it('gives demand its mean, peak and a curve of the day', () => {
    const demand = fitDemand(day({servers: 10, capacity: 100, low: 400, high: 1300}), 60, 24)
    expect(demand.curve).toHaveLength(24)
    expect(demand.curve[0][0]).toBe(0)
    expect(demand.peak.value).toBeGreaterThan(1250)
    expect(demand.mean.value).toBeGreaterThan(800)
    expect(demand.mean.value).toBeLessThan(900)
    expect(Math.max(...demand.curve.map((p) => p[1]))).toBeGreaterThan(1200)
  })

  it("reads a server's queue from the response time of periods well past capacity, and none where the window shows none", () => {
    // Past capacity a server answers what it queued, 2 s of work late: 2.1 s with 0.1 s of service.
    const periods: PoolPeriod[] = Array.from({length: 40}, (_, i) => {
      const perServer = 10 + i
      const over = perServer > 20
      return {at: i * 5, requests: perServer * 4 * 5, errors: over ? (perServer - 20) * 4 * 5 : 0, healthy: 4, latency: over ? 2.1 : 0.1}
    })
    const queue = fitQueue(periods, 5, 20, 0.1)!
    expect(queue.value).toBeCloseTo(2, 1)
    expect(queue.how).toBe('measured')
    expect(fitQueue(periods.slice(0, 12), 5, 20, 0.1)).toBeNull()
  })

  it('reads nothing of capacity from a period in which servers went in or out of rotation', () => {
    // A cascade: servers taken out still answer what they queued, divided among the few left in.
    const churn: PoolPeriod[] = Array.from({length: 30}, (_, i) => ({
      at: 2e9 + i * 60,
      requests: 1200 * 60,
      errors: 0,
      healthy: 3,
      latency: 0.5,
      rotationChanged: true,
    }))
    const periods = [...day({servers: 10, capacity: 100, low: 400, high: 1300}), ...churn]
    expect(Math.abs(fitCapacity(periods, 60).capacity.value - 100) / 100).toBeLessThan(0.05)
    // The same periods read as settled pull the plateau far off: the filter is what keeps it.
    const settled = periods.map((p) => ({...p, rotationChanged: false}))
    expect(Math.abs(fitCapacity(settled, 60).capacity.value - 100) / 100).toBeGreaterThan(0.2)
  })
})
