import {describe, expect, it} from 'vitest'
import {Fleet} from '../../src/sim/fleet.js'
import {capacityNow, smallCount} from '../../src/sim/pool-kernel.js'
import {Random} from '../../src/sim/random.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {overSeeds, tipOf} from '../../src/sim/seeds.js'
import {ScenarioRun} from '../../src/sim/scenario-run.js'
import {moments, scenarioFrom} from '../helpers/sim.js'

/** Ten servers of 100 rps at `rps`, no fault, the named randomness and spread, arrivals at the mean unless said. */
const pool = (rps: number, spread: number | null, extra = '') =>
  scenarioFrom(`
name: spread
duration: 600
tick: 1
seed: 3
${extra}
pools:
  - {name: web, servers: 10, capacity: 100, queueSeconds: 1${spread === null ? '' : `, serviceSpread: ${spread}`}}
demand: {rps: ${rps}, arrivals: mean}
setups:
  plain: {}
`)

/** Per tick, the work queued at the pool's servers (requests), and the share of the requests served over the run. */
const queued = (scenario: ReturnType<typeof pool>) => {
  const fleet = new Fleet(fleetConfig(scenario, scenario.setups.plain))
  const backlog: number[] = []
  while (!fleet.done) {
    fleet.step()
    backlog.push(fleet.pools[0].backlog.reduce((a, b) => a + b, 0))
  }
  const {figures} = fleet.record
  return {backlog, servedShare: figures.served / figures.demand, served: Array.from(fleet.record.served.subarray(0, fleet.record.ticks))}
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length

describe('randomness: service times drawn as well as arrivals (issue 47)', () => {
  it('a service-time draw has mean 1 and the coefficient of variation asked (Gamma), exactly 1 with none', () => {
    const random = new Random(11)
    for (const cv of [0.5, 1, 2]) {
      const m = moments(() => random.spread(cv), 200_000)
      expect(m.mean).toBeGreaterThan(0.98)
      expect(m.mean).toBeLessThan(1.02)
      expect(Math.sqrt(m.variance) / m.mean).toBeGreaterThan(cv * 0.95)
      expect(Math.sqrt(m.variance) / m.mean).toBeLessThan(cv * 1.05)
    }
    expect(random.spread(0)).toBe(1)
  })

  it("a server's drawn capacity keeps its mean and spread, never below 0: a Poisson count where a tick's count is small, a normal where it is large", () => {
    const draw = new Random(5)
    for (const [cap, m] of [
      [100, 1.25], // a drill's scale: 100 rps at a sample of 0.125 and a 0.1 s tick, cv 1
      [100, 8],
      [100, smallCount * 4],
    ]) {
      const spread = cap / Math.sqrt(m)
      let n = 0
      let sum = 0
      let squares = 0
      let least = Infinity
      for (let i = 0; i < 200_000; i++) {
        const c = capacityNow(cap, spread, draw.normal(), draw)
        n++
        sum += c
        squares += c * c
        least = Math.min(least, c)
      }
      const mean = sum / n
      expect(Math.abs(mean / cap - 1), `m = ${m}`).toBeLessThan(0.01)
      expect(Math.sqrt(squares / n - mean * mean) / spread).toBeGreaterThan(0.97)
      expect(Math.sqrt(squares / n - mean * mean) / spread).toBeLessThan(1.03)
      expect(least).toBeGreaterThanOrEqual(0)
    }
  })

  it('a pool at 90% never queues with exact service times; with a spread its servers carry queues from tick to tick, and serve everything', () => {
    const exact = queued(pool(900, 0))
    expect(Math.max(...exact.backlog)).toBe(0)
    expect(exact.servedShare).toBe(1)
    const drawn = queued(pool(900, 1))
    // A server that completed less than it was sent carries the rest into the next tick.
    expect(drawn.backlog.filter((q) => q > 0).length).toBeGreaterThan(drawn.backlog.length / 4)
    // Its queue is a second long, well inside the clients' timeout: every request is served in time.
    expect(drawn.servedShare).toBeGreaterThan(0.999)
    // A wider spread of service times is longer queues.
    expect(mean(queued(pool(900, 0.5)).backlog)).toBeLessThan(mean(drawn.backlog))
  })

  it('far below capacity the spread changes nothing: no draw can take a server under its work', () => {
    const drawn = queued(pool(300, 1))
    expect(drawn.served).toEqual(queued(pool(300, 0)).served)
    expect(Math.max(...drawn.backlog)).toBe(0)
  })

  it('randomness: drawn (the default) gives Poisson arrivals and a spread of 1; none neither; an explicit setting wins', () => {
    const config = (extra: string, spread: number | null = null) => {
      const s = scenarioFrom(`
name: r
${extra}
pools:
  - {name: web, servers: 2, capacity: 100${spread === null ? '' : `, serviceSpread: ${spread}`}}
demand: {rps: 100}
setups:
  plain: {}
`)
      const c = fleetConfig(s, s.setups.plain)
      return [c.demand.arrivals, c.pools[0].serviceSpread]
    }
    expect(config('')).toEqual(['poisson', 1])
    expect(config('randomness: none')).toEqual(['mean', 0])
    expect(config('randomness: none', 0.5)).toEqual(['mean', 0.5])
    expect(config('randomness: drawn')).toEqual(['poisson', 1])
    expect(config('randomness: drawn', 0.5)).toEqual(['poisson', 0.5])
    // The seed model draws no service times whatever a pool says.
    expect(config('model: seed', 2)).toEqual(['mean', 0])
  })

  it('the seed model refuses randomness: drawn, naming the key', () => {
    expect(() =>
      scenarioFrom(`
name: s
model: seed
randomness: drawn
pools:
  - {name: web, servers: 2, capacity: 100}
demand: {rps: 100}
setups:
  plain: {}
`),
    ).toThrow(/randomness.*expected none \(or nothing\) with model seed/)
  })
})

describe('a pool at 95% of capacity with client retries (scenarios/near-capacity.yaml)', () => {
  const {scenario} = loadScenario('near-capacity')
  const setups = pickSetups(scenario, 'all')

  it('with arrivals and service times drawn it tips on some seeds, not at one time, and never comes back; it holds on others', () => {
    const over = overSeeds(scenario, setups, 10)
    expect(over.randomness).toBe('drawn')
    const outcomes = over.setups[0].outcomes
    const tipped = outcomes.filter((o) => o.tipped)
    expect(tipped.length).toBeGreaterThanOrEqual(2)
    expect(tipped.length).toBeLessThan(10)
    expect(new Set(tipped.map((o) => o.tippedAt)).size).toBeGreaterThanOrEqual(2)
    for (const o of tipped) {
      expect(o.tippedAt!).toBeGreaterThan(0)
      expect(o.tippedAt!).toBeLessThan(scenario.duration)
      expect(o.lostPercent).toBeGreaterThan(10)
    }
  })

  it('at the mean (randomness: none) it serves everything on every seed: the kind answer the default must not give', () => {
    const over = overSeeds({...scenario, randomness: 'none'}, setups, 10)
    expect(over.setups[0].outcomes.every((o) => !o.tipped && o.lostPercent === 0)).toBe(true)
  })

  it('tipped at: full service over the window before it, and short of it over every window after', () => {
    const run = (seed: number) => new ScenarioRun({...scenario, seed}, setups[0].policy).finish().record
    const seed = overSeeds(scenario, setups, 10).setups[0].outcomes.find((o) => o.tipped)!.seed
    const record = run(seed)
    const {tipped, tippedAt} = tipOf(record)
    expect(tipped).toBe(true)
    const servedShare = (from: number, to: number) => {
      let served = 0
      let asked = 0
      for (let i = 0; i < record.ticks; i++) {
        if (record.t[i] < from || record.t[i] >= to) continue
        served += record.served[i]
        asked += record.demand[i]
      }
      return served / asked
    }
    expect(servedShare(tippedAt! - 10, tippedAt!)).toBeGreaterThanOrEqual(0.99)
    for (let from = tippedAt!; from + 10 <= scenario.duration; from += 10) expect(servedShare(from, from + 10)).toBeLessThan(0.99)
  })
})
