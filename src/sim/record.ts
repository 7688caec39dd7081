import type {FaultWindow} from './fault-window.js'

/**
 * Points a record holds per series. Up to this many ticks every tick is its own point, so ordinary
 * runs and rehearsals are kept whole; a longer run halves its resolution each time it fills up, so
 * memory stays bounded however long the run (some 40 k points × 8 bytes per series, three times that
 * once the envelope below is kept).
 */
export const fullResolutionPoints = 40_000

/** The record's own series, in the order a tick writes them. */
export const recordSeries = [
  't',
  'demand',
  'offered',
  'served',
  'failed',
  'shed',
  'restricted',
  'restrictedDemand',
  'retries',
  'inRotation',
  'ejected',
  'panic',
] as const
export type RecordSeriesKey = (typeof recordSeries)[number]

const poolSeries = ['offered', 'served', 'failed', 'inRotation', 'latencyP99'] as const

/** The last ticks of one pool, every one of them, whatever the record's resolution: what gates read. */
export interface RecentTicks {
  /** Ticks the ring holds: a window longer than this reads only its last `size` ticks. */
  size: number
  offered: Float64Array
  failed: Float64Array
  latencyP99: Float64Array
}

/** One pool's series, at the record's resolution. */
export interface PoolSeries {
  name: string
  offered: Float64Array
  served: Float64Array
  failed: Float64Array
  inRotation: Float64Array
  /** Estimated p99 latency in ms; NaN when no traffic reached the pool. */
  latencyP99: Float64Array
  recent: RecentTicks
}

/** What one tick of one pool gives the record. */
export interface PoolTickValues {
  offered: number
  served: number
  failed: number
  inRotation: number
  latencyP99: number
}

/** What one tick of the whole fleet gives the record. */
export type TickValues = Record<RecordSeriesKey, number>

/** Each point's lowest and highest tick, kept once points stand for more than one tick, by series in `recordSeries` order. */
export interface Envelope {
  low: Float64Array[]
  high: Float64Array[]
}

/**
 * The figures a run is summed up by, taken tick by tick as the run goes, so they are exact at any
 * length, whatever resolution the series are kept at (src/sim/summary.ts reads them).
 */
export interface RunningFigures {
  demand: number
  served: number
  minInRotation: number
  peakErrorRate: number
  servedDuringFault: number
  ticksDuringFault: number
  /** Attempts (new requests and retries) and user requests during the fault: their ratio is the retries' load amplification. */
  offeredDuringFault: number
  demandDuringFault: number
  /** The first second from which service has been full ever since; null while it is not. */
  fullSince: number | null
}

/** Completed requests within this share of demand count as full service. */
export const fullServiceShare = 0.99

/**
 * Seconds over which full service is judged where arrivals or service times are drawn: a tick's
 * requests can wait in a queue into the next and still be served in time, so one tick below 99% is
 * chance; ten seconds of it is not. At the mean every tick is judged on its own, exactly.
 */
export const fullServiceWindowSeconds = 10

/**
 * The time series of one run, as typed arrays, at a bounded resolution. Each point is the mean of
 * `stride` ticks (1 until the run outgrows `fullResolutionPoints`); once points stand for more
 * than one tick, `envelope` keeps each point's lowest and highest tick too, so a chart still shows
 * a one-second spike or drop. The run's summary figures are kept exactly, tick by tick.
 */
export class SimulationRecord {
  /** Points held in each series (the number of ticks, while the stride is 1). */
  ticks = 0
  /** Ticks per point: 1, then 2, 4, 8… as a long run fills the record. */
  stride = 1
  t: Float64Array
  /** User requests per second (new requests only). */
  demand: Float64Array
  /** Attempts per second reaching the pools: new requests plus retries. */
  offered: Float64Array
  /** Requests completed per second. */
  served: Float64Array
  failed: Float64Array
  shed: Float64Array
  restricted: Float64Array
  /** User demand (new requests) of the traffic types restricted at that tick: what full service leaves out. */
  restrictedDemand: Float64Array
  retries: Float64Array
  inRotation: Float64Array
  ejected: Float64Array
  /** Pools routing in panic mode. */
  panic: Float64Array
  pools: PoolSeries[]
  /** Null while every point is one tick. Not a typed array itself, so it is no series of its own. */
  envelope: Envelope | null = null
  /**
   * The last tick recorded, as it was, by series in `recordSeries` order. Held in an array, not as
   * a typed array of its own, so that every typed array the record owns is a series.
   */
  private readonly lastRows = [new Float64Array(recordSeries.length)]
  readonly figures: RunningFigures = {
    demand: 0,
    served: 0,
    minInRotation: Infinity,
    peakErrorRate: 0,
    servedDuringFault: 0,
    ticksDuringFault: 0,
    offeredDuringFault: 0,
    demandDuringFault: 0,
    fullSince: null,
  }
  /** The same figures from a moment on (markFrom): a rehearsal's from its runbook's start, before which the outage is the scenario's. */
  fromMark: {at: number; demand: number; served: number; minInRotation: number; peakErrorRate: number} | null = null
  /** Ticks recorded so far. */
  ticksRecorded = 0
  /** The last ticks' completed and asked requests and their times, a ring over which full service is judged. */
  private readonly fullWindow: {served: Float64Array; asked: Float64Array; t: Float64Array; n: number}
  /** Ticks in the point being filled (the last one). */
  private filling = 0
  private capacity: number
  /** Each pool's tick, by series in `poolSeries` order, until `commit`. */
  private readonly scratch: Float64Array[]
  /** The series by index (`recordSeries` order), the same arrays as the named fields: the hot path loops over these. */
  private cols: Float64Array[] = []
  private poolCols: Float64Array[][] = []

  /** Points held at most: even, so points merge in pairs. */
  readonly maxPoints: number

  /**
   * `ticks` is how many ticks the run expects (room is made for them up to the bound); `window` is
   * the run's fault window, for the mean served during it.
   */
  constructor(
    ticks: number,
    readonly dt: number,
    poolNames: string[],
    readonly window: FaultWindow | null = null,
    maxPoints = fullResolutionPoints,
    /** Ticks each judgement of full service sums (fullServiceWindowSeconds where the run draws; else 1). */
    fullWindowTicks = 1,
  ) {
    this.fullWindow = {served: new Float64Array(fullWindowTicks), asked: new Float64Array(fullWindowTicks), t: new Float64Array(fullWindowTicks), n: 0}
    this.maxPoints = Math.max(2, 2 * Math.floor(maxPoints / 2))
    maxPoints = this.maxPoints
    this.capacity = Math.max(1, Math.min(ticks, maxPoints))
    const make = (): Float64Array => new Float64Array(this.capacity)
    this.t = make()
    this.demand = make()
    this.offered = make()
    this.served = make()
    this.failed = make()
    this.shed = make()
    this.restricted = make()
    this.restrictedDemand = make()
    this.retries = make()
    this.inRotation = make()
    this.ejected = make()
    this.panic = make()
    const ring = Math.max(1, Math.min(ticks, maxPoints))
    this.pools = poolNames.map((name) => ({
      name,
      offered: make(),
      served: make(),
      failed: make(),
      inRotation: make(),
      latencyP99: make(),
      recent: {size: ring, offered: new Float64Array(ring), failed: new Float64Array(ring), latencyP99: new Float64Array(ring)},
    }))
    this.scratch = poolNames.map(() => new Float64Array(poolSeries.length))
    this.index()
  }

  /** The last tick recorded, as it was: what a run ends on, whatever the resolution. */
  get last(): TickValues {
    return Object.fromEntries(recordSeries.map((k, i) => [k, this.lastRows[0][i]])) as TickValues
  }

  private index(): void {
    this.cols = recordSeries.map((k) => this[k])
    this.poolCols = this.pools.map((pool) => poolSeries.map((k) => pool[k]))
  }

  /** Seconds each point stands for. */
  get resolution(): number {
    return this.stride * this.dt
  }

  /**
   * Makes room for more ticks (a rehearsal that outlasts its scenario), within the bound. Room at
   * least doubles, so a run extended a few minutes at a time copies its record a few times, not
   * once per extension.
   */
  grow(ticks: number): void {
    const room = (now: number): number => Math.min(Math.max(ticks, 2 * now), this.maxPoints)
    if (ticks > this.capacity && this.capacity < this.maxPoints) this.resize(room(this.capacity))
    for (const pool of this.pools) {
      const r = pool.recent
      if (ticks > r.size && r.size < this.maxPoints) pool.recent = resizeRing(r, room(r.size), this.ticksRecorded)
    }
  }

  /** Notes one pool's tick; `commit` then records the tick for the whole fleet. */
  pool(p: number, values: PoolTickValues): void {
    const s = this.scratch[p]
    s[0] = values.offered
    s[1] = values.served
    s[2] = values.failed
    s[3] = values.inRotation
    s[4] = values.latencyP99
    const r = this.pools[p].recent
    const i = this.ticksRecorded % r.size
    r.offered[i] = values.offered
    r.failed[i] = values.failed
    r.latencyP99[i] = values.latencyP99
  }

  /** Records one tick: its figures, and its values into the current point. */
  commit(tick: TickValues): void {
    this.follow(tick)
    const row = this.lastRows[0]
    row[0] = tick.t
    row[1] = tick.demand
    row[2] = tick.offered
    row[3] = tick.served
    row[4] = tick.failed
    row[5] = tick.shed
    row[6] = tick.restricted
    row[7] = tick.restrictedDemand
    row[8] = tick.retries
    row[9] = tick.inRotation
    row[10] = tick.ejected
    row[11] = tick.panic
    if (this.filling === this.stride || this.ticks === 0) {
      if (this.ticks === this.capacity) {
        if (this.capacity < this.maxPoints) this.resize(Math.min(this.maxPoints, this.capacity * 2))
        else this.halve()
      }
      this.open()
    } else {
      this.accumulate()
    }
    this.ticksRecorded++
  }

  /** Each point's lowest and highest tick for one series; null while every point is one tick. */
  range(key: RecordSeriesKey): {low: Float64Array; high: Float64Array} | null {
    if (!this.envelope) return null
    const k = recordSeries.indexOf(key)
    return {low: this.envelope.low[k].subarray(0, this.ticks), high: this.envelope.high[k].subarray(0, this.ticks)}
  }

  /** Starts the figures from here on (fromMark), beside the whole run's. */
  markFrom(at: number): void {
    this.fromMark = {at, demand: 0, served: 0, minInRotation: Infinity, peakErrorRate: 0}
  }

  private follow(tick: TickValues): void {
    const m = this.fromMark
    if (m) {
      m.demand += tick.demand
      m.served += tick.served
      if (tick.inRotation < m.minInRotation) m.minInRotation = tick.inRotation
      if (tick.offered > 0) m.peakErrorRate = Math.max(m.peakErrorRate, tick.failed / tick.offered)
    }
    const f = this.figures
    f.demand += tick.demand
    f.served += tick.served
    if (tick.inRotation < f.minInRotation) f.minInRotation = tick.inRotation
    if (tick.offered > 0) f.peakErrorRate = Math.max(f.peakErrorRate, tick.failed / tick.offered)
    if (this.window && tick.t >= this.window.from && tick.t < this.window.to) {
      f.servedDuringFault += tick.served
      f.ticksDuringFault++
      f.offeredDuringFault += tick.offered
      f.demandDuringFault += tick.demand
    }
    const asked = Math.max(0, tick.demand - tick.restrictedDemand)
    // Judged over the last fullWindowTicks ticks (one at the mean): since the oldest of them.
    const w = this.fullWindow
    const size = w.served.length
    const slot = w.n % size
    w.served[slot] = tick.served
    w.asked[slot] = asked
    w.t[slot] = tick.t
    w.n++
    let served = 0
    let askedSum = 0
    for (let k = 0; k < size && k < w.n; k++) {
      served += w.served[k]
      askedSum += w.asked[k]
    }
    if (served + 1e-9 < fullServiceShare * askedSum) f.fullSince = null
    else if (f.fullSince === null) f.fullSince = w.n > size ? w.t[w.n % size] : w.t[0]
  }

  /** Starts a new point with the last tick. */
  private open(): void {
    const i = this.ticks
    const row = this.lastRows[0]
    const cols = this.cols
    for (let k = 0; k < row.length; k++) cols[k][i] = row[k]
    if (this.envelope) {
      const {low, high} = this.envelope
      for (let k = 0; k < row.length; k++) {
        low[k][i] = row[k]
        high[k][i] = row[k]
      }
    }
    for (let p = 0; p < this.poolCols.length; p++) {
      const pc = this.poolCols[p]
      const s = this.scratch[p]
      for (let k = 0; k < s.length; k++) pc[k][i] = s[k]
    }
    this.ticks = i + 1
    this.filling = 1
  }

  /** Adds the last tick to the last point: a running mean, the point's time staying its first tick's. */
  private accumulate(): void {
    const i = this.ticks - 1
    const n = this.filling
    const row = this.lastRows[0]
    const cols = this.cols
    // k = 0 is the time, which stays the point's first tick's.
    for (let k = 1; k < row.length; k++) cols[k][i] = meanOf(cols[k][i], n, row[k], 1)
    if (this.envelope) {
      const {low, high} = this.envelope
      for (let k = 0; k < row.length; k++) {
        if (row[k] < low[k][i]) low[k][i] = row[k]
        if (row[k] > high[k][i]) high[k][i] = row[k]
      }
    }
    for (let p = 0; p < this.poolCols.length; p++) {
      const pc = this.poolCols[p]
      const s = this.scratch[p]
      for (let k = 0; k < s.length; k++) pc[k][i] = meanOf(pc[k][i], n, s[k], 1)
    }
    this.filling = n + 1
  }

  /** Merges points in pairs: half the points, each standing for twice the ticks. */
  private halve(): void {
    const n = this.ticks
    const cols = this.cols
    if (!this.envelope) this.envelope = {low: cols.map((c) => Float64Array.from(c)), high: cols.map((c) => Float64Array.from(c))}
    const {low, high} = this.envelope
    const half = n / 2
    for (let j = 0; j < half; j++) {
      const a = 2 * j
      const b = a + 1
      for (let k = 0; k < cols.length; k++) {
        const s = cols[k]
        s[j] = k === 0 ? s[a] : (s[a] + s[b]) / 2
        low[k][j] = Math.min(low[k][a], low[k][b])
        high[k][j] = Math.max(high[k][a], high[k][b])
      }
      for (const pc of this.poolCols) {
        for (const s of pc) s[j] = meanOf(s[a], 1, s[b], 1)
      }
    }
    // maxPoints is even and every point was full (`stride` ticks), so the pairs are equal weights.
    this.ticks = half
    this.stride *= 2
    this.filling = this.stride
  }

  private resize(capacity: number): void {
    const widen = (a: Float64Array): Float64Array => {
      const b = new Float64Array(capacity)
      b.set(a.subarray(0, Math.min(a.length, capacity)))
      return b
    }
    for (const k of recordSeries) this[k] = widen(this[k])
    for (const pool of this.pools) for (const k of poolSeries) pool[k] = widen(pool[k])
    if (this.envelope) this.envelope = {low: this.envelope.low.map(widen), high: this.envelope.high.map(widen)}
    this.capacity = capacity
    this.index()
  }
}

/**
 * The mean of two means weighted by their counts. A latency with no traffic is NaN: it takes no
 * part, so a point is NaN only when none of its ticks had traffic.
 */
function meanOf(a: number, na: number, b: number, nb: number): number {
  if (Number.isNaN(a)) return b
  if (Number.isNaN(b)) return a
  return (a * na + b * nb) / (na + nb)
}

/** A bigger ring with the same ticks at the same places (tick i at i % size). */
function resizeRing(r: RecentTicks, size: number, recorded: number): RecentTicks {
  const next: RecentTicks = {size, offered: new Float64Array(size), failed: new Float64Array(size), latencyP99: new Float64Array(size)}
  if (recorded <= r.size) {
    // Not yet wrapped: tick i is at i in both.
    next.offered.set(r.offered.subarray(0, recorded))
    next.failed.set(r.failed.subarray(0, recorded))
    next.latencyP99.set(r.latencyP99.subarray(0, recorded))
    return next
  }
  for (let t = Math.max(0, recorded - r.size); t < recorded; t++) {
    next.offered[t % size] = r.offered[t % r.size]
    next.failed[t % size] = r.failed[t % r.size]
    next.latencyP99[t % size] = r.latencyP99[t % r.size]
  }
  return next
}
