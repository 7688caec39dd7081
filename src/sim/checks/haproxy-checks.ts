import type {HaproxyCheck} from '../config.js'
import {queueState} from '../pool-kernel.js'
import type {Random} from '../random.js'
import {noTimer, type CheckedPool, type PoolChecks} from './pool-checks.js'

/** What a check under way will report when it ends. */
const checkResult = {passes: 1, fails: 2} as const

/** The share of `asked` requests a server did not answer while completing `done` (both per second, or both per tick). */
function turnedAway(asked: number, done: number): number {
  return asked > 0 ? Math.min(1, Math.max(0, 1 - done / asked)) : 0
}

/**
 * HAProxy's slowstart weight, `elapsed` ticks into a window of `window` ticks: its effective
 * weight is (16 × elapsed / window + 1) sixteenths of the server's, in whole sixteenths (weight
 * 1 is 16 internally), so a server starts at 1/16 and steps up to full.
 */
export function haproxySlowStartWeight(elapsed: number, window: number): number {
  return Math.min(1, (1 + Math.floor((16 * elapsed) / window)) / 16)
}

/**
 * HAProxy's checks: each registered server due a check passes or fails it (fails when down,
 * stalled or answering late), moves its health counter, goes DOWN after `fall` consecutive
 * failures and UP after `rise` consecutive passes, and is next checked at inter, fastinter or
 * downinter by its state. There is no ejection timer and no cap: every server can go DOWN, and
 * then the pool answers 503. With `observe layer7`, live requests count too (observe()).
 */
export class HaproxyChecks implements PoolChecks {
  readonly family = 'haproxy'
  /**
   * HAProxy's `health` counter per server, 0 … rise + fall − 1: at the top a server is fully UP,
   * below `rise` it is DOWN (then always 0 or climbing back). A failed check takes one off and
   * drops to 0 once under `rise`; a good one adds one and jumps to the top once at `rise`.
   */
  readonly health: Int32Array
  /** Tick of each server's next check. */
  readonly nextCheck: Int32Array
  /**
   * Per server, the runs of errorLimit consecutive failed live requests (layer-7 observation)
   * counted so far towards the next one: a fraction, an expectation over the tick's requests.
   */
  readonly errorRuns: Float64Array
  /**
   * A check under way (the queueing model): 0 none, else its result, `passes` or `fails`, due at
   * nextCheck, when the server answers it or it times out.
   */
  readonly pending: Uint8Array
  /** Tick each server went DOWN, while it is DOWN. */
  readonly downSince: Int32Array
  /**
   * `observe layer7` in the queueing model: per tick slot of `timeout server` and server, the
   * requests sent that will never be answered (the server hangs, has stalled, or its full queue
   * parked them). HAProxy counts each as an error only when its session ends, at `timeout server`
   * (the drill-layer7-hang drill: real servers left rotation 11-12 s after they hung, by their
   * checks, where counting at once took them out in 0.2 s). Empty until observation starts.
   */
  private unanswered = new Float64Array(0)
  private unansweredTicks = 0
  private readonly top: number
  private readonly interTicks: number
  private readonly fastTicks: number
  private readonly downTicks: number
  /** The earliest tick any server is due a check. */
  private nextDue = 0

  /**
   * `busy` says how a busy server answers checks: in the queueing model (`queued`) by the queue it
   * carries (failing tells); in the seed's, `busy-in-time` when its queue is bounded and a full one
   * empties before a check times out (so it answers the checks it takes), else `busy-late`.
   */
  constructor(
    private readonly pool: CheckedPool,
    readonly rules: HaproxyCheck,
    /** `inter`, which is also the check's timeout: HAProxy's rule when `timeout check` is not set. */
    private readonly interval: number,
    private readonly busy: 'queued' | 'busy-in-time' | 'busy-late',
    private readonly random: Random,
  ) {
    const n = pool.size
    const ticks = (seconds: number) => Math.max(1, Math.round(seconds / pool.dt))
    this.top = rules.rise + rules.fall - 1
    this.interTicks = ticks(interval)
    this.fastTicks = ticks(rules.fastinter)
    this.downTicks = ticks(rules.downinter)
    this.health = new Int32Array(n).fill(this.top)
    // HAProxy spreads a backend's first checks evenly over one interval rather than checking every server at once.
    this.nextCheck = Int32Array.from({length: n}, (_, i) => Math.floor((i * this.interTicks) / n))
    this.errorRuns = new Float64Array(n)
    this.pending = new Uint8Array(n)
    this.downSince = new Int32Array(n)
  }

  afterTick(t: number, weight: Float64Array, perWeight: number, routed: boolean): void {
    // The queueing model observes every tick: sessions sent earlier still end at their timeout.
    if (this.rules.observe === 'layer7' && this.busy === 'queued') this.observeEnding(t, weight, routed ? perWeight : 0)
    else if (this.rules.observe === 'layer7' && routed) this.observe(t, weight, perWeight)
    if (t >= this.nextDue) this.check(t, weight, perWeight)
  }

  slowStartWeight(elapsed: number, window: number): number {
    return haproxySlowStartWeight(elapsed, window)
  }

  /** As HAProxy does when a server leaves maintenance: up, but down at the first failed check. */
  registered(i: number, t: number): void {
    this.health[i] = this.rules.rise
    this.errorRuns[i] = 0
    this.pending[i] = 0
    this.nextCheck[i] = t
    this.nextDue = Math.min(this.nextDue, t)
  }

  /**
   * HAProxy drains a server (`set server … state drain`, `show stat` scur) until no session is
   * open on it. A queued request ends when the server answers it; one the server will never answer
   * (it hangs, it has stalled, its full queue parked the request) ends at `timeout server`, since
   * without `option abortonclose` a client that gives up does not end its session. A server DOWN
   * has had no request since it went DOWN; one that refuses connections has none open.
   */
  drainSeconds(i: number, t: number): number {
    const {down, parked, backlog, effectiveCapacity, ejected, dt} = this.pool
    const timeout = this.rules.timeoutServer
    if (down[i] === 2) return 0
    if (down[i] === 1 || parked[i] > 0) {
      const lastSent = ejected[i] !== 0 ? this.downSince[i] : t
      return Math.max(0, timeout - (t - lastSent) * dt)
    }
    return effectiveCapacity[i] > 0 ? Math.min(timeout, backlog[i] / effectiveCapacity[i]) : 0
  }

  /** HAProxy's choice of interval: `inter` when fully up, `downinter` when fully down, `fastinter` in between. */
  private ticksAfterCheck(i: number): number {
    const h = this.health[i]
    return h === this.top ? this.interTicks : h === 0 ? this.downTicks : this.fastTicks
  }

  /**
   * In the queueing model a check takes time, as HAProxy's does: it waits in the server's queue
   * behind the work there (backlog ÷ capacity; the check itself costs no service time) and passes
   * when it is answered; it fails when it times out, after `inter` (HAProxy's timeout when `timeout
   * check` is not set), because the server hangs, its queue is deeper than that, or its full
   * queue turned the check away like the requests it had no room for (a seeded draw with the
   * parked share as its chance); a server that refuses connections fails it at once. HAProxy
   * schedules the next check inter, fastinter or downinter after this one ends (check.c), so a
   * hung server goes DOWN only after `fall` timeouts and the intervals between them.
   *
   * The seed model's checks are instant: they fail when the server is down, or busy (`busy-late`,
   * or `busy-in-time` with the turned-away share as their chance).
   */
  private check(t: number, weight: Float64Array, perWeight: number): void {
    const {registered, failing, down, openConnections: done, parked, backlog, effectiveCapacity, size, dt} = this.pool
    const next = this.nextCheck
    const pending = this.pending
    const queued = this.busy === 'queued'
    let due = noTimer
    for (let i = 0; i < size; i++) {
      if (registered[i] === 0) continue
      if (next[i] <= t) {
        let result = pending[i]
        let wait = 0
        if (result !== 0) pending[i] = 0
        else if (queued) {
          // The queue is read here too: with no server in rotation the pool serves nothing and sets no state.
          const queue = effectiveCapacity[i] > 0 ? backlog[i] / effectiveCapacity[i] : Infinity
          const timesOut =
            down[i] === 1 ||
            failing[i] === queueState.checkLate ||
            queue > this.interval ||
            (failing[i] === queueState.turnedAway && this.random.next() < parked[i])
          result = down[i] === 2 || timesOut ? checkResult.fails : checkResult.passes
          wait = down[i] === 2 ? 0 : timesOut ? this.interTicks : Math.round(queue / dt)
        } else {
          const late = failing[i] !== 0 && (down[i] !== 0 || this.busy === 'busy-late' || this.random.next() < turnedAway(perWeight * weight[i], done[i]))
          result = late ? checkResult.fails : checkResult.passes
        }
        if (wait > 0) {
          pending[i] = result
          next[i] = t + wait
        } else {
          if (result === checkResult.fails) this.failCheck(i, t)
          else this.passCheck(i, t)
          next[i] = t + this.ticksAfterCheck(i)
        }
      }
      if (next[i] < due) due = next[i]
    }
    this.nextDue = due
  }

  private failCheck(i: number, t: number): void {
    const h = this.health
    if (h[i] > 0) {
      h[i]--
      if (h[i] < this.rules.rise) h[i] = 0
    }
    // DOWN until checks bring it back, however long that takes.
    if (h[i] < this.rules.rise && this.pool.ejected[i] === 0) {
      this.pool.takeOut(i, noTimer)
      this.downSince[i] = t
    }
  }

  private passCheck(i: number, t: number): void {
    const h = this.health
    if (h[i] < this.top) {
      h[i]++
      if (h[i] >= this.rules.rise) h[i] = this.top
    }
    if (h[i] >= this.rules.rise && this.pool.ejected[i] !== 0) {
      this.errorRuns[i] = 0
      this.pool.putBack(i, t)
    }
  }

  /**
   * `observe layer7` as HAProxy sees requests end (the queueing model): a fast failure (a 5xx, a
   * refused connection, a shed 503) ends this tick and counts at once; a request that will never
   * be answered ends at `timeout server` and counts then. A late answer, one the server sends
   * after its client gave up, is a 200 to HAProxy and ends a run of errors: HAProxy 2.6 measured
   * on loopback (40 requests answered after 2 s, clients gone at 0.5 s: hrsp_2xx 40, hanafail 0,
   * the server UP; never answered: hanafail 4, DOWN by "Detected 10 consecutive errors").
   * Counting late answers as errors had the model's overloaded survivors marked down all in the
   * same second, the pool emptied, their queues drained and the pool came back fresh: kinder
   * than the real pool, which churned at 6–9 in rotation (the collapse drill under observe layer7).
   * The share of the requests ending this tick that failed is the q of observe()'s run formula;
   * a tick in which none ended leaves the runs as they were.
   */
  private observeEnding(t: number, weight: Float64Array, perWeight: number): void {
    const {registered, ejected, openConnections: done, parked, down, size, dt} = this.pool
    if (this.unansweredTicks === 0) {
      this.unansweredTicks = Math.max(1, Math.round(this.rules.timeoutServer / dt))
      this.unanswered = new Float64Array(this.unansweredTicks * size)
    }
    const slot = (t % this.unansweredTicks) * size
    const ring = this.unanswered
    for (let i = 0; i < size; i++) {
      const ending = ring[slot + i]
      ring[slot + i] = 0
      const inRotation = registered[i] !== 0 && ejected[i] === 0
      const asked = inRotation ? perWeight * weight[i] * dt : 0
      let never = 0
      let failedNow = 0
      if (asked > 0) {
        const d = down[i]
        if (d === 1) never = asked
        else if (d === 2) failedNow = asked
        else {
          const q = turnedAway(asked, done[i] * dt)
          never = asked * Math.min(q, parked[i])
          // The rest not answered in time was shed (a fast 503), refused by the metadata store, or answered late (a success).
          const rest = asked * q - never
          failedNow = this.pool.policy.shed ? rest : Math.min(rest, asked * (1 - this.pool.newConnectionAdmission))
        }
        ring[slot + i] = never
      }
      if (!inRotation) continue
      const errors = failedNow + ending
      const ended = asked - never + ending
      if (ended <= 0) continue
      this.countErrors(i, t, errors / ended, ended)
    }
  }

  /**
   * `observe layer7`: failed live requests on each server in rotation (timeouts, 5xx, shed 503s)
   * count as consecutive errors, request by request, as HAProxy counts them. A tick is a
   * population of requests here, not a sequence: a server that fails a share q of them reaches
   * `errorLimit` (L) in a row once every (1 − q^L) / ((1 − q) q^L) requests on average (once
   * every L when every request fails), the mean time for a run of L to come up when the count
   * starts again from 0 each time it acts. So the runs due are counted in requests, not ticks,
   * and a finer tick counts the same (a run of failing ticks would count faster the finer they
   * were). A tick with no failure ends every run. Each run at the limit acts as HAProxy's
   * health_adjust does: fastinter checks sooner; fail-check counts a failed check; sudden-death
   * leaves the server one failed check from DOWN and fails one; mark-down takes it DOWN at once;
   * and each brings the next check forward to fastinter.
   */
  private observe(t: number, weight: Float64Array, perWeight: number): void {
    const {registered, ejected, openConnections: done, size, dt} = this.pool
    for (let i = 0; i < size; i++) {
      if (registered[i] === 0 || ejected[i] !== 0) continue
      const asked = perWeight * weight[i] * dt
      if (asked <= 0) continue
      this.countErrors(i, t, turnedAway(asked, done[i] * dt), asked)
    }
  }

  /** `requests` ended on server i this tick, a share q of them failed: the runs of errorLimit that come of them act. */
  private countErrors(i: number, t: number, q: number, requests: number): void {
    const runs = this.errorRuns
    const ejected = this.pool.ejected
    const limit = this.rules.errorLimit
    if (q === 0) {
      runs[i] = 0
      return
    }
    const qL = q ** limit
    let due = runs[i] + requests * (q === 1 ? 1 / limit : ((1 - q) * qL) / (1 - qL))
    while (due >= 1 && ejected[i] === 0) {
      due -= 1
      const mode = this.rules.onError
      if (mode === 'sudden-death' && this.health[i] > this.rules.rise) this.health[i] = this.rules.rise + 1
      else if (mode === 'mark-down') this.health[i] = this.rules.rise
      if (mode !== 'fastinter') this.failCheck(i, t)
      // A check under way keeps its own end.
      const soon = t + this.fastTicks
      if (this.pending[i] === 0 && soon < this.nextCheck[i]) this.nextCheck[i] = soon
      if (soon < this.nextDue) this.nextDue = soon
    }
    runs[i] = ejected[i] === 0 ? due : 0
  }
}
