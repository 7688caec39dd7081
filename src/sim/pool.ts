import {EnvoyEjection} from './checks/envoy-ejection.js'
import {HaproxyChecks} from './checks/haproxy-checks.js'
import {noTimer, type CheckedPool, type PoolChecks} from './checks/pool-checks.js'
import type {HealthCheckConfig, Policy, PoolConfig, ThreadHoldRelease} from './config.js'
import {fraction, normalsSize, serveBasic, warmTo, serveHolding, serveLean, TickSums, type ServerArrays} from './pool-kernel.js'
import {Random} from './random.js'
import {Slab} from './slab.js'

function sumInOrder(values: Float64Array, n: number): number {
  let total = 0
  for (let i = 0; i < n; i++) total += values[i]
  return total
}

/** What one pool did with one tick's traffic, in requests per second. */
export interface PoolTick {
  offered: number
  served: number
  /** Failed with a fast answer (shed, restricted, no healthy host, refused): clients learn at once. */
  failedFast: number
  /** Failed by timing out (overloaded, broken, stalled): clients learn after their timeout. */
  failedSlow: number
  shed: number
  restricted: number
  /** Of the served traffic, the share per type is uniform except for these. */
  servedFraction: number
  fastFraction: number
  /**
   * Servers the load balancer sent this tick's traffic to: those registered and not ejected when
   * the tick began (before this tick's health check ejects any), or in panic every registered one.
   */
  inRotation: number
  ejected: number
  panic: boolean
  /** Load on the servers that took traffic, over what they could complete: above 1 means overload. */
  utilization: number
}

/** A dependency that holds threads: while active, requests of one type each hold a thread for holdSeconds. */
export interface ThreadHold {
  /** Index of the traffic type whose requests hold threads. */
  type: number
  holdSeconds: number
  release: ThreadHoldRelease
  /** After the fault is fixed, threads already held are still released only as their calls time out. */
  active: boolean
}

/**
 * One load-balanced pool of servers: the load balancer (weights, slow start, panic; its health
 * checks are a family of their own, src/sim/checks) and the servers behind it (capacity, goodput
 * collapse past capacity, shedding, connection cost, cold caches, held threads; the per-tick
 * arithmetic is in pool-kernel.ts).
 *
 * State is kept in typed arrays indexed by server so a tick is a few tight loops with no
 * per-request or per-server objects.
 */
/**
 * What a fleet gives its pools to draw service times with: one table of standard normals (made
 * once, so a sweep's thousands of small pools do not each make one), a stream that picks where
 * each tick starts reading it, and the share of the requests counted (a drill's sample).
 */
export interface ServiceDraws {
  normals: Float64Array
  draw: Random
  sampleScale: number
}

/** For a fleet whose pools draw no service times (serviceSpread 0): never read. */
export const noServiceDraws: ServiceDraws = {normals: new Float64Array(0), draw: new Random(0), sampleScale: 1}

export class ServerPool implements ServerArrays, CheckedPool {
  readonly size: number
  readonly capacity: Float64Array
  readonly threads: Float64Array
  /** 1 while the server is registered with the load balancer (a drained server is not). */
  readonly registered: Uint8Array
  readonly ejected: Uint8Array
  readonly ejectedUntil: Int32Array
  readonly timesEjected: Int32Array
  /** Tick at which the current slow start began; -1 when not in slow start. */
  readonly slowStartSince: Int32Array
  /** How many active faults break this server (faults may overlap). Change it through breakServers. */
  readonly broken: Uint8Array
  /** 1 when a broken server refuses connections (fast) rather than hanging (slow). */
  readonly refuses: Uint8Array
  /** Stalled by held threads; only a restart clears it. */
  readonly stalled: Uint8Array
  /** Tick at which a restarting server is up again; 0 when not restarting. */
  readonly restartingUntil: Int32Array
  /** broken, stalled and restarting folded into one byte for the tick loop: 0 up, 1 hangs, 2 answers fast. */
  readonly down: Uint8Array
  /** 0 = cold, 1 = warm; capacity scales between coldFactor and 1. */
  readonly warmth: Float64Array
  /** capacity × (coldFactor + (1 − coldFactor) × warmth), kept up to date as warmth changes. */
  readonly effectiveCapacity: Float64Array
  /**
   * Requests per second the server can carry this tick on connections that are already open: what
   * it answered one think time ago (a client answered then asks again now, on the same
   * connection). The kernels write this tick's answers into it, read again a think time later.
   * It is this tick's slot of `answeredSlots`, a ring of one think time, or the only slot when that is one tick.
   */
  openConnections: Float64Array
  /** Each tick's answers for one think time of ticks (slot-major), one view per slot. */
  private readonly answeredSlots: Float64Array[]
  readonly heldThreads: Float64Array
  /** 1 when this tick the server would fail a health check. */
  readonly failing: Uint8Array
  /** See ServerArrays.heldRing: sized when a thread-holding fault first acts here, in the queueing model. */
  heldRing = new Float64Array(0)
  readonly backlog: Float64Array
  readonly parked: Float64Array
  readonly completionSpread: Float64Array
  private holdTicks = 0
  private readonly thinkTicks: number
  private readonly weight: Float64Array
  /** 1 per registered server: the weights of panic routing, which ignores health and slow start. */
  private readonly registeredWeight: Float64Array
  /** This pool's copy of the setup: a runbook step may change slow start on one target group. */
  readonly policy: Policy
  ejectedCount = 0
  /** Share of new connections the shared metadata store can route this tick (1 = all). */
  newConnectionAdmission = 1
  /** Sum of new connections asked for in the last tick, for the metadata store's capacity. */
  lastNewConnections = fraction

  // The balancer's weights change only when a server is ejected, returns, registers, drains or is
  // in slow start, so they are kept from tick to tick and recomputed only then.
  private weightsValid = false
  /** Servers in rotation still in slow start, whose weight grows every tick, by index. */
  private readonly slowList: Int32Array
  private slowCount = 0
  /** The earliest tick at which an ejection or a restart ends. */
  private nextTimer = 0
  private registeredCount = 0
  private inRotationCount = 0
  private totalWeight = fraction
  /** Set once a thread-holding fault has been active here: from then on held threads are counted. */
  private holding = false
  /** Servers warming up after a restart (warmth < 1). */
  private warming = 0
  private readonly sums = new TickSums()
  /** Who decides which servers are in rotation: Envoy's ejection or HAProxy's checks. */
  readonly checks: PoolChecks
  /**
   * Each server's share of picks relative to the others: 1 for round-robin and random; for
   * least-connections its capacity over the mean, since a faster server finishes sooner and so
   * holds fewer connections.
   */
  private readonly pick: Float64Array
  /** For random picks: the draw, and this tick's weights with the wobble of independent picks. */
  private readonly random: Random | null
  private readonly noisy: Float64Array
  /** Where this tick's servers start reading the table of normals; null when service times are not drawn. */
  private readonly serviceDraw: Random | null = null

  constructor(
    readonly config: PoolConfig,
    policy: Policy,
    health: HealthCheckConfig,
    readonly dt: number,
    random: Random,
    /** Seconds from an answer to its client's next request on that connection (the scenario's clients.thinkTime). */
    thinkTime: number,
    /**
     * The queueing model's rules (src/sim/config.ts, SimulationModel): servers carry their queue
     * from tick to tick, and held threads are released exactly holdSeconds after they were taken.
     * Without them, the seed's: goodput collapses by `collapse`, held threads go at random.
     */
    private readonly queueing: {clientTimeout: number; service: ServiceDraws} | null,
  ) {
    this.policy = {...policy}
    const n = config.kind === 'servers' ? config.servers : 0
    this.size = n
    // Every per-server array is a view on one buffer: a sweep builds thousands of small pools, and
    // one allocation costs less than twenty.
    const slab = new Slab(n, 11, 5, 7)
    this.capacity = slab.float64()
    this.threads = slab.float64()
    this.warmth = slab.float64().fill(1)
    this.effectiveCapacity = slab.float64()
    this.openConnections = slab.float64()
    // The think time in whole ticks, at least one: one tick is the rule of the 1 s tick before
    // think time was a setting, so those scenarios' figures are what they were.
    const thinkTicks = Math.max(1, Math.round(thinkTime / dt))
    this.thinkTicks = thinkTicks
    if (thinkTicks === 1 || n === 0) this.answeredSlots = [this.openConnections]
    else {
      const ring = new Float64Array(thinkTicks * n)
      this.answeredSlots = Array.from({length: thinkTicks}, (_, slot) => ring.subarray(slot * n, slot * n + n))
      this.openConnections = this.answeredSlots[0]
    }
    this.heldThreads = slab.float64()
    this.weight = slab.float64()
    this.registeredWeight = slab.float64().fill(1)
    this.backlog = slab.float64()
    this.parked = slab.float64()
    this.completionSpread = slab.float64()
    this.ejectedUntil = slab.int32()
    this.timesEjected = slab.int32()
    this.slowStartSince = slab.int32().fill(-1)
    this.restartingUntil = slab.int32()
    this.slowList = slab.int32()
    this.registered = slab.uint8().fill(1)
    this.ejected = slab.uint8()
    this.broken = slab.uint8()
    this.refuses = slab.uint8()
    this.stalled = slab.uint8()
    this.down = slab.uint8()
    this.failing = slab.uint8()
    const cold = config.coldFactor
    for (let i = 0; i < n; i++) {
      const spread = config.capacitySpread === 0 ? 0 : config.capacitySpread * (2 * random.next() - 1)
      this.capacity[i] = config.capacity * (1 + spread)
      this.threads[i] = config.threads * (1 + spread)
    }
    if (config.slowMinority !== null) {
      // Which servers are the slow ones is a seeded draw.
      const order = Int32Array.from({length: n}, (_, i) => i)
      random.shuffle(order, n)
      const slow = Math.round(config.slowMinority.share * n)
      for (let k = 0; k < slow; k++) this.capacity[order[k]] *= config.slowMinority.factor
    }
    for (let i = 0; i < n; i++) this.effectiveCapacity[i] = this.capacity[i] * (cold + (1 - cold) * this.warmth[i])
    this.pick = new Float64Array(n).fill(1)
    if (config.balance === 'least-connections' && n > 0) {
      let total = 0
      for (let i = 0; i < n; i++) total += this.capacity[i]
      for (let i = 0; i < n; i++) this.pick[i] = (this.capacity[i] * n) / total
    }
    this.random = config.balance === 'random' ? random : null
    this.noisy = this.random === null ? this.weight : new Float64Array(n)
    // HAProxy times a check out at `inter` when `timeout check` is not set. The seed model's check
    // waits for the queue, then for its own service; the queueing model's costs no service time
    // (haproxy-checks.ts), as the drill's servers answer it.
    const busyAnswersInTime = config.queueSeconds !== null && config.queueSeconds + config.serviceTime < health.interval
    this.checks = health.haproxy
      ? new HaproxyChecks(this, health.haproxy, health.interval, queueing !== null ? 'queued' : busyAnswersInTime ? 'busy-in-time' : 'busy-late', random)
      : new EnvoyEjection(this, health, random)
    this.sums.quiet = 1
    if (queueing !== null) {
      const k = this.sums
      if (config.serviceSpread > 0 && n > 0) {
        // Per request, a spread cv in service time; per tick, a server's completions spread by
        // cv × √(completions), counted at the drill's sample of the requests where it has one.
        k.noiseScale = config.serviceSpread / Math.sqrt(dt * queueing.service.sampleScale)
        k.normals = queueing.service.normals
        let least = Infinity
        for (let i = 0; i < n; i++) least = Math.min(least, this.capacity[i] * cold)
        k.quiet = least > 0 ? Math.max(0, 1 - (4 * k.noiseScale) / Math.sqrt(least)) : 0
        for (let i = 0; i < n; i++) warmTo(this, i, this.warmth[i], cold, k.noiseScale)
        this.serviceDraw = queueing.service.draw
        k.draw = queueing.service.draw
      }
      k.backlogOn = true
      k.queueSeconds = config.queueSeconds ?? Infinity
      k.timeout = queueing.clientTimeout
      k.checkTimeout = health.interval
      k.dt = dt
      k.serviceTime = config.serviceTime
    }
    serveBasic(this, this.weight, this.sums, 0)
    serveLean(this, this.weight, this.sums, 0)
    serveHolding(this, this.weight, this.sums, 0)
    this.sums.reset()
  }

  get maxEjected(): number {
    return Math.floor((this.size * this.policy.maxEjectionPercent) / 100)
  }

  /** Servers a client connection was already open to before the run: the pool starts warm and connected. */
  primeConnections(rps: number): void {
    let registered = 0
    for (let i = 0; i < this.size; i++) registered += this.registered[i]
    if (registered === 0) return
    for (const slot of this.answeredSlots) for (let i = 0; i < this.size; i++) slot[i] = this.registered[i] ? rps / registered : 0
  }

  /**
   * Routes one tick of traffic. `arriving` is requests per second by traffic type; the share of
   * each type in `restricted` (0–1) is turned away by the load balancer with a fast 503 before
   * reaching a server.
   */
  step(t: number, arriving: Float64Array, restricted: Float64Array, hold: ThreadHold | null, out: PoolTick): void {
    const n = this.size
    const {policy, dt, config} = this
    let offered = 0
    let restrictedLoad = 0
    for (let j = 0; j < arriving.length; j++) {
      offered += arriving[j]
      restrictedLoad += arriving[j] * restricted[j]
    }
    const routed = offered - restrictedLoad
    const holdLoad = hold && hold.active ? arriving[hold.type] * (1 - restricted[hold.type]) : 0
    const holdShare = routed > 0 ? holdLoad / routed : 0
    if (hold && hold.active && !this.holding) this.startHolding(hold)

    if (this.thinkTicks > 1) this.openConnections = this.answeredSlots[t % this.thinkTicks]
    if (!this.weightsValid || t >= this.nextTimer) this.refreshWeights(t)
    else if (this.slowCount > 0) this.advanceSlowStart(t)
    const registeredCount = this.registeredCount
    const inRotation = this.inRotationCount
    const panic = policy.panicThreshold > 0 && registeredCount > 0 && (inRotation * 100) / registeredCount < policy.panicThreshold
    // Panic routing ignores health and slow start: every registered host gets an equal share.
    let weight = panic ? this.registeredWeight : this.weight
    let totalWeight = panic ? registeredCount : this.totalWeight
    if (this.random !== null && totalWeight > 0) {
      totalWeight = this.wobble(weight, totalWeight, routed * dt)
      weight = this.noisy
    }

    const k = this.sums
    k.reset()
    const holdDecay = hold ? Math.exp(-dt / hold.holdSeconds) : 1
    if (totalWeight === 0) {
      // No host to send to: the load balancer answers 503 at once ("no healthy upstream").
      k.fast = routed
      const {openConnections: open, down, failing, backlog, effectiveCapacity} = this
      for (let i = 0; i < n; i++) {
        open[i] = 0
        failing[i] = down[i] !== 0 ? 1 : 0
        // A queue with nothing arriving drains.
        if (backlog[i] !== 0) backlog[i] = Math.max(0, backlog[i] - effectiveCapacity[i] * dt)
      }
      if (this.holding) this.releaseHeld(t, holdDecay)
    } else {
      k.perWeight = routed / totalWeight
      if (this.serviceDraw !== null) k.noiseAt = this.serviceDraw.below(normalsSize)
      k.keep = 1 - Math.min(1, config.connectionChurn * dt * this.thinkTicks)
      k.handshake = config.handshakeCost
      k.admission = this.newConnectionAdmission
      k.shed = policy.shed
      k.collapse = config.collapse
      k.cold = config.coldFactor
      k.warmStep = config.coldFactor < 1 && this.warming > 0 ? (config.warmupSeconds > 0 ? dt / config.warmupSeconds : 1) : 0
      if (this.holding) {
        k.holdShare = holdShare
        k.holdDecay = holdDecay
        k.holdReleases = hold?.release === 'at-timeout'
        k.holdSlot = this.holdTicks === 0 ? 0 : t % this.holdTicks
        k.dt = dt
        k.serviceTime = config.serviceTime
        serveHolding(this, weight, k, n)
      } else if (k.handshake === 1 && k.keep === 1 && k.admission === 1 && k.warmStep === 0 && k.noiseScale === 0) {
        serveBasic(this, weight, k, n)
      } else {
        serveLean(this, weight, k, n)
      }
      this.warming -= k.warmed
    }
    this.lastNewConnections = k.newAsked

    // The check ejects after this tick's traffic was served: the servers that took that traffic
    // are the ones in rotation before it (in panic, every registered server).
    const tookTraffic = totalWeight === 0 ? 0 : panic ? registeredCount : inRotation
    this.checks.afterTick(t, weight, totalWeight === 0 ? 0 : k.perWeight, totalWeight !== 0)

    const served = k.served
    const fast = k.fast
    out.offered = offered
    out.served = served
    out.failedFast = fast + restrictedLoad
    out.failedSlow = k.slow
    out.shed = k.shedLoad
    out.restricted = restrictedLoad
    const normal = routed - holdLoad
    out.servedFraction = normal > 0 ? Math.min(1, served / normal) : 0
    out.fastFraction = normal > 0 ? Math.min(1 - out.servedFraction, fast / normal) : 0
    out.inRotation = tookTraffic
    out.ejected = this.ejectedCount
    out.panic = panic
    out.utilization = k.capUp > 0 ? k.loadUp / k.capUp : 0
  }

  /**
   * Random picks: of `requests` this tick, a server of weight w gets Binomial(requests, w / total),
   * drawn from its normal approximation (mean and variance the binomial's, at least 0). Writes the
   * weights into `noisy` and returns their total.
   */
  private wobble(weight: Float64Array, total: number, requests: number): number {
    const {noisy, size: n} = this
    const random = this.random!
    let sum = 0
    for (let i = 0; i < n; i++) {
      const p = weight[i] / total
      if (p === 0 || requests <= 0) {
        noisy[i] = weight[i]
      } else {
        // Box–Muller: one standard normal from two uniforms.
        const z = Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next())
        const got = requests * p + z * Math.sqrt(requests * p * (1 - p))
        noisy[i] = got > 0 ? (got / requests) * total : 0
      }
      sum += noisy[i]
    }
    return sum
  }

  private startHolding(hold: ThreadHold): void {
    this.holding = true
    if (this.queueing === null) return
    this.holdTicks = Math.max(1, Math.round(hold.holdSeconds / this.dt))
    this.heldRing = new Float64Array(this.holdTicks * this.size)
  }

  /** A tick no server takes traffic: threads held holdSeconds ago are released all the same. */
  private releaseHeld(t: number, holdDecay: number): void {
    const {heldThreads: held, heldRing: ring, size: n} = this
    if (ring.length === 0) {
      for (let i = 0; i < n; i++) held[i] *= holdDecay
      return
    }
    const base = (t % this.holdTicks) * n
    for (let i = 0; i < n; i++) {
      const left = held[i] - ring[base + i]
      held[i] = left < 1e-9 ? 0 : left
      ring[base + i] = 0
    }
  }

  /**
   * Timers first (ejections that ran out, restarts that finished), and in the same pass the
   * weights the balancer uses outside panic, the counts panic is judged on, and when this has
   * to run again.
   */
  private refreshWeights(t: number): void {
    const n = this.size
    const {ejected: ejectedArr, registered: registeredArr, weight, slowStartSince: slowStart, ejectedUntil, restartingUntil} = this
    const slowTicks = this.policy.slowStart / this.dt
    const minWeight = this.policy.slowStartMinWeightPercent / 100
    let registeredCount = 0
    let inRotation = 0
    let totalWeight = 0
    let slowCount = 0
    const slowList = this.slowList
    let nextTimer = noTimer
    for (let i = 0; i < n; i++) {
      if (ejectedArr[i] !== 0) {
        if (t >= ejectedUntil[i]) {
          ejectedArr[i] = 0
          this.ejectedCount--
          if (slowTicks > 0) slowStart[i] = t
        } else if (ejectedUntil[i] < nextTimer) nextTimer = ejectedUntil[i]
      }
      const until = restartingUntil[i]
      if (until !== 0) {
        if (t >= until) {
          restartingUntil[i] = 0
          this.syncDown(i)
          if (slowTicks > 0) slowStart[i] = t
        } else if (until < nextTimer) nextTimer = until
      }
      let w = 0
      if (registeredArr[i] !== 0) {
        registeredCount++
        if (ejectedArr[i] === 0) {
          inRotation++
          w = this.pick[i]
          if (slowStart[i] >= 0) {
            w = this.pick[i] * this.slowStartWeight(i, t, slowTicks, minWeight)
            if (slowStart[i] >= 0) slowList[slowCount++] = i
          }
        }
      }
      weight[i] = w
      totalWeight += w
    }
    this.registeredCount = registeredCount
    this.inRotationCount = inRotation
    this.totalWeight = totalWeight
    this.slowCount = slowCount
    this.nextTimer = nextTimer
    this.weightsValid = true
  }

  /**
   * A tick on which only slow starts move: the weights of the servers in slow start grow (as in
   * refreshWeights) and the total is summed again in server order, so it is the same number.
   */
  private advanceSlowStart(t: number): void {
    const {weight, slowStartSince: slowStart, slowList} = this
    const slowTicks = this.policy.slowStart / this.dt
    const minWeight = this.policy.slowStartMinWeightPercent / 100
    let kept = 0
    for (let k = 0; k < this.slowCount; k++) {
      const i = slowList[k]
      weight[i] = this.pick[i] * this.slowStartWeight(i, t, slowTicks, minWeight)
      if (slowStart[i] >= 0) slowList[kept++] = i
    }
    this.slowCount = kept
    this.totalWeight = sumInOrder(weight, this.size)
  }

  /** The share of its weight the load balancer gives server i at tick t: below 1 in slow start, as the balancer shows it. */
  slowStartShare(i: number, t: number): number {
    const slowTicks = this.policy.slowStart / this.dt
    const elapsed = t - this.slowStartSince[i]
    if (this.slowStartSince[i] < 0 || elapsed >= slowTicks) return 1
    return this.checks.slowStartWeight(elapsed, slowTicks, this.policy.slowStartMinWeightPercent / 100)
  }

  /**
   * The weight of a server in slow start at tick t, growing with the time since it began; once
   * that has run its course the slow start ends (slowStartSince −1) and the weight is 1.
   */
  private slowStartWeight(i: number, t: number, slowTicks: number, minWeight: number): number {
    const elapsed = t - this.slowStartSince[i]
    if (elapsed < slowTicks) return this.checks.slowStartWeight(elapsed, slowTicks, minWeight)
    this.slowStartSince[i] = -1
    return 1
  }

  /** Out of rotation until tick `until`: ejected by Envoy for its ejection time, or DOWN in HAProxy (noTimer) until checks pass. */
  takeOut(i: number, until: number): void {
    this.ejected[i] = 1
    this.ejectedUntil[i] = until
    this.slowStartSince[i] = -1
    this.ejectedCount++
    this.weightsValid = false
  }

  /** Back into rotation (HAProxy's checks passed), in slow start when the policy has it. */
  putBack(i: number, t: number): void {
    this.ejected[i] = 0
    this.ejectedCount--
    if (this.policy.slowStart > 0) this.slowStartSince[i] = t
    this.weightsValid = false
  }

  /** Recomputes a server's down byte from what can put it down. */
  private syncDown(i: number): void {
    const out = this.broken[i] !== 0 || this.stalled[i] !== 0 || this.restartingUntil[i] !== 0
    this.down[i] = !out ? 0 : this.refuses[i] !== 0 || this.restartingUntil[i] !== 0 ? 2 : 1
  }

  countInRotation(): number {
    let c = 0
    for (let i = 0; i < this.size; i++) if (this.registered[i] && !this.ejected[i]) c++
    return c
  }

  /** What the servers in rotation and up serve now, rps, each at its warmth (a restarted server serves coldFactor of its capacity until warmed). */
  servingCapacity(): number {
    let rps = 0
    for (let i = 0; i < this.size; i++) if (this.registered[i] && !this.ejected[i] && this.down[i] === 0) rps += this.effectiveCapacity[i]
    return rps
  }

  /** A fault starts (or ends) on these servers: broken while any fault on them is active. */
  breakServers(ids: ArrayLike<number>, active: boolean, refuse: boolean): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      // A server remediated while the fault was active has nothing left to clear.
      if (active) this.broken[i]++
      else if (this.broken[i] > 0) this.broken[i]--
      this.refuses[i] = active && refuse ? 1 : 0
      this.syncDown(i)
    }
  }

  // --- operator actions (what a runbook step does to a pool) ---

  /** Takes servers out of rotation: the load balancer stops sending them new requests. */
  deregister(ids: ArrayLike<number>): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      if (!this.registered[i]) continue
      this.registered[i] = 0
      this.registeredWeight[i] = 0
      // A target registered again is a new host to the load balancer: no ejection history.
      this.timesEjected[i] = 0
      if (this.ejected[i]) {
        this.ejected[i] = 0
        this.ejectedCount--
      }
    }
    this.weightsValid = false
  }

  /** Puts servers back into rotation, in slow start when the policy has it. */
  register(ids: ArrayLike<number>, t: number): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      if (this.registered[i]) continue
      this.registered[i] = 1
      this.registeredWeight[i] = 1
      this.slowStartSince[i] = this.policy.slowStart > 0 ? t : -1
      this.checks.registered(i, t)
    }
    this.weightsValid = false
  }

  /** Repairs whatever a fault broke on these servers (the remediation a runbook's hook performs). */
  remediate(ids: ArrayLike<number>): void {
    for (let k = 0; k < ids.length; k++) {
      this.broken[ids[k]] = 0
      this.refuses[ids[k]] = 0
      this.syncDown(ids[k])
    }
  }

  /** Restarts servers: down for `downSeconds`, then up cold, with no open connections and no held threads. */
  restart(ids: ArrayLike<number>, t: number, downSeconds: number): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      this.stalled[i] = 0
      this.heldThreads[i] = 0
      this.backlog[i] = 0
      for (let at = i; at < this.heldRing.length; at += this.size) this.heldRing[at] = 0
      for (const slot of this.answeredSlots) slot[i] = 0
      if (this.warmth[i] === 1) this.warming++
      warmTo(this, i, 0, this.config.coldFactor, this.sums.noiseScale)
      this.restartingUntil[i] = t + Math.max(1, Math.round(downSeconds / this.dt))
      this.syncDown(i)
    }
    this.weightsValid = false
  }
}
