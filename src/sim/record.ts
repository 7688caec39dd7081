/** Per-tick time series of one run, as typed arrays. */
export interface PoolSeries {
  name: string
  offered: Float64Array
  served: Float64Array
  failed: Float64Array
  inRotation: Float64Array
  /** Estimated p99 latency in ms; NaN when no traffic reached the pool. */
  latencyP99: Float64Array
}

export class SimulationRecord {
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

  constructor(public ticks: number, readonly dt: number, poolNames: string[]) {
    const make = (): Float64Array => new Float64Array(ticks)
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
    this.pools = poolNames.map((name) => ({name, offered: make(), served: make(), failed: make(), inRotation: make(), latencyP99: make()}))
  }

  /** Makes room for more ticks, keeping what was recorded. */
  grow(ticks: number): void {
    if (ticks <= this.ticks) return
    const widen = (a: Float64Array): Float64Array => {
      const b = new Float64Array(ticks)
      b.set(a)
      return b
    }
    for (const key of ['t', 'demand', 'offered', 'served', 'failed', 'shed', 'restricted', 'restrictedDemand', 'retries', 'inRotation', 'ejected', 'panic'] as const) {
      this[key] = widen(this[key])
    }
    for (const p of this.pools) {
      p.offered = widen(p.offered)
      p.served = widen(p.served)
      p.failed = widen(p.failed)
      p.inRotation = widen(p.inRotation)
      p.latencyP99 = widen(p.latencyP99)
    }
    this.ticks = ticks
  }
}
