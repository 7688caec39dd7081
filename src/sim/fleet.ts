import {ClientPopulation, type TypeFailures} from './clients.js'
import {rateAt} from './curve.js'
import type {FleetConfig} from './config.js'
import {WeightedDns} from './dns.js'
import {normalsSize} from './pool-kernel.js'
import {noServiceDraws, ServerPool, type PoolTick, type ServiceDraws, type ThreadHold} from './pool.js'
import {Random} from './random.js'
import {fullServiceWindowSeconds, SimulationRecord, type PoolTickValues, type TickValues} from './record.js'
import {faultWindow} from './fault-window.js'

interface ScheduledFault {
  pool: number
  from: number
  to: number
  apply: (active: boolean) => void
}

/**
 * A simulated fleet in virtual time: clients, weighted DNS across pools, and each pool's load
 * balancer and servers, advanced one fixed tick at a time. Deterministic for a given config and seed.
 */
export class Fleet {
  readonly pools: ServerPool[]
  readonly record: SimulationRecord
  readonly dt: number
  ticks: number
  readonly typeNames: string[]
  /** Ticks simulated so far; the next step simulates tick `tick`. */
  tick = 0
  private readonly dns: WeightedDns
  private readonly clients: ClientPopulation
  /** The share of each type's requests turned away, 0–1: a restriction's, all or a part. */
  private readonly restricted: Float64Array
  private readonly weights: Float64Array
  private readonly faults: ScheduledFault[] = []
  private readonly holds: Array<ThreadHold | null>
  private readonly outages: Array<{from: number; to: number; lookupCapacity: number | null} | null>
  /** The share of each pool's served requests answered with an error (faults of kind errors), 0–1. */
  private readonly erring: Float64Array
  /** Draws which served requests err when arrivals are drawn; null: exactly the share of them. */
  private readonly errorDraw: Random | null
  /** Draws each tick's arrivals when demand arrives as a Poisson process; null: the mean. */
  private readonly arrivalDraw: Random | null
  private readonly fresh: Float64Array
  private readonly arrived: Float64Array
  private readonly poolArrivals: Float64Array
  /** How each type's attempts failed this tick, for the clients' retries. */
  private readonly failures: TypeFailures
  /** Seconds of Retry-After each type's restriction sends. */
  private readonly restrictionWait: Float64Array
  /** The seed's rule: every fast failure carries the clients' retryAfter. */
  private readonly everyFastFailureTold: boolean
  private readonly tickOut: PoolTick = {
    offered: 0,
    served: 0,
    failedFast: 0,
    failedSlow: 0,
    shed: 0,
    restricted: 0,
    servedFraction: 0,
    fastFraction: 0,
    inRotation: 0,
    ejected: 0,
    panic: false,
    utilization: 0,
  }
  private readonly poolValues: PoolTickValues = {offered: 0, served: 0, failed: 0, inRotation: 0, latencyP99: 0}
  private readonly tickValues: TickValues = {
    t: 0,
    demand: 0,
    offered: 0,
    served: 0,
    failed: 0,
    shed: 0,
    restricted: 0,
    restrictedDemand: 0,
    retries: 0,
    inRotation: 0,
    ejected: 0,
    panic: 0,
  }

  constructor(readonly config: FleetConfig) {
    this.dt = config.tick
    this.ticks = Math.round(config.duration / config.tick)
    const random = new Random(config.seed)
    // A stream of its own, so that drawing arrivals leaves every other draw of the seed as it was.
    this.arrivalDraw = config.demand.arrivals === 'poisson' ? new Random(config.seed ^ 0x5a17a1) : null
    const service = config.pools.some((p) => p.serviceSpread > 0) ? serviceDraws(config) : null
    this.typeNames = config.demand.types.map((t) => t.name)
    const types = this.typeNames.length
    this.pools = config.pools.map(
      (p) =>
        new ServerPool(
          p,
          config.policy,
          config.healthCheck,
          this.dt,
          random,
          config.clients.thinkTime,
          config.model === 'seed' ? null : {clientTimeout: config.clients.timeout, service: service ?? noServiceDraws},
        ),
    )
    this.weights = Float64Array.from(config.pools, (p) => config.dns.weights[p.name] ?? 0)
    this.dns = new WeightedDns(this.pools.length, config.dns.ttl / this.dt, this.weights)
    this.clients = new ClientPopulation(config.clients, types, this.dt)
    this.restricted = new Float64Array(types)
    this.holds = this.pools.map(() => null)
    this.outages = this.pools.map(() => null)
    this.erring = new Float64Array(this.pools.length)
    // A stream of its own, so every other draw of the seed is as it was.
    this.errorDraw = config.demand.arrivals === 'poisson' ? new Random(config.seed ^ 0xe7702) : null
    this.fresh = new Float64Array(types)
    this.arrived = new Float64Array(types * config.clients.attempts)
    this.poolArrivals = new Float64Array(types)
    this.failures = {
      fast: new Float64Array(types),
      told: new Float64Array(types),
      turnedAway: new Float64Array(types),
      turnedAwayWait: new Float64Array(types),
      slow: new Float64Array(types),
    }
    this.restrictionWait = this.failures.turnedAwayWait
    this.everyFastFailureTold = config.model === 'seed'
    this.record = new SimulationRecord(
      this.ticks,
      this.dt,
      config.pools.map((p) => p.name),
      faultWindow(config.faults),
      undefined,
      this.arrivalDraw !== null || service !== null ? Math.max(1, Math.round(fullServiceWindowSeconds / this.dt)) : 1,
    )
    this.scheduleFaults(random)

    // The run starts in steady state: every client already connected to the pool DNS sends it to.
    const share = this.dns.published()
    const demand0 = this.demandAt(0)
    this.pools.forEach((pool, p) => pool.primeConnections(demand0 * share[p]))
  }

  get time(): number {
    return this.tick * this.dt
  }

  get done(): boolean {
    return this.tick >= this.ticks
  }

  poolIndex(name: string): number {
    const p = this.pools.findIndex((pool) => pool.config.name === name)
    if (p < 0) throw new Error(`no pool named ${name}`)
    return p
  }

  typeIndex(name: string): number {
    const j = this.typeNames.indexOf(name)
    if (j < 0) throw new Error(`no traffic type named ${name}`)
    return j
  }

  /** Publishes new DNS weights; clients follow as their resolvers' caches expire. */
  setWeights(weights: Record<string, number>): void {
    for (const [name, w] of Object.entries(weights)) this.weights[this.poolIndex(name)] = w
    this.dns.publish(this.weights)
  }

  /** Sets the load balancer's split between pools (an ALB rule's weighted forward): every request follows it at once. */
  setSplit(weights: Record<string, number>): void {
    for (const [name, w] of Object.entries(weights)) this.weights[this.poolIndex(name)] = w
    this.dns.publishNow(this.weights)
  }

  currentWeights(): Record<string, number> {
    return Object.fromEntries(this.pools.map((p, i) => [p.config.name, this.weights[i]]))
  }

  /**
   * Turns `percent` of a traffic type's requests away at every load balancer with a fast 503 that
   * asks clients to wait `retryAfter` seconds (100: all of them); 0 lets it all back in.
   */
  setRestricted(type: string, percent: number, retryAfter = 0): void {
    const j = this.typeIndex(type)
    this.restricted[j] = Math.min(100, Math.max(0, percent)) / 100
    this.restrictionWait[j] = percent > 0 ? retryAfter : 0
    if (percent > 0) this.clients.reach(retryAfter, this.tick)
  }

  isRestricted(type: string): boolean {
    return this.restricted[this.typeIndex(type)] > 0
  }

  /** The seconds a restriction of the type asks its clients to wait (0 when it is not restricted). */
  restrictionRetryAfter(type: string): number {
    return this.restrictionWait[this.typeIndex(type)]
  }

  /** The percent of a type's requests a restriction turns away now. */
  restrictedPercent(type: string): number {
    return this.restricted[this.typeIndex(type)] * 100
  }

  /** The demand the load balancers send on to pools now, rps at the mean: every type's, less what its restriction turns away. */
  splitDemand(): number {
    const demand = this.demandAt(this.time)
    return this.config.demand.types.reduce((rps, type, j) => rps + demand * type.share * (1 - this.restricted[j]), 0)
  }

  /** Each server pool's serving capacity now (ServerPool.servingCapacity), by name. */
  servingCapacities(): Record<string, number> {
    return Object.fromEntries(this.pools.filter((p) => p.config.kind !== 'sorry').map((p) => [p.config.name, p.servingCapacity()]))
  }

  demandAt(seconds: number): number {
    return rateAt(this.config.demand.curve, seconds)
  }

  runUntil(seconds: number): void {
    // A wait that ends inside a tick lasts until the end of that tick.
    const until = Math.min(this.ticks, Math.ceil(seconds / this.dt - 1e-9))
    while (this.tick < until) this.step()
  }

  run(): SimulationRecord {
    while (!this.done) this.step()
    return this.record
  }

  step(): void {
    const t = this.tick
    if (t >= this.ticks) return
    const {dt, record, pools, typeNames} = this
    const types = typeNames.length
    const a = this.clients.attempts
    const seconds = t * dt

    // Plain loops, no closures or iterators: a sweep runs this some ten million times.
    for (let f = 0; f < this.faults.length; f++) {
      const fault = this.faults[f]
      if (t === fault.from) fault.apply(true)
      if (t === fault.to) fault.apply(false)
    }
    for (let p = 0; p < pools.length; p++) {
      const outage = this.outages[p]
      if (!outage) continue
      const pool = pools[p]
      if (t >= outage.from && t < outage.to) pool.newConnectionAdmission = 0
      else if (outage.lookupCapacity !== null && pool.lastNewConnections > 0)
        pool.newConnectionAdmission = Math.min(1, outage.lookupCapacity / pool.lastNewConnections)
      else pool.newConnectionAdmission = 1
    }

    const demand = this.demandAt(seconds)
    const draw = this.arrivalDraw
    const drawn = dt * (this.config.demand.sampleScale ?? 1)
    let restrictedDemand = 0
    // With drawn arrivals the demand is what arrived, as a drill's is what its load sent: served
    // against the curve's mean would read a burst's lucky second as loss and a lull's as none.
    let arrived = 0
    for (let j = 0; j < types; j++) {
      const mean = demand * this.config.demand.types[j].share
      this.fresh[j] = draw === null ? mean : draw.poisson(mean * drawn) / drawn
      arrived += this.fresh[j]
      restrictedDemand += this.fresh[j] * this.restricted[j]
    }
    this.clients.arrivals(t, this.fresh, this.arrived)

    const share = this.dns.advance()
    const {fast: typeFast, told: typeTold, turnedAway: typeAway, slow: typeSlow} = this.failures
    const seedRule = this.everyFastFailureTold
    for (let j = 0; j < types; j++) {
      typeFast[j] = 0
      typeTold[j] = 0
      typeAway[j] = 0
      typeSlow[j] = 0
    }
    let offered = 0,
      served = 0,
      failed = 0,
      shed = 0,
      restricted = 0,
      inRotation = 0,
      ejected = 0,
      panic = 0
    for (let p = 0; p < pools.length; p++) {
      const pool = pools[p]
      const s = share[p]
      for (let j = 0; j < types; j++) {
        let arriving = 0
        for (let k = 0; k < a; k++) arriving += this.arrived[j * a + k]
        this.poolArrivals[j] = arriving * s
      }
      const out = this.tickOut
      if (pool.config.kind === 'sorry') {
        let total = 0
        for (let j = 0; j < types; j++) total += this.poolArrivals[j]
        out.offered = total
        out.served = 0
        out.failedFast = total
        out.failedSlow = 0
        out.shed = 0
        out.restricted = 0
        out.servedFraction = 0
        out.fastFraction = 1
        out.inRotation = 0
        out.ejected = 0
        out.panic = false
        out.utilization = 0
      } else {
        pool.step(t, this.poolArrivals, this.restricted, this.holds[p], out)
        if (this.erring[p] > 0) this.answerErrors(this.erring[p], out)
      }
      // Each type's outcome at this pool, weighted by the share of the type's attempts it received.
      // Which fast answers carry Retry-After: the maintenance pool's and a restriction's (in the
      // seed's model, every one, with the clients' retryAfter).
      const hold = this.holds[p]
      const sorry = pool.config.kind === 'sorry'
      const fastTold = seedRule || sorry ? typeTold : typeFast
      for (let j = 0; j < types; j++) {
        // A restriction turns its share of the type away; the rest goes on to the servers.
        const away = sorry ? 0 : this.restricted[j]
        if (away > 0) {
          if (seedRule) typeTold[j] += s * away
          else typeAway[j] += s * away
        }
        const rest = s * (1 - away)
        if (rest === 0) continue
        if (hold && hold.active && hold.type === j) {
          typeSlow[j] += rest
        } else {
          fastTold[j] += rest * out.fastFraction
          typeSlow[j] += rest * Math.max(0, 1 - out.servedFraction - out.fastFraction)
        }
      }
      const ps = this.poolValues
      // A pool's own series leave out the requests a restriction turned away on purpose: gates
      // judge the traffic the service was asked to serve (the run's totals still count them).
      // A maintenance pool's too: a load balancer applies the restriction before it picks a pool
      // (HAProxy's frontend, an ALB rule of higher priority), so no pool counts them, and a split
      // measured by each pool's requests compares like with like. (Those clients still get the
      // maintenance page's answer here, not the restriction's.)
      let turnedAway = out.restricted
      if (sorry) for (let j = 0; j < types; j++) turnedAway += this.poolArrivals[j] * this.restricted[j]
      ps.offered = out.offered - turnedAway
      ps.served = out.served
      ps.failed = out.failedFast + out.failedSlow - turnedAway
      ps.inRotation = out.inRotation
      ps.latencyP99 = this.latencyP99(pool, out)
      record.pool(p, ps)
      offered += out.offered
      served += out.served
      failed += out.failedFast + out.failedSlow
      shed += out.shed
      restricted += out.restricted
      inRotation += out.inRotation
      ejected += out.ejected
      if (out.panic) panic++
    }
    this.clients.settle(t, this.arrived, this.failures)

    const tv = this.tickValues
    tv.t = seconds
    tv.demand = draw === null ? demand : arrived
    tv.offered = offered
    tv.served = served
    tv.failed = failed
    tv.shed = shed
    tv.restricted = restricted
    tv.restrictedDemand = restrictedDemand
    tv.retries = this.clients.retriesMade
    tv.inRotation = inRotation
    tv.ejected = ejected
    tv.panic = panic
    record.commit(tv)
    this.tick = t + 1
  }

  /**
   * A rough p99 in milliseconds: the client timeout when more than 1% of attempts hang, otherwise
   * the service time stretched by queueing (M/M/1: 1 / (1 − utilisation)).
   */
  private latencyP99(pool: ServerPool, out: PoolTick): number {
    if (out.offered <= 0) return NaN
    if (out.failedSlow / out.offered > 0.01) return this.config.clients.timeout * 1000
    const serviceMs = pool.config.serviceTime * 1000
    return serviceMs / (1 - Math.min(0.95, out.utilization))
  }

  /** Lets the run go on past the scenario's duration (a rehearsal that outlasts it). */
  extendTo(seconds: number): void {
    const ticks = Math.round(seconds / this.dt)
    if (ticks <= this.ticks) return
    this.ticks = ticks
    this.record.grow(ticks)
  }

  /**
   * A pool that errs answers `share` of what its servers served with a fast error (a 500 after the
   * work, as a bad build does): those requests move from served to failed, and their types' clients
   * learn at once. With drawn arrivals how many err is drawn too (a binomial, by its normal or
   * Poisson approximation, on the requests a drill's scale sends), as a drill's servers draw it.
   */
  private answerErrors(share: number, out: PoolTick): void {
    if (out.served <= 0) return
    const e = Math.min(1, share)
    let erred = out.served * e
    const draw = this.errorDraw
    if (draw !== null && e < 1) {
      const per = this.dt * (this.config.demand.sampleScale ?? 1)
      const n = out.served * per
      const mean = n * e
      const count = mean < 30 ? draw.poisson(mean) : Math.round(mean + Math.sqrt(mean * (1 - e)) * draw.normal())
      erred = Math.min(n, Math.max(0, count)) / per
    }
    const kept = (out.served - erred) / out.served
    const servedFraction = out.servedFraction * kept
    out.fastFraction += out.servedFraction - servedFraction
    out.servedFraction = servedFraction
    out.served -= erred
    out.failedFast += erred
  }

  private scheduleFaults(random: Random): void {
    const toTick = (s: number): number => Math.round(s / this.dt)
    for (const fault of this.config.faults) {
      const p = this.poolIndex(fault.pool)
      const pool = this.pools[p]
      const from = toTick(fault.from)
      const to = toTick(fault.to)
      if (fault.kind === 'broken') {
        // Which servers break is a seeded draw: the fault does not pick the first ones in a list.
        const order = new Int32Array(pool.size)
        for (let i = 0; i < pool.size; i++) order[i] = i
        random.shuffle(order, pool.size)
        const victims = order.slice(0, Math.min(fault.servers, pool.size))
        const refuse = fault.mode === 'refuse'
        this.faults.push({pool: p, from, to, apply: (active) => pool.breakServers(victims, active, refuse)})
      } else if (fault.kind === 'thread-hold') {
        const hold: ThreadHold = {type: this.typeIndex(fault.type), holdSeconds: fault.holdSeconds, release: fault.release, active: false}
        this.holds[p] = hold
        this.faults.push({
          pool: p,
          from,
          to,
          apply: (active) => {
            hold.active = active
          },
        })
      } else if (fault.kind === 'errors') {
        // Overlapping faults add up, to every request at most.
        this.faults.push({pool: p, from, to, apply: (active) => (this.erring[p] = Math.max(0, this.erring[p] + (active ? 1 : -1) * (fault.percent / 100)))})
      } else {
        this.outages[p] = {from, to, lookupCapacity: fault.lookupCapacity}
      }
    }
    // A scenario's restrictions switch on and off as faults do; a runbook's restrict may change them after.
    for (const r of this.config.restrictions)
      this.faults.push({
        pool: 0,
        from: toTick(r.from),
        to: r.to === null ? Number.POSITIVE_INFINITY : toTick(r.to),
        apply: (active) => this.setRestricted(r.type, active ? r.share : 0, r.retryAfter),
      })
  }
}

/** The fleet's table of standard normals for service times, from a stream of its own so every other draw of the seed is as it was. */
function serviceDraws(config: FleetConfig): ServiceDraws {
  const draw = new Random(config.seed ^ 0x5e41ce)
  const normals = new Float64Array(normalsSize)
  // Box–Muller: 1 − next() is in (0, 1], so the logarithm is finite.
  for (let i = 0; i < normalsSize; i++) normals[i] = Math.sqrt(-2 * Math.log(1 - draw.next())) * Math.cos(2 * Math.PI * draw.next())
  return {normals, draw, sampleScale: config.demand.sampleScale ?? 1}
}
