import type {ClientConfig} from './config.js'

/** How each traffic type's attempts failed this tick, as shares of them (see ClientPopulation.settle). */
export interface TypeFailures {
  readonly fast: Float64Array
  readonly told: Float64Array
  readonly turnedAway: Float64Array
  /** Seconds a restriction's Retry-After asks, by type. */
  readonly turnedAwayWait: Float64Array
  readonly slow: Float64Array
}

/**
 * The client population: each request gets up to `attempts` tries, with exponential backoff and
 * full jitter between them, inside an optional retry budget (retries allowed while they stay under
 * a share of requests, as in Google's SRE book).
 *
 * Clients are a population, not objects: retries are masses of requests per (type, attempt)
 * scheduled into a ring of future ticks. Jitter is taken at its expectation over the population,
 * spread evenly across the backoff window, so it needs no random draws.
 */
export class ClientPopulation {
  readonly attempts: number
  private ring: Float64Array
  private slots: number
  private readonly budgetRequests: Float64Array
  private readonly budgetRetries: Float64Array
  private readonly budgetSlots: number
  private requestsInWindow = 0
  private retriesInWindow = 0
  /** Retries made this tick, for the record. */
  retriesMade = 0
  /** Requests that ran out of attempts or budget this tick. */
  givenUp = 0

  constructor(
    private readonly config: ClientConfig,
    private readonly types: number,
    private readonly dt: number,
  ) {
    this.attempts = config.attempts
    const longestWait = Math.max(config.timeout, config.honourRetryAfter ? config.retryAfter : 0) + config.backoffMax
    this.slots = Math.ceil(longestWait / dt) + 2
    this.ring = new Float64Array(this.slots * types * this.attempts)
    this.budgetSlots = Math.max(1, Math.round(config.budgetWindow / dt))
    this.budgetRequests = new Float64Array(this.budgetSlots)
    this.budgetRetries = new Float64Array(this.budgetSlots)
  }

  /**
   * Fills `out[type * attempts + k]` with the requests per second arriving this tick on attempt k
   * (k = 0 is a new request) and empties that slot of the ring.
   */
  arrivals(tick: number, fresh: ArrayLike<number>, out: Float64Array): void {
    const a = this.attempts
    const base = (tick % this.slots) * this.types * a
    for (let j = 0; j < this.types; j++) {
      out[j * a] = fresh[j]
      for (let k = 1; k < a; k++) {
        out[j * a + k] = this.ring[base + j * a + k]
        this.ring[base + j * a + k] = 0
      }
    }
    const b = tick % this.budgetSlots
    let newRequests = 0
    for (let j = 0; j < this.types; j++) newRequests += fresh[j] * this.dt
    this.requestsInWindow += newRequests - this.budgetRequests[b]
    this.budgetRequests[b] = newRequests
    this.retriesInWindow -= this.budgetRetries[b]
    this.budgetRetries[b] = 0
  }

  /**
   * Schedules retries for this tick's failures, given as shares of type j's attempts: `f.fast[j]`
   * failed with a quick answer that asks no wait, `f.told[j]` with a maintenance 503 whose Retry-After
   * is the clients' retryAfter, `f.turnedAway[j]` with a restriction's 503 whose Retry-After is
   * `f.turnedAwayWait[j]`, and `f.slow[j]` by timing out.
   */
  settle(tick: number, arrived: Float64Array, f: TypeFailures): void {
    const a = this.attempts
    const {config, dt} = this
    const {fast, told, turnedAway, slow} = f
    let wanted = 0
    for (let j = 0; j < this.types; j++) {
      const failed = fast[j] + told[j] + turnedAway[j] + slow[j]
      for (let k = 0; k < a - 1; k++) wanted += arrived[j * a + k] * failed
    }
    let givenUp = 0
    for (let j = 0; j < this.types; j++) givenUp += arrived[j * a + a - 1] * (fast[j] + told[j] + turnedAway[j] + slow[j])

    let scale = 1
    if (config.retryBudget !== null && wanted > 0) {
      const allowed = Math.max(0, config.retryBudget * this.requestsInWindow - this.retriesInWindow)
      scale = Math.min(1, allowed / (wanted * dt))
    }
    givenUp += wanted * (1 - scale)
    this.retriesMade = wanted * scale
    this.givenUp = givenUp
    this.retriesInWindow += wanted * scale * dt
    this.budgetRetries[tick % this.budgetSlots] += wanted * scale * dt
    if (wanted === 0 || scale === 0) return

    const honour = config.honourRetryAfter
    const toldWait = honour ? config.retryAfter : 0
    for (let k = 0; k < a - 1; k++) {
      const backoff = Math.min(config.backoffMax, config.backoffBase * 2 ** k)
      for (let j = 0; j < this.types; j++) {
        const failed = arrived[j * a + k] * scale
        if (failed === 0) continue
        if (fast[j] > 0) this.schedule(tick, j, k + 1, failed * fast[j], 0, backoff)
        if (told[j] > 0) this.schedule(tick, j, k + 1, failed * told[j], toldWait, backoff)
        if (turnedAway[j] > 0) this.schedule(tick, j, k + 1, failed * turnedAway[j], honour ? f.turnedAwayWait[j] : 0, backoff)
        if (slow[j] > 0) this.schedule(tick, j, k + 1, failed * slow[j], config.timeout, backoff)
      }
    }
  }

  /**
   * Makes room for retries that wait up to `seconds` (a restriction's Retry-After, known only when a
   * step sets it): the ring grows, each scheduled tick keeping its place.
   */
  reach(seconds: number, tick: number): void {
    const slots = Math.ceil((seconds + this.config.backoffMax) / this.dt) + 2
    if (slots <= this.slots) return
    const stride = this.types * this.attempts
    const ring = new Float64Array(slots * stride)
    for (let ahead = 0; ahead < this.slots; ahead++) {
      const from = ((tick + ahead) % this.slots) * stride
      ring.set(this.ring.subarray(from, from + stride), ((tick + ahead) % slots) * stride)
    }
    this.ring = ring
    this.slots = slots
  }

  /** Spreads `rps` retries evenly over delays in [wait, wait + backoff] seconds from now. */
  private schedule(tick: number, type: number, attempt: number, rps: number, wait: number, backoff: number): void {
    const {dt, slots} = this
    const stride = this.types * this.attempts
    const offset = type * this.attempts + attempt
    if (backoff < 1e-9) {
      const ahead = Math.max(1, Math.ceil(wait / dt - 1e-9))
      this.ring[((tick + ahead) % slots) * stride + offset] += rps
      return
    }
    const lo = wait
    const hi = wait + backoff
    const first = Math.max(1, Math.ceil(lo / dt - 1e-9))
    const last = Math.max(1, Math.ceil(hi / dt - 1e-9))
    for (let ahead = first; ahead <= last; ahead++) {
      // Delays in ((ahead-1)·dt, ahead·dt] arrive `ahead` ticks later; delays under one tick wait one tick.
      const from = ahead === 1 ? lo : Math.max(lo, (ahead - 1) * dt)
      const to = Math.min(hi, ahead * dt)
      if (to <= from) continue
      this.ring[((tick + ahead) % slots) * stride + offset] += (rps * (to - from)) / backoff
    }
  }
}
