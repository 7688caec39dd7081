import type {DrillReport} from '../../src/drill/report.js'
import type {ReportCard, Timeline} from '../../src/drill/report-card.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'

// A drill's report made by hand, for the report card's readers: one fault from 10 to 20 s of 30,
// ten servers, 400 rps asked; each test states the figures it is about.

const {scenario} = loadScenario('drill-headroom')

export const timeline = (served: (t: number) => number, inRotation: (t: number) => number): Timeline => ({
  t: Float64Array.from({length: 30}, (_, t) => t),
  demand: new Float64Array(30).fill(400),
  served: Float64Array.from({length: 30}, (_, t) => served(t)),
  inRotation: Float64Array.from({length: 30}, (_, t) => inRotation(t)),
})

export const card = (overrides: Partial<ReportCard> = {}): ReportCard => ({
  servedDuringFault: 350,
  lostPercent: 2,
  secondsToFullServiceAfterFix: 4,
  fewestInRotation: 6,
  cascaded: false,
  recovered: true,
  before: 1,
  ...overrides,
})

export function report(real: Partial<ReportCard>, predicted: Partial<ReportCard> = {}, extra: Partial<DrillReport> = {}): DrillReport {
  return {
    target: {kind: 'scenario', name: 'drill-headroom'},
    scenario,
    setup: 'checks-only',
    scales: {rateScale: 0.5, timeScale: 0.25},
    queueSeconds: 2,
    fault: {from: 10, to: 20, servers: 4},
    servers: 10,
    seconds: 30,
    compared: {to: 29, realTo: 29, predictedTo: 29},
    runbookSpan: null,
    fullServiceWindow: 10,
    wallSeconds: 9.87,
    real: {
      timeline: timeline(
        () => 398.123,
        (t) => (t === 3 ? Number.NaN : t >= 12 && t < 20 ? 6 : 10),
      ),
      card: card(real),
    },
    predicted: {
      timeline: timeline(
        () => 400,
        (t) => (t >= 12 && t < 20 ? 6 : 10),
      ),
      card: card(predicted),
    },
    load: {
      eventLoopDelayP99Ms: 2.346,
      fleetLoopDelayP99Ms: 3,
      cpuWait: {runSeconds: 12, waitSeconds: 4, share: 0.25, slices: 100_000, meanWaitMs: 0.04},
      local: 0,
      offered: 12_000,
      cpuSeconds: 3.21,
      clientTimeoutWallMs: 1250,
      serviceTimeMs: 100,
    },
    interrupted: false,
    finerTick: null,
    spread: null,
    ...extra,
  }
}
