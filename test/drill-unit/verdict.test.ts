import {describe, expect, it} from 'vitest'
import {reportCard, type ReportCard, type Timeline} from '../../src/drill/report-card.js'
import {chooseScales, drillBudget, timeScaleFloor} from '../../src/drill/scale.js'
import {chanceOf, drillBands, drillVerdict, machineLimited, observedOf, outOfBand, tailChance} from '../../src/drill/verdict.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

const card = (overrides: Partial<ReportCard> = {}): ReportCard => ({
  servedDuringFault: 500,
  lostPercent: 20,
  secondsToFullServiceAfterFix: 300,
  fewestInRotation: 6,
  cascaded: false,
  recovered: true,
  before: 1,
  ...overrides,
})

const bands = drillBands(card(), {demandDuringFault: 1500, fullServiceWindow: 15, servers: 10})

describe('the bands a drill is judged by', () => {
  it('are a tenth of demand during the fault, 2 points or a tenth of the predicted loss, a window or a tenth of the seconds, a server or a tenth of the pool', () => {
    expect(bands).toEqual({servedDuringFault: 150, lostPercent: 2, secondsToFullServiceAfterFix: 30, fewestInRotation: 1})
    expect(drillBands(card({lostPercent: 40, secondsToFullServiceAfterFix: 50}), {demandDuringFault: null, fullServiceWindow: 75, servers: 40})).toEqual({
      servedDuringFault: 0,
      lostPercent: 4,
      secondsToFullServiceAfterFix: 75,
      fewestInRotation: 4,
    })
  })

  it('count a figure outside its band as a disagreement, even when both outcomes agree', () => {
    // The recovery drill: 547 rps served against 32 predicted, both runs recovering.
    const real = card({servedDuringFault: 547})
    const predicted = card({servedDuringFault: 32})
    expect(outOfBand(real, predicted, bands)).toEqual(['servedDuringFault'])
    expect(drillVerdict(real, predicted, bands, null, false)).toEqual({
      kind: 'disagree',
      outcomes: [],
      figures: ['servedDuringFault'],
      // 547 served where 32 were predicted: the model said worse than happened.
      directions: {servedDuringFault: 'harsher'},
    })
    // Inside every band, on its edge included: agree.
    const edge = card({servedDuringFault: 650, lostPercent: 22, secondsToFullServiceAfterFix: 270, fewestInRotation: 7})
    expect(drillVerdict(edge, card(), bands, null, false)).toEqual({kind: 'agree'})
    // One side back and the other not is outside, whatever the band.
    expect(outOfBand(card({secondsToFullServiceAfterFix: null, recovered: false}), card(), bands)).toEqual(['secondsToFullServiceAfterFix'])
    expect(drillVerdict(card({recovered: false, secondsToFullServiceAfterFix: null}), card(), bands, null, false)).toMatchObject({
      kind: 'disagree',
      outcomes: ['recovered'],
    })
  })

  it('make a run the machine limited inconclusive, never a disagreement; an interrupted one is neither', () => {
    const limited = "the drill was short of this machine: the load generator's event loop ran 180 ms late at p99 (limit 50 ms)"
    expect(drillVerdict(card({cascaded: true}), card(), bands, limited, false)).toEqual({kind: 'inconclusive', reason: `machine-limited: ${limited}`})
    expect(drillVerdict(card({cascaded: true}), card(), bands, null, true)).toEqual({kind: 'interrupted'})
  })
})

describe('the prediction over seeds', () => {
  // Ten seeds, three of which cascade with a survivor out: the model gives the cascade a chance.
  const seeds = (cascading: number) =>
    Array.from({length: 10}, (_, i) => (i < cascading ? card({cascaded: true, fewestInRotation: 5, lostPercent: 21}) : card({lostPercent: 19 + i * 0.1})))

  it("gives an outcome's chance as (yes + ½) / (seeds + 1), so ten seeds that never give it say under one in ten, not never", () => {
    expect(chanceOf(seeds(3), 'cascaded')).toBeCloseTo(3.5 / 11, 12)
    expect(chanceOf(seeds(0), 'cascaded')).toBeCloseTo(0.5 / 11, 12)
    expect(chanceOf(seeds(0), 'recovered')).toBeCloseTo(10.5 / 11, 12)
  })

  it('takes the binomial tail on the side the real count fell: P(X ≥ k) above the expected count, P(X ≤ k) at or below it', () => {
    expect(tailChance(1, 1, 0.3)).toBeCloseTo(0.3, 12)
    expect(tailChance(0, 1, 0.3)).toBeCloseTo(0.7, 12)
    expect(tailChance(3, 3, 0.3)).toBeCloseTo(0.027, 12)
    // 2 of 3 at p = 0.3: P(X ≥ 2) = 3 × 0.09 × 0.7 + 0.027.
    expect(tailChance(2, 3, 0.3)).toBeCloseTo(0.216, 12)
    expect(tailChance(0, 3, 0.9)).toBeCloseTo(0.001, 12)
  })

  it('calls a real cascade a chance the model gives, not a disagreement; one it never gave in ten seeds, or three of three it gives a third, a disagreement', () => {
    const real = card({cascaded: true, fewestInRotation: 5, lostPercent: 21})
    // Judged against the scenario's own prediction alone, which did not cascade: disagree.
    expect(drillVerdict(real, card(), bands, null, false)).toEqual({kind: 'disagree', outcomes: ['cascaded'], figures: [], directions: {cascaded: 'kinder'}})
    expect(drillVerdict(real, card(), bands, null, false, seeds(3))).toEqual({kind: 'agree'})
    expect(drillVerdict(real, card(), bands, null, false, seeds(0))).toEqual({
      kind: 'disagree',
      outcomes: ['cascaded'],
      figures: [],
      directions: {cascaded: 'kinder'},
    })
    expect(drillVerdict(real, card(), bands, null, false, seeds(3), observedOf([real, real, real]))).toEqual({
      kind: 'disagree',
      outcomes: ['cascaded'],
      figures: [],
      directions: {cascaded: 'kinder'},
    })
    // One of three: what a one-in-three chance gives.
    expect(drillVerdict(real, card(), bands, null, false, seeds(3), observedOf([real, card(), card()]))).toEqual({kind: 'agree'})
  })

  it('reads a figure against anywhere between the least and the most the seeds give, with the band beside it; no further', () => {
    const spread = seeds(3)
    // The seeds lose 19.3–21%; the scenario's own prediction 20%: 23% is 2 points past the most, on the band's edge.
    expect(outOfBand(card({lostPercent: 23}), card(), bands, spread)).toEqual([])
    expect(outOfBand(card({lostPercent: 23.1}), card(), bands, spread)).toEqual(['lostPercent'])
    expect(outOfBand(card({lostPercent: 17.2}), card(), bands, spread)).toEqual(['lostPercent'])
    // Fewest in rotation: 5 in three seeds, so 4 is within a server of them.
    expect(outOfBand(card({fewestInRotation: 4}), card(), bands, spread)).toEqual([])
    expect(outOfBand(card({fewestInRotation: 3}), card(), bands, spread)).toEqual(['fewestInRotation'])
    // Not back: within only if some seed was not back either.
    const notBack = card({secondsToFullServiceAfterFix: null, recovered: false})
    expect(outOfBand(notBack, card(), bands, spread)).toEqual(['secondsToFullServiceAfterFix'])
    expect(outOfBand(notBack, card(), bands, [...spread, notBack])).toEqual([])
  })
})

describe('machineLimited', () => {
  const healthy = {
    eventLoopDelayP99Ms: 12,
    fleetLoopDelayP99Ms: 9,
    cpuWait: {meanWaitMs: 0.1},
    local: 0,
    offered: 100_000,
    demandSent: 1500,
    demandAsked: 1500,
    requestsAsked: 100_000,
    clientTimeoutWallMs: 500,
    serviceTimeMs: 1000,
  }

  it('says nothing of a generator that kept up', () => {
    expect(machineLimited(healthy)).toBeNull()
  })

  it("names each limit passed: the generator's or the fleet's event loop late past a tenth of the clients' timeout or of the service time (at most 100 ms), local errors, demand not sent", () => {
    expect(machineLimited({...healthy, eventLoopDelayP99Ms: 51})).toBe(
      "the drill was short of this machine: the load generator's event loop ran 51 ms late at p99 (limit 50 ms)",
    )
    expect(machineLimited({...healthy, eventLoopDelayP99Ms: 101, clientTimeoutWallMs: 5000})).toContain('(limit 100 ms)')
    // A tenth of the service time: the fleet times each request's service on its loop.
    expect(machineLimited({...healthy, serviceTimeMs: 100})).toBe(
      "the drill was short of this machine: the load generator's event loop ran 12 ms late at p99 (limit 10 ms)",
    )
    expect(machineLimited({...healthy, serviceTimeMs: 100, eventLoopDelayP99Ms: 4, fleetLoopDelayP99Ms: 10})).toBeNull()
    expect(machineLimited({...healthy, local: 101})).toContain("101 requests failed for want of this machine's sockets or files")
    expect(machineLimited({...healthy, local: 100})).toBeNull()
    // The fleet's servers share one event loop: late, and every check and answer is late with it.
    expect(machineLimited({...healthy, fleetLoopDelayP99Ms: 60})).toBe(
      "the drill was short of this machine: the fleet's event loop ran 60 ms late at p99 (limit 50 ms)",
    )
    expect(machineLimited({...healthy, fleetLoopDelayP99Ms: null})).toBeNull()
    expect(machineLimited({...healthy, demandSent: 1400})).toContain('the load generator sent 1400 of the 1500 rps asked (limit 97.0%)')
  })

  it("names the run's processes waiting for a CPU at a wake-up, on average, past a hundredth of the service time, which no event loop's timer need show", () => {
    // Service 1000 ms: the limit is 10 ms a wake-up.
    expect(machineLimited({...healthy, cpuWait: {meanWaitMs: 10}})).toBeNull()
    expect(machineLimited({...healthy, cpuWait: {meanWaitMs: 12.345}})).toBe(
      "the drill was short of this machine: the drill's processes waited 12.35 ms for a CPU each time they were ready to run, on average (limit 10.00 ms, a hundredth of the service time)",
    )
    expect(machineLimited({...healthy, serviceTimeMs: 100, eventLoopDelayP99Ms: 4, fleetLoopDelayP99Ms: 4, cpuWait: {meanWaitMs: 1.2}})).toContain(
      '(limit 1.00 ms',
    )
    // Not measured (no /proc schedstat): nothing said.
    expect(machineLimited({...healthy, cpuWait: null})).toBeNull()
  })

  it('allows a short run the shortfall random arrivals make by chance: three standard deviations of its count', () => {
    // 600 requests: a standard deviation of 24.5, 4.1%; three of them allow sending down to 87.8%.
    const short = {...healthy, requestsAsked: 600}
    expect(machineLimited({...short, demandSent: 1395})).toBeNull()
    expect(machineLimited({...short, demandSent: 1300})).toContain('the load generator sent 1300 of the 1500 rps asked (limit 87.8%)')
  })
})

describe('cascade', () => {
  const line = (inRotation: number): Timeline => ({
    t: Float64Array.from({length: 40}, (_, i) => i),
    demand: new Float64Array(40).fill(100),
    served: new Float64Array(40).fill(100),
    inRotation: Float64Array.from({length: 40}, (_, i) => (i >= 20 && i < 30 ? inRotation : 10)),
  })
  const fault = {from: 10, to: 20, servers: 2}

  it("is losing servers the fault did not break and the runbook did not take out: a cycle's budget is not a cascade", () => {
    // Ten servers, two broken: eight is what the fault leaves; a cycle with a budget of two takes out two more on purpose.
    expect(reportCard(line(6), fault, 10).cascaded).toBe(true)
    expect(reportCard(line(6), fault, 10, 10, 2).cascaded).toBe(false)
    expect(reportCard(line(5), fault, 10, 10, 2).cascaded).toBe(true)
  })
})

describe('the drill time scale', () => {
  const {scenario} = loadScenario('outlook-recovery-haproxy')

  it("has a floor where a check's timeout is four service times: at 0.1 HAProxy's 2 s check times out after 200 ms while a request takes 100", () => {
    const {floor, timeout, serviceTime} = timeScaleFloor(scenario, 2)
    expect(serviceTime).toBe(0.1)
    expect(timeout.what).toBe("HAProxy's check (inter 2 s)")
    expect(floor).toBeCloseTo(0.2)
    // The recovery drill's length alone would pick 0.1; the floor takes it to 0.2.
    expect(chooseScales(1384, 1500).timeScale).toBe(0.1)
    expect(chooseScales(1384, 1500, drillBudget, floor).timeScale).toBe(0.2)
    expect(chooseScales(300, 400, drillBudget, floor).timeScale).toBe(0.5)
  })
})
