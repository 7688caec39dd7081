import type {HealthCheckConfig, Policy, PoolConfig} from './config.js'
import type {Random} from './random.js'

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
  /** Servers registered and not ejected: what the load balancer believes is healthy. */
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
  /** After the fault is fixed, threads already held are still released only as their calls time out. */
  active: boolean
}

/**
 * One load-balanced pool of servers: the load balancer (weights, slow start, panic, periodic
 * health checks with Envoy-style ejection) and the servers behind it (capacity, goodput collapse
 * past capacity, shedding, connection cost, cold caches, held threads).
 *
 * State is kept in typed arrays indexed by server so a tick is a few tight loops with no
 * per-request or per-server objects.
 */
export class ServerPool {
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
  /** How many active faults break this server (faults may overlap). */
  readonly broken: Uint8Array
  /** 1 when a broken server refuses connections (fast) rather than hanging (slow). */
  readonly refuses: Uint8Array
  /** Stalled by held threads; only a restart clears it. */
  readonly stalled: Uint8Array
  /** Tick at which a restarting server is up again; 0 when not restarting. */
  readonly restartingUntil: Int32Array
  /** 0 = cold, 1 = warm; capacity scales between coldFactor and 1. */
  readonly warmth: Float64Array
  /** Requests per second the server carries on connections that are already open. */
  readonly openConnections: Float64Array
  readonly heldThreads: Float64Array
  /** This tick's load and completed requests per server (read by gates and tests). */
  readonly load: Float64Array
  readonly served: Float64Array
  /** 1 when this tick the server would fail a health check. */
  readonly failing: Uint8Array
  private readonly weight: Float64Array
  private readonly candidates: Int32Array
  /** This pool's copy of the setup: a runbook step may change slow start on one target group. */
  readonly policy: Policy
  private ejectedCount = 0
  /** Share of new connections the shared metadata store can route this tick (1 = all). */
  newConnectionAdmission = 1
  /** Sum of new connections asked for in the last tick, for the metadata store's capacity. */
  lastNewConnections = 0

  constructor(
    readonly config: PoolConfig,
    policy: Policy,
    private readonly health: HealthCheckConfig,
    private readonly dt: number,
    private readonly random: Random,
  ) {
    this.policy = {...policy}
    const n = config.kind === 'servers' ? config.servers : 0
    this.size = n
    this.capacity = new Float64Array(n)
    this.threads = new Float64Array(n)
    this.registered = new Uint8Array(n).fill(1)
    this.ejected = new Uint8Array(n)
    this.ejectedUntil = new Int32Array(n)
    this.timesEjected = new Int32Array(n)
    this.slowStartSince = new Int32Array(n).fill(-1)
    this.broken = new Uint8Array(n)
    this.refuses = new Uint8Array(n)
    this.stalled = new Uint8Array(n)
    this.restartingUntil = new Int32Array(n)
    this.warmth = new Float64Array(n).fill(1)
    this.openConnections = new Float64Array(n)
    this.heldThreads = new Float64Array(n)
    this.load = new Float64Array(n)
    this.served = new Float64Array(n)
    this.failing = new Uint8Array(n)
    this.weight = new Float64Array(n)
    this.candidates = new Int32Array(n)
    for (let i = 0; i < n; i++) {
      const spread = config.capacitySpread === 0 ? 0 : config.capacitySpread * (2 * this.random.next() - 1)
      this.capacity[i] = config.capacity * (1 + spread)
      this.threads[i] = config.threads * (1 + spread)
    }
  }

  get maxEjected(): number {
    return Math.floor((this.size * this.policy.maxEjectionPercent) / 100)
  }

  /** Servers a client connection was already open to before the run: the pool starts warm and connected. */
  primeConnections(rps: number): void {
    let registered = 0
    for (let i = 0; i < this.size; i++) registered += this.registered[i]
    if (registered === 0) return
    for (let i = 0; i < this.size; i++) this.openConnections[i] = this.registered[i] ? rps / registered : 0
  }

  /**
   * Routes one tick of traffic. `arriving` is requests per second by traffic type; types flagged
   * in `restricted` are turned away by the load balancer with a fast 503 before reaching a server.
   */
  step(t: number, arriving: Float64Array, restricted: Uint8Array, hold: ThreadHold | null, out: PoolTick): void {
    const n = this.size
    const {policy, dt, config} = this
    let offered = 0
    let restrictedLoad = 0
    for (let j = 0; j < arriving.length; j++) {
      offered += arriving[j]
      if (restricted[j]) restrictedLoad += arriving[j]
    }
    const routed = offered - restrictedLoad
    const holdLoad = hold && hold.active && !restricted[hold.type] ? arriving[hold.type] : 0
    const holdShare = routed > 0 ? holdLoad / routed : 0

    // Timers first (ejections that ran out, restarts that finished), and in the same pass the
    // weights the balancer would use outside panic; panic, which is rare, redoes the weights.
    const ejectedArr = this.ejected
    const registeredArr = this.registered
    const weight = this.weight
    const slowStart = this.slowStartSince
    const slowTicks = policy.slowStart / dt
    const minWeight = policy.slowStartMinWeightPercent / 100
    let registeredCount = 0
    let inRotation = 0
    let totalWeight = 0
    for (let i = 0; i < n; i++) {
      if (ejectedArr[i] !== 0 && t >= this.ejectedUntil[i]) {
        ejectedArr[i] = 0
        this.ejectedCount--
        if (slowTicks > 0) slowStart[i] = t
      }
      if (this.restartingUntil[i] !== 0 && t >= this.restartingUntil[i]) {
        this.restartingUntil[i] = 0
        if (slowTicks > 0) slowStart[i] = t
      }
      let w = 0
      if (registeredArr[i] !== 0) {
        registeredCount++
        if (ejectedArr[i] === 0) {
          inRotation++
          w = 1
          const since = slowStart[i]
          if (since >= 0) {
            const elapsed = t - since
            if (elapsed < slowTicks) {
              w = elapsed / slowTicks
              if (w < minWeight) w = minWeight
            } else {
              slowStart[i] = -1
            }
          }
        }
      }
      weight[i] = w
      totalWeight += w
    }
    const panic =
      policy.panicThreshold > 0 && registeredCount > 0 && (inRotation * 100) / registeredCount < policy.panicThreshold
    if (panic) {
      // Panic routing ignores health and slow start: every registered host gets an equal share.
      totalWeight = 0
      for (let i = 0; i < n; i++) {
        weight[i] = registeredArr[i]
        totalWeight += registeredArr[i]
      }
    }

    let served = 0
    let fast = 0
    let slow = 0
    let shed = 0
    let newAsked = 0
    let loadUp = 0
    let capUp = 0
    const h = config.handshakeCost
    const keep = 1 - Math.min(1, config.connectionChurn * dt)
    const holdDecay = hold ? Math.exp(-dt / hold.holdSeconds) : 1
    const warmStep = config.warmupSeconds > 0 ? dt / config.warmupSeconds : 1
    const cold = config.coldFactor
    const collapse = config.collapse
    const serviceTime = config.serviceTime
    const admission = this.newConnectionAdmission

    if (totalWeight === 0) {
      // No host to send to: the load balancer answers 503 at once ("no healthy upstream").
      fast += routed
      for (let i = 0; i < n; i++) {
        this.load[i] = 0
        this.served[i] = 0
        this.openConnections[i] = 0
        this.heldThreads[i] *= holdDecay
        this.failing[i] = this.isDown(i) ? 1 : 0
      }
    } else {
      const perWeight = routed / totalWeight
      const {load: loadOf, heldThreads: heldThreadsOf, broken: brokenOf, stalled: stalledOf, restartingUntil: restartingUntilOf, served: servedOf} = this
      const {openConnections: openConnectionsOf, failing: failingOf, refuses: refusesOf, threads: threadsOf, capacity: capacityOf, warmth: warmthOf} = this
      for (let i = 0; i < n; i++) {
        const l = perWeight * weight[i]
        loadOf[i] = l
        heldThreadsOf[i] *= holdDecay
        if (brokenOf[i] !== 0 || stalledOf[i] !== 0 || restartingUntilOf[i] !== 0) {
          servedOf[i] = 0
          openConnectionsOf[i] = 0
          failingOf[i] = 1
          if (refusesOf[i] !== 0 || restartingUntilOf[i] !== 0) fast += l
          else slow += l
          continue
        }
        // Requests of a thread-holding type never succeed and keep a thread each for holdSeconds.
        // Threads limit throughput only near exhaustion (threads left / service time); when none
        // are left the server stalls, and stays stalled until it is restarted.
        const heldLoad = l * holdShare
        let threadCap = Infinity
        if (heldLoad > 0 || heldThreadsOf[i] > 0) {
          heldThreadsOf[i] += heldLoad * dt
          const free = threadsOf[i] - heldThreadsOf[i]
          if (free <= 0) {
            stalledOf[i] = 1
            servedOf[i] = 0
            openConnectionsOf[i] = 0
            failingOf[i] = 1
            slow += l
            continue
          }
          threadCap = free / serviceTime
        }
        slow += heldLoad
        const asked = l - heldLoad
        const cap = Math.min(capacityOf[i] * (cold + (1 - cold) * warmthOf[i]), threadCap)
        const onOpen = Math.min(asked, openConnectionsOf[i] * keep)
        let fresh = asked - onOpen
        newAsked += fresh
        if (admission < 1) {
          const refused = fresh * (1 - admission)
          fast += refused
          fresh -= refused
        }
        const work = onOpen + fresh * h
        loadUp += work
        capUp += cap
        let done: number
        let late = 0
        if (work <= cap) {
          done = onOpen + fresh
        } else if (policy.shed) {
          // Shedding rejects before the expensive step: open connections first, then new ones as budget allows.
          done = onOpen >= cap ? cap : onOpen + (cap - onOpen) / h
          const rejected = onOpen + fresh - done
          shed += rejected
          fast += rejected
        } else {
          const goodput = cap * Math.max(0, 1 - collapse * (work / cap - 1))
          done = (onOpen + fresh) * (goodput / work)
          slow += onOpen + fresh - done
          late = 1
        }
        servedOf[i] = done
        openConnectionsOf[i] = done
        failingOf[i] = late
        served += done
        if (cold < 1 && warmthOf[i] < 1 && done > 0) warmthOf[i] = Math.min(1, warmthOf[i] + warmStep)
      }
    }
    this.lastNewConnections = newAsked

    if (t % Math.max(1, Math.round(this.health.interval / dt)) === 0) inRotation -= this.healthCheck(t)

    out.offered = offered
    out.served = served
    out.failedFast = fast + restrictedLoad
    out.failedSlow = slow
    out.shed = shed
    out.restricted = restrictedLoad
    const normal = routed - holdLoad
    out.servedFraction = normal > 0 ? Math.min(1, served / normal) : 0
    out.fastFraction = normal > 0 ? Math.min(1 - out.servedFraction, fast / normal) : 0
    out.inRotation = inRotation
    out.ejected = this.ejectedCount
    out.panic = panic
    out.utilization = capUp > 0 ? loadUp / capUp : 0
  }

  /**
   * Periodic health check: servers in rotation that are down or answered late are ejected for
   * base × times-ejected (capped at the maximum), as Envoy's outlier detection does. When the cap
   * on ejections binds, which failing servers go is a seeded draw, since a real balancer sees
   * them in no particular order. Returns how many it ejected.
   */
  private healthCheck(t: number): number {
    let count = 0
    for (let i = 0; i < this.size; i++) {
      if (!this.registered[i] || this.ejected[i]) continue
      if (this.failing[i]) this.candidates[count++] = i
      else if (this.timesEjected[i] > 0) this.timesEjected[i]-- // Envoy forgives a host that stays healthy.
    }
    const room = this.maxEjected - this.ejectedCount
    if (count === 0 || room <= 0) return 0
    if (count > room) this.random.shuffle(this.candidates, count)
    const take = Math.min(room, count)
    for (let k = 0; k < take; k++) this.eject(this.candidates[k], t)
    return take
  }

  private eject(i: number, t: number): void {
    this.timesEjected[i]++
    const seconds = Math.min(this.health.baseEjection * this.timesEjected[i], this.health.maxEjection)
    this.ejected[i] = 1
    this.ejectedUntil[i] = t + Math.max(1, Math.round(seconds / this.dt))
    this.slowStartSince[i] = -1
    this.ejectedCount++
  }

  private isDown(i: number): boolean {
    return this.broken[i] !== 0 || this.stalled[i] !== 0 || this.restartingUntil[i] !== 0
  }

  countInRotation(): number {
    let c = 0
    for (let i = 0; i < this.size; i++) if (this.registered[i] && !this.ejected[i]) c++
    return c
  }

  // --- operator actions (what a runbook step does to a pool) ---

  /** Takes servers out of rotation: the load balancer stops sending them new requests. */
  deregister(ids: ArrayLike<number>): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      if (!this.registered[i]) continue
      this.registered[i] = 0
      // A target registered again is a new host to the load balancer: no ejection history.
      this.timesEjected[i] = 0
      if (this.ejected[i]) {
        this.ejected[i] = 0
        this.ejectedCount--
      }
    }
  }

  /** Puts servers back into rotation, in slow start when the policy has it. */
  register(ids: ArrayLike<number>, t: number): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      if (this.registered[i]) continue
      this.registered[i] = 1
      this.slowStartSince[i] = this.policy.slowStart > 0 ? t : -1
    }
  }

  /** Repairs whatever a fault broke on these servers (the remediation a runbook's hook performs). */
  remediate(ids: ArrayLike<number>): void {
    for (let k = 0; k < ids.length; k++) {
      this.broken[ids[k]] = 0
      this.refuses[ids[k]] = 0
    }
  }

  /** Restarts servers: down for `downSeconds`, then up cold, with no open connections and no held threads. */
  restart(ids: ArrayLike<number>, t: number, downSeconds: number): void {
    for (let k = 0; k < ids.length; k++) {
      const i = ids[k]
      this.stalled[i] = 0
      this.heldThreads[i] = 0
      this.openConnections[i] = 0
      this.warmth[i] = 0
      this.restartingUntil[i] = t + Math.max(1, Math.round(downSeconds / this.dt))
    }
  }
}
