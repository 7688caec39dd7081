import {describe, expect, it} from 'vitest'
import {
  drillFleetConfig,
  drillLoadConfig,
  drillQueueSeconds,
  queuedAsDrilled,
  scenarioTimeline,
  unboundedQueueSeconds,
  withDrillQueues,
  toScenarioRate,
  toScenarioTime,
} from '../../src/drill/scale.js'
import {loadSeries, type LoadRecord} from '../../src/drill/load-generator.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {simulateSetups} from '../../src/sim/simulate.js'
import {scenarioSchema} from '../../src/sim/scenario/schema.js'
import {workersFor} from '../../src/drill/server.js'

describe('a scenario scaled for a drill', () => {
  it('multiplies rates by the rate scale and durations by the time scale, and keeps the service time', () => {
    const {scenario} = loadScenario('outlook-recovery')
    const scales = {rateScale: 0.5, timeScale: 0.1}
    const fleet = drillFleetConfig(withDrillQueues(scenario, 2), scales)
    const source = scenario.pools[0]
    const pool = fleet.pools[0]
    expect(pool.servers).toBe(source.servers)
    expect(pool.capacity).toBe(source.capacity! * 0.5)
    expect(pool.serviceTime).toBe(source.serviceTime)
    expect(pool.warmupSeconds).toBeCloseTo(source.warmupSeconds * 0.1)
    expect(pool.restartSeconds).toBeCloseTo(source.restartSeconds * 0.1)
    expect(pool.coldFactor).toBe(source.coldFactor)
    expect(pool.threads).toBeGreaterThanOrEqual(workersFor(pool))
    // Two scenario seconds of capacity (the queue given for pools that declare none), scaled like the clients' timeout.
    expect(pool.queueLimit).toBe(Math.ceil(pool.capacity * 2 * 0.1))
    // A drill may say how deep its servers queue (--queue-seconds): 8 s of work, scaled the same way.
    expect(drillFleetConfig(withDrillQueues(scenario, 2, 8), scales).pools[0].queueLimit).toBe(Math.ceil(pool.capacity * 8 * 0.1))

    const load = drillLoadConfig(scenario, scales, {host: '127.0.0.1', port: 8080})
    expect(load.duration).toBeCloseTo(scenario.duration * 0.1)
    expect(load.clients.timeout).toBeCloseTo(scenario.clients.timeout * 0.1)
    expect(load.clients.attempts).toBe(scenario.clients.attempts)
    const demand = scenario.demand.curve ?? [[0, scenario.demand.rps!]]
    expect(load.curve).toEqual(demand.map(([t, rps]) => [expect.closeTo(t * 0.1), rps * 0.5]))
    expect(load.types.map((t) => t.name)).toEqual(Object.keys(scenario.demand.types))
    // Back in the scenario's terms.
    expect(toScenarioTime(load.duration, scales)).toBeCloseTo(scenario.duration)
    expect(toScenarioRate(load.curve[0][1], scales)).toBeCloseTo(demand[0][1])
    // Each repeat of a drill draws its own arrivals; the first draws the scenario's seed's.
    const seeds = [0, 1, 2].map((run) => drillLoadConfig(scenario, scales, {host: '127.0.0.1', port: 8080}, run).seed)
    expect(seeds[0]).toBe(scenario.seed)
    expect(new Set(seeds).size).toBe(3)
  })

  it("queues as the drill says, else as the scenario's pool does, else deep enough to stand for the model's unbounded queue", () => {
    const {scenario} = loadScenario('outlook-recovery')
    const queues = (s: typeof scenario) => s.pools.map((p) => p.queueSeconds)
    // Unbounded in the model: twice the longer of the clients' timeout and the check's, so every
    // check a full queue holds is late and every answer comes after its client gave up.
    expect(unboundedQueueSeconds(5, 2)).toBe(10)
    expect(unboundedQueueSeconds(1, 3)).toBe(6)
    // The sorry pool has no servers to queue on.
    expect(queues(withDrillQueues(scenario, 10))).toEqual(scenario.pools.map((p) => (p.kind === 'servers' ? 10 : undefined)))
    const own = {...scenario, pools: scenario.pools.map((p) => (p.kind === 'servers' ? {...p, queueSeconds: 6} : p))}
    expect(drillQueueSeconds(withDrillQueues(own, 10))).toBe(6)
    expect(drillQueueSeconds(withDrillQueues(own, 10, 1))).toBe(1)
    expect(drillFleetConfig(withDrillQueues(own, 10), {rateScale: 1, timeScale: 1}).pools[0].queueLimit).toBe(Math.ceil(own.pools[0].capacity! * 6))
  })

  it('predicts with the queues the real servers get: a setup that shortens the clients moves the default, and --queue-seconds moves the prediction', () => {
    const {scenario} = loadScenario('outlook-2026-haproxy')
    const [setup] = pickSetups(scenario, ['no-guard'])
    expect(drillQueueSeconds(queuedAsDrilled({scenario, setup}).scenario)).toBe(10)
    const impatient = {name: 'impatient', policy: {...setup.policy, clients: {timeout: 1}}}
    // Twice the longer of the clients' 1 s and the check's 2 s.
    expect(drillQueueSeconds(queuedAsDrilled({scenario, setup: impatient}).scenario)).toBe(4)
    // At the mean, where the queue's depth alone decides it (drawn, the deep queue leaves 5 in rotation on seed 1).
    const predicted = (queueSeconds?: number) => {
      const drilled = queuedAsDrilled({scenario: {...scenario, randomness: 'none'}, setup}, queueSeconds)
      return simulateSetups(drilled.scenario, [drilled.setup]).setups[0].summary
    }
    // Deep queues are the model's unbounded one; 1 s queues answer the checks in time and the pool holds.
    expect(predicted().minInRotation).toBe(0)
    expect(predicted(1).minInRotation).toBeGreaterThan(10)
  })

  it('scales threads by both scales, so held threads run out at the scenario point', () => {
    const {scenario} = loadScenario('cafe-2024')
    const pool = drillFleetConfig(withDrillQueues(scenario, 2), {rateScale: 0.5, timeScale: 0.2}).pools[0]
    expect(pool.threads).toBe(Math.round(scenario.pools[0].threads! * 0.5 * 0.2))
  })

  it('spreads capacities over the scenario range, and skips sorry pools', () => {
    const {scenario} = loadScenario('cafe-2024')
    const pool = drillFleetConfig(withDrillQueues(scenario, 2), {rateScale: 1, timeScale: 1}).pools[0]
    const spread = scenario.pools[0].capacitySpread
    const capacity = scenario.pools[0].capacity!
    expect(Math.min(...pool.capacities!)).toBeCloseTo(capacity * (1 - spread))
    expect(Math.max(...pool.capacities!)).toBeCloseTo(capacity * (1 + spread))
    const mean = pool.capacities!.reduce((a, b) => a + b, 0) / pool.capacities!.length
    expect(mean).toBeCloseTo(capacity)
    const withSorry = scenarioSchema.parse({
      name: 'sorry',
      pools: [
        {name: 'web', servers: 2, capacity: 10},
        {name: 'maintenance', kind: 'sorry'},
      ],
      demand: {rps: 5},
      dns: {weights: {web: 100, maintenance: 0}},
      setups: {plain: {}},
    })
    expect(drillFleetConfig(withDrillQueues(withSorry, 2), {rateScale: 1, timeScale: 1}).pools.map((p) => p.name)).toEqual(['web'])
  })

  it('reads a drill record back in scenario seconds and scenario requests per second', () => {
    const series = Object.fromEntries(loadSeries.map((k) => [k, [0, 0]])) as LoadRecord['series']
    series.served = [50, 40]
    const record: LoadRecord = {
      bucketSeconds: 0.1,
      t: [0, 0.1],
      series,
      latencyP99: [12, NaN],
      cpuSeconds: 0,
      wallSeconds: 0.2,
      inFlightAtStop: 0,
      loopDelay: {p99: 0, max: 0},
    }
    const timeline = scenarioTimeline(record, {rateScale: 0.5, timeScale: 0.1})
    expect([...timeline.t]).toEqual([0, 1])
    expect([...timeline.series.served]).toEqual([100, 80])
    expect([...timeline.latencyP99]).toEqual([12, NaN])
  })
})
