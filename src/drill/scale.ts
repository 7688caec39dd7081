import {fleetConfig, serviceSpreadOf} from '../sim/scenario/load-scenario.js'
import type {Scenario, SetupPolicy} from '../sim/scenario/schema.js'
import type {FleetConfig, FleetPoolConfig} from './fleet.js'
import {loadSeries, type LoadClients, type LoadConfig, type LoadRecord, type LoadSeriesKey, type LoadTarget} from './load-generator.js'

/**
 * How a drill shrinks a scenario to fit a small machine, with two numbers it prints:
 *
 * - rateScale multiplies every rate: each server's capacity and the demand curve, so the ratio of
 *   demand to capacity (what decides overload) is the scenario's. 0.1 turns 100 rps servers and
 *   a 4,000 rps demand into 10 rps servers and 400 rps.
 * - timeScale multiplies every duration on the scenario's timeline: the run and its faults,
 *   warm-up, restarts, held threads, client timeouts, backoff, the retry budget's window and
 *   Retry-After. 0.1 plays a 600 s scenario in 60 s.
 * - The service time is not scaled: it stays the scenario's, a real request's, so queueing and a
 *   health check's view of a busy server stay real. Capacity is realised as capacity × service
 *   time concurrent workers (at least one), so a rate scale too small for that rounds capacity.
 * - Threads count requests open at once. Held threads are a rate times a hold time, so threads
 *   scale by rateScale × timeScale and run out at the scenario's point; never below the workers.
 *
 * - A server's queue holds the pool's queueSeconds of its capacity (withDrillQueues), scaled like
 *   every duration.
 *
 * Series come back in the scenario's terms by dividing rates by rateScale and times by timeScale
 * (scenarioTimeline).
 */
export interface DrillScales {
  rateScale: number
  timeScale: number
}

/**
 * How deep the drill's real servers queue, in scenario seconds of their capacity, for a pool that
 * does not say (no queueSeconds). The simulator's queue is then unbounded; a real server's cannot
 * be, so the drill realises it as twice the longer of the clients' timeout and the check interval
 * (HAProxy's check timeout): deep enough that a full queue answers every check late and answers
 * requests only after their clients have given up, which is all that unbounded means in the model.
 * A shallower queue changes the physics (src/sim/pool.ts), so it is the pool's or --queue-seconds'
 * to set, never a default. Scaled by the time scale like every duration.
 */
export function unboundedQueueSeconds(clientTimeout: number, checkInterval: number): number {
  return 2 * Math.max(clientTimeout, checkInterval)
}

/**
 * The scenario as the drill plays it: each server pool's queue is what its real servers get
 * (`queueSeconds` when the drill is given one, else the pool's own, else `unbounded`), so the
 * simulator's prediction models the queues the fleet really has.
 */
export function withDrillQueues(scenario: Scenario, unbounded: number, queueSeconds?: number): Scenario {
  return {...scenario, pools: scenario.pools.map((p) => (p.kind === 'servers' ? {...p, queueSeconds: queueSeconds ?? p.queueSeconds ?? unbounded} : p))}
}

/** A drill's scenario (and setup) with the queues withDrillQueues gives it, for the prediction and the fleet alike. */
export function queuedAsDrilled<T extends {scenario: Scenario; setup: {policy: SetupPolicy}}>(target: T, queueSeconds?: number): T {
  const {clients, healthCheck} = fleetConfig(target.scenario, target.setup.policy)
  return {...target, scenario: withDrillQueues(target.scenario, unboundedQueueSeconds(clients.timeout, healthCheck.interval), queueSeconds)}
}

/**
 * A drill's target with each server pool's service time as the drill's servers give it. They
 * serve in real time while every timeout shrinks with the time scale, so a request of
 * serviceTime wall seconds takes serviceTime / timeScale of the scenario's: at a half, 0.1 s is
 * 0.2 s, a tenth more of a 2 s timeout gone to service. The prediction is of the fleet that runs
 * (timeScaleFloor keeps the difference within a quarter of every timeout).
 */
export function servedAsDrilled<T extends {scenario: Scenario}>(target: T, timeScale: number): T {
  const pools = target.scenario.pools.map((p) => (p.kind === 'servers' ? {...p, serviceTime: p.serviceTime / timeScale} : p))
  return {...target, scenario: {...target.scenario, pools}}
}

/**
 * The scenario as the drill's load draws it, once for each of `seeds` seeds: Poisson arrivals at
 * the drill's count of requests (rate scale × time scale of the scenario's), which burst by
 * 1 / √(rate × time scale) more than the scenario's own. The seeds follow the repeats' (the
 * scenario's seed plus the run), from the scenario's seed on.
 */
export function drawnAsDrilled<T extends {scenario: Scenario}>(target: T, scales: DrillScales, seeds: number): T[] {
  const {scenario} = target
  return Array.from({length: seeds}, (_, k) => ({
    ...target,
    scenario: {
      ...scenario,
      seed: scenario.seed + k,
      demand: {...scenario.demand, arrivals: 'poisson' as const, sampleScale: scales.rateScale * scales.timeScale},
    },
  }))
}

/** The drill's queue, as its report says it: the first server pool's (withDrillQueues has set them all). */
export function drillQueueSeconds(scenario: Scenario): number {
  return scenario.pools.find((p) => p.kind === 'servers')!.queueSeconds!
}

/** The loopback fleet for a scenario whose queues withDrillQueues has set: a pool's queue must be bounded. */
export function drillFleetConfig(scenario: Scenario, scales: DrillScales): FleetConfig {
  const {rateScale, timeScale} = scales
  const pools: FleetPoolConfig[] = scenario.pools
    .filter((p) => p.kind === 'servers')
    .map((p) => {
      const capacity = p.capacity! * rateScale
      const workers = Math.max(1, Math.round(capacity * p.serviceTime))
      // The loader's default: two seconds' worth of requests at capacity.
      const threads = Math.max(workers, Math.round((p.threads ?? 2 * p.capacity!) * rateScale * timeScale))
      const servers = p.servers!
      return {
        name: p.name,
        servers,
        capacity,
        // Spread evenly over capacity × (1 ± spread), where the simulator draws uniformly: the same range, no seed needed.
        // A slow minority is the last servers of the pool, where the simulator draws them: HAProxy treats every server alike.
        capacities: Array.from(
          {length: servers},
          (_, i) =>
            capacity *
            (1 + p.capacitySpread * (servers === 1 ? 0 : (2 * i) / (servers - 1) - 1)) *
            (p.slowMinority && i >= servers - Math.round(p.slowMinority.share * servers) ? p.slowMinority.factor : 1),
        ),
        serviceTime: p.serviceTime,
        // The spread the model draws with (the loader's default under randomness: drawn), each server its own seeded stream.
        serviceSpread: serviceSpreadOf(scenario, p),
        seed: scenario.seed,
        threads,
        queueLimit: Math.max(workers, Math.ceil(capacity * p.queueSeconds! * timeScale)),
        coldFactor: p.coldFactor,
        warmupSeconds: p.warmupSeconds * timeScale,
        restartSeconds: p.restartSeconds * timeScale,
        handshakeCost: p.handshakeCost,
        connectionWindow: scenario.clients.thinkTime * timeScale,
        clientTimeout: scenario.clients.timeout * timeScale,
      }
    })
  return {pools}
}

/**
 * Scenario seconds between two readings of a drill's real run (its load's buckets, HAProxy's
 * rotation): one second, or the tick where a scenario's is coarser. The prediction is read the
 * same way (src/drill/timeline.ts, perSecond): a tick finer than a second resolves the model's
 * checks, not anything a second of real requests can show.
 */
export function readingSeconds(scenario: Pick<Scenario, 'tick'>): number {
  return Math.max(1, scenario.tick)
}

export function drillClients(scenario: Scenario, scales: DrillScales): LoadClients {
  const c = scenario.clients
  const {timeScale} = scales
  return {
    attempts: c.attempts,
    timeout: c.timeout * timeScale,
    backoffBase: c.backoffBase * timeScale,
    backoffMax: c.backoffMax * timeScale,
    retryBudget: c.retryBudget,
    budgetWindow: c.budgetWindow * timeScale,
    honourRetryAfter: c.honourRetryAfter,
  }
}

/** The demand curve in wall seconds and wall requests per second. */
export function drillCurve(scenario: Scenario, scales: DrillScales): Array<[number, number]> {
  const curve = scenario.demand.curve ?? [[0, scenario.demand.rps ?? 0]]
  return curve.map(([t, rps]) => [t * scales.timeScale, rps * scales.rateScale])
}

export const toScenarioTime = (wallSeconds: number, scales: DrillScales): number => wallSeconds / scales.timeScale
export const toScenarioRate = (wallRps: number, scales: DrillScales): number => wallRps / scales.rateScale

/** A drill's recorded series in the scenario's seconds and requests per second, as the simulator records them, to chart beside its prediction. */
export interface ScenarioTimeline {
  t: Float64Array
  series: Record<LoadSeriesKey, Float64Array>
  latencyP99: Float64Array
}

export function scenarioTimeline(record: LoadRecord, scales: DrillScales): ScenarioTimeline {
  return {
    t: Float64Array.from(record.t, (t) => toScenarioTime(t, scales)),
    series: Object.fromEntries(loadSeries.map((k) => [k, Float64Array.from(record.series[k], (r) => toScenarioRate(r, scales))])) as Record<
      LoadSeriesKey,
      Float64Array
    >,
    latencyP99: Float64Array.from(record.latencyP99),
  }
}

/**
 * The load a drill drives at `target` for a scenario: its demand, types and clients, scaled. Each
 * repeat (`run`, from 0) draws its own arrivals from the scenario's seed plus the run: with one
 * seed every repeat sent the same sample of arrivals (the collapse drill's three runs all ran 7.5%
 * over the mean in the same 18 s), so a median of repeats measured one sample three times.
 */
export function drillLoadConfig(scenario: Scenario, scales: DrillScales, target: LoadTarget, run = 0): LoadConfig {
  return {
    target,
    curve: drillCurve(scenario, scales),
    types: Object.entries(scenario.demand.types).map(([name, share]) => ({name, share})),
    clients: drillClients(scenario, scales),
    duration: scenario.duration * scales.timeScale,
    bucketSeconds: readingSeconds(scenario) * scales.timeScale,
    arrivals: 'poisson',
    seed: scenario.seed + run,
  }
}

/** Wall seconds a drill aims to take, and wall requests per second this machine drives with room to spare (npm run bench: the generator's ceiling). */
export const drillBudget = {wallSeconds: 150, wallRps: 200}

const niceScales = [1, 0.5, 0.25, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001]

/**
 * The largest round scales that fit a drill of `seconds` scenario seconds and `peakRps` demand
 * into the budget: the least shrinking that fits, so the drill stays as close to the scenario as
 * the machine allows; never a time scale below `minTimeScale` (timeScaleFloor), where the drill
 * runs longer than the budget rather than time its checks out on healthy servers.
 */
export function chooseScales(seconds: number, peakRps: number, budget = drillBudget, minTimeScale = 0): DrillScales {
  const fit = (need: number, have: number) => niceScales.find((s) => need * s <= have) ?? niceScales.at(-1)!
  const floor = [...niceScales].reverse().find((s) => s >= minTimeScale) ?? 1
  return {timeScale: Math.max(fit(seconds, budget.wallSeconds), floor), rateScale: fit(peakRps, budget.wallRps)}
}

/**
 * How many times a request's service time a check's timeout (and the clients') must be, on the
 * drill's clock. A server's service time is real (the loopback servers serve in real time), while
 * the check's timeout shrinks with the time scale: at 0.1 a 2 s `inter` times a check out after
 * 200 ms while a request takes 100, so a healthy server with a few requests queued fails its
 * checks and the drill measures the scale, not the pool. Four service times leave room for the
 * three requests a busy healthy server has ahead of a check.
 */
export const timeoutOverService = 4

/**
 * The least time scale at which every check's timeout (HAProxy's `inter`, as `timeout check` is
 * not set) and the clients' timeout are `timeoutOverService` times the slowest pool's service
 * time; and the timeout that sets it, for the message that refuses a smaller one.
 */
export function timeScaleFloor(scenario: Scenario, checkInterval: number): {floor: number; timeout: {what: string; seconds: number}; serviceTime: number} {
  const serviceTime = Math.max(...scenario.pools.filter((p) => p.kind === 'servers').map((p) => p.serviceTime))
  const timeouts = [
    {what: `HAProxy's check (inter ${checkInterval} s)`, seconds: checkInterval},
    {what: `the clients' timeout (${scenario.clients.timeout} s)`, seconds: scenario.clients.timeout},
  ]
  const timeout = timeouts.reduce((a, b) => (b.seconds < a.seconds ? b : a))
  return {floor: (timeoutOverService * serviceTime) / timeout.seconds, timeout, serviceTime}
}
