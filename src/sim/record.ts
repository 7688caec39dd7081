/** Per-tick time series of one run, as typed arrays. */
export interface PoolSeries {
  name: string
  offered: Float64Array
  served: Float64Array
  failed: Float64Array
  inRotation: Float64Array
}

export class SimulationRecord {
  readonly t: Float64Array
  /** User requests per second (new requests only). */
  readonly demand: Float64Array
  /** Attempts per second reaching the pools: new requests plus retries. */
  readonly offered: Float64Array
  /** Requests completed per second. */
  readonly served: Float64Array
  readonly failed: Float64Array
  readonly shed: Float64Array
  readonly restricted: Float64Array
  readonly retries: Float64Array
  readonly inRotation: Float64Array
  readonly ejected: Float64Array
  /** Pools routing in panic mode. */
  readonly panic: Float64Array
  readonly pools: PoolSeries[]

  constructor(readonly ticks: number, readonly dt: number, poolNames: string[]) {
    const make = (): Float64Array => new Float64Array(ticks)
    this.t = make()
    this.demand = make()
    this.offered = make()
    this.served = make()
    this.failed = make()
    this.shed = make()
    this.restricted = make()
    this.retries = make()
    this.inRotation = make()
    this.ejected = make()
    this.panic = make()
    this.pools = poolNames.map((name) => ({name, offered: make(), served: make(), failed: make(), inRotation: make()}))
  }
}
