import type {SimulationRecord} from '../sim/record.js'
import type {LoadRecord} from './load-generator.js'
import type {Timeline} from './report-card.js'
import type {RotationSamples} from './rotation.js'
import type {DrillScales} from './scale.js'

// A drill's two timelines in the scenario's seconds and requests per second: the simulator's
// record and the load generator's, with HAProxy's count of servers UP, so the report card reads
// both the same way.

/** What the real clients saw fail, in the scenario's requests (real counts divided by the rate scale). */
export interface Failures {
  /** Attempts with no answer within the clients' timeout. */
  timeouts: number
  /** Connections refused or reset before an answer. */
  refused: number
  /** Answers of 5xx other than 503, and other errors. */
  errors: number
  /** 503s: a restriction, a sorry backend, or HAProxy with no server up. */
  rejected: number
  /** User requests out of attempts or retry budget. */
  givenUp: number
}

export function simTimeline(record: SimulationRecord, n = record.ticks): Timeline {
  return {t: record.t.subarray(0, n), demand: record.demand.subarray(0, n), served: record.served.subarray(0, n), inRotation: record.inRotation.subarray(0, n)}
}

/**
 * Failures from scenario second `from` to the end (the last, partial bucket left out as in
 * realTimeline), as counts in the scenario's units: the load ran at rateScale of the scenario's
 * rates for timeScale of its seconds, so a real count is divided by both.
 */
export function failuresOf(record: LoadRecord, scales: DrillScales, from: number): Failures {
  const sum = (key: 'timeouts' | 'refused' | 'errors' | 'rejected' | 'givenUp'): number => {
    let total = 0
    for (let i = 0; i < record.t.length - 1; i++) if (record.t[i] / scales.timeScale >= from) total += record.series[key][i] * record.bucketSeconds
    return total / scales.rateScale / scales.timeScale
  }
  return {timeouts: sum('timeouts'), refused: sum('refused'), errors: sum('errors'), rejected: sum('rejected'), givenUp: sum('givenUp')}
}

/**
 * A timeline one point a scenario second, as the real one is: demand and served the mean of each
 * second's points, servers in rotation as at its last point (the real side reads HAProxy once a
 * second). A timeline already a point a second or coarser is returned as it is.
 */
export function perSecond(line: Timeline): Timeline {
  if (line.t.length < 2 || line.t[1] - line.t[0] >= 1 - 1e-9) return line
  const t: number[] = []
  const demand: number[] = []
  const served: number[] = []
  const inRotation: number[] = []
  const n = line.t.length
  let i = 0
  while (i < n) {
    const second = Math.floor(line.t[i] + 1e-9)
    let d = 0
    let c = 0
    let count = 0
    let last = i
    for (; i < n && Math.floor(line.t[i] + 1e-9) === second; i++) {
      d += line.demand[i]
      c += line.served[i]
      count++
      last = i
    }
    t.push(second)
    demand.push(d / count)
    served.push(c / count)
    inRotation.push(line.inRotation[last])
  }
  return {t: Float64Array.from(t), demand: Float64Array.from(demand), served: Float64Array.from(served), inRotation: Float64Array.from(inRotation)}
}

/** The timeline up to and including second `end`. */
export function cutAt(line: Timeline, end: number): Timeline {
  return between(line, Number.NEGATIVE_INFINITY, end)
}

/** The timeline from second `from` up to and including second `to`. */
export function between(line: Timeline, from: number, to: number): Timeline {
  let first = 0
  while (first < line.t.length && line.t[first] < from) first++
  let end = first
  while (end < line.t.length && line.t[end] <= to) end++
  const cut = (a: ArrayLike<number>) => Float64Array.from({length: end - first}, (_, i) => a[first + i])
  return {t: cut(line.t), demand: cut(line.demand), served: cut(line.served), inRotation: cut(line.inRotation)}
}

/** The last second a timeline holds; 0 when it holds none. */
export function lastSecond(line: Timeline): number {
  return line.t.length > 0 ? line.t[line.t.length - 1] : 0
}

/** The load's buckets in scenario seconds and rps, with HAProxy's count of servers up in each (the last sample in it). */
export function realTimeline(record: LoadRecord, samples: RotationSamples, scales: DrillScales): Timeline {
  // The last bucket is cut short by the stop: its demand is in, many of its answers are not.
  const n = Math.max(0, record.t.length - 1)
  const inRotation = new Float64Array(n).fill(Number.NaN)
  let k = 0
  for (let i = 0; i < n; i++) {
    const end = record.t[i] + record.bucketSeconds
    while (k < samples.t.length && samples.t[k] < end) {
      inRotation[i] = samples.inRotation[k]
      k++
    }
  }
  return {
    t: Float64Array.from(record.t.slice(0, n), (t) => t / scales.timeScale),
    demand: Float64Array.from(record.series.demand.slice(0, n), (r) => r / scales.rateScale),
    served: Float64Array.from(record.series.served.slice(0, n), (r) => r / scales.rateScale),
    inRotation,
  }
}
