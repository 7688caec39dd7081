/**
 * The per-tick inner loop of a server pool: what each server does with the load the balancer
 * sends it. Three variants of the same arithmetic, chosen each tick by `ServerPool.step` from
 * what the pool uses:
 *
 * - `serveBasic` when no server holds threads and new connections cost nothing extra, none are
 *   churned or refused, no server is warming up and service times are not drawn (the seed's pools);
 * - `serveLean` for a pool where no server holds or has ever held threads (no thread-hold fault
 *   has been active on it), which is every pool of most scenarios and most ticks of the rest;
 * - `serveHolding` once threads are held, which adds the thread accounting.
 *
 * Both fold a server's down state into one byte (`down`: 0 up, 1 hangs, 2 answers fast) and read
 * the capacity already scaled by warmth (`effectiveCapacity`), so a warm, healthy server costs a
 * handful of loads and stores. Skipped work is work whose result is known to be an identity (adding
 * 0 held load, multiplying 0 held threads, taking the minimum with an unlimited thread cap), so
 * both variants give bit-for-bit the figures of the one general loop they replace
 * (test/sim/golden.test.ts holds them to it).
 *
 * `n` is the number of servers to serve. A pool calls each loop once with n = 0 when it is built:
 * V8 compiles a long loop while it is still running the first time (on-stack replacement), and
 * the code after the loop, never run yet, would have no type feedback, so the compiled loop would
 * bail out at its end on every call of the first run. The empty call gives that code its feedback.
 */

import {Random} from './random.js'

/** The per-server state the loops read and write; ServerPool owns it. */
export interface ServerArrays {
  readonly openConnections: Float64Array
  readonly failing: Uint8Array
  readonly down: Uint8Array
  readonly effectiveCapacity: Float64Array
  readonly capacity: Float64Array
  readonly warmth: Float64Array
  readonly heldThreads: Float64Array
  readonly threads: Float64Array
  readonly stalled: Uint8Array
  readonly refuses: Uint8Array
  /**
   * Threads taken by held requests, by the tick they were taken (slot-major: slot × servers +
   * server), released exactly holdSeconds later; empty in the seed model, which releases them at
   * random (holdDecay).
   */
  readonly heldRing: Float64Array
  /** Work queued at each server, in requests' work (the queueing model; always 0 in the seed's). */
  readonly backlog: Float64Array
  /** Share of the work a full queue turned away this tick. */
  readonly parked: Float64Array
  /** The standard deviation of a server's completions a second (TickSums.noiseScale × √ its capacity now). */
  readonly completionSpread: Float64Array
}

/**
 * What `failing` says about a server in the queueing model: whether a health check it takes
 * now fails. Any value but 0 fails Envoy's outlier detection, which watches live requests; for
 * HAProxy's checks only `checkLate`, and `turnedAway` with the parked share as its chance.
 */
export const queueState = {ok: 0, checkLate: 1, turnedAway: 2, requestsLate: 3} as const

/**
 * V8 gives an object's field the representation of the first value stored in it. A field that
 * starts as a small integer and later holds a fraction changes the object's shape mid-run, which
 * throws away the compiled code of every loop that touched it; so fields that will hold fractions
 * start as one. (-0 is not a small integer to V8.)
 */
export const fraction = -0

const noNormals = new Float64Array(1)
const noDraw = new Random(0)

/** Draws in a pool's table of normals: a power of two, so the next index is a mask away. */
export const normalsSize = 4096

/**
 * Below this many completions a tick (counted at the drill's sample, over cv²), a server's count is
 * drawn as a Poisson count rather than a normal: a normal cut at zero there gives the server
 * capacity it does not have (at 1.25 a tick, a drill's scale, 6% more).
 */
export const smallCount = 30

/**
 * The capacity a server shows this tick: its mean, spread as the count of requests it completes
 * spreads when service times vary (a coefficient of variation cv gives a count's standard
 * deviation cv × √(cap × tick)). Only servers at or near capacity ask: below it the spread changes
 * nothing they serve. The count is a normal draw `z` where it is large; where it is small (m =
 * (cap ÷ spread)² under smallCount) a Poisson count of mean m scaled to cap, which keeps the mean
 * and the spread and is never negative (Random.poisson: Knuth's product of uniforms there).
 */
export function capacityNow(cap: number, spread: number, z: number, draw: Random): number {
  const m = (cap / spread) ** 2
  if (m >= smallCount) {
    const drawn = cap + spread * z
    return drawn > 0 ? drawn : 0
  }
  return (draw.poisson(m) * cap) / m
}

/**
 * Sets a server's warmth and its capacity now with it, and the spread of its completions (kept per
 * server so that a tick takes no square root per server; a thread-limited server's is its
 * capacity's, a little wide, on the harsh side).
 */
export function warmTo(s: ServerArrays, i: number, warmth: number, cold: number, noiseScale: number): void {
  s.warmth[i] = warmth
  const cap = s.capacity[i] * (cold + (1 - cold) * warmth)
  s.effectiveCapacity[i] = cap
  s.completionSpread[i] = noiseScale * Math.sqrt(cap)
}

/** What a tick's loop adds up, and the constants it needs (set by the caller before each loop). */
export class TickSums {
  // inputs
  perWeight = fraction
  keep = fraction
  handshake = fraction
  admission = fraction
  shed = false
  collapse = fraction
  /** Warmth step per tick, or 0 when no server in the pool is warming up. */
  warmStep = fraction
  cold = fraction
  holdShare = fraction
  holdDecay = fraction
  /** Held calls hand their threads back as they time out (release: at-timeout): a server whose threads are all held waits, never stalls. */
  holdReleases = false
  /** This tick's slot of heldRing. */
  holdSlot = 0
  /** Servers carry their queue from tick to tick (the queueing model) instead of collapsing goodput. */
  backlogOn = false
  /** Seconds of work a server queues (Infinity: unbounded), the clients' timeout and the check's. */
  queueSeconds = fraction
  timeout = fraction
  checkTimeout = fraction
  dt = fraction
  serviceTime = fraction
  /**
   * Service times drawn (a pool's serviceSpread): a server at capacity completes cap ± noiseScale ×
   * √cap a second this tick, as a count of completions spreads; 0 when the pool draws none.
   */
  noiseScale = fraction
  /**
   * A server whose work is below `quiet` × its capacity and has no queue is served in full without a
   * draw: the spread cannot take its capacity below its work there (4 standard deviations at the
   * pool's smallest capacity). 1 when nothing is drawn, so the loops' arithmetic is what it was.
   */
  quiet = fraction
  /** Standard normal draws the pool's servers read in turn, from this tick's offset. */
  normals: Float64Array = noNormals
  /** Draws a small count's Poisson (capacityNow); the pool's service stream. */
  draw: Random = noDraw
  noiseAt = 0
  // outputs
  served = fraction
  fast = fraction
  slow = fraction
  shedLoad = fraction
  newAsked = fraction
  loadUp = fraction
  capUp = fraction
  /** Servers that became warm this tick, and servers that stalled. */
  warmed = 0
  stalledNow = 0

  reset(): void {
    this.served = 0
    this.fast = 0
    this.slow = 0
    this.shedLoad = 0
    this.newAsked = 0
    this.loadUp = 0
    this.capUp = 0
    this.warmed = 0
    this.stalledNow = 0
  }
}

/**
 * One tick of an overloaded or still-queueing server in the queueing model. `requests` rps ask for
 * `work` units a second of a server that does `cap` on the mean and `now` this tick (the same
 * unless its service times are drawn). Its FIFO queue takes what fits (queueSeconds
 * of its warm capacity in requests, plus what it serves this tick); the rest is parked unanswered, as a full accept
 * backlog leaves it, and its clients time out. What the queue takes waits behind what is already
 * queued: the part that starts within the clients' timeout is answered in time, and the rest is
 * still served, late, after its client has gone (the wasted work that was `collapse`). A server
 * out of rotation drains its queue, so it comes back with room. Returns the requests answered in
 * time and sets the server's queue, parked share and failing state.
 */
export function queueTick(s: ServerArrays, i: number, requests: number, work: number, now: number, cap: number, k: TickSums): number {
  const dt = k.dt
  const queued = s.backlog[i]
  const arriving = work * dt
  // The queue holds a count of requests, queueSeconds of the server's warm capacity, as a real
  // server's accept backlog and worker queue do: a cold or thread-starved server serves it more
  // slowly, so it holds more seconds of its work now, not fewer requests (the cold-return drill).
  const bound = k.queueSeconds * s.capacity[i] * (requests > 0 ? work / requests : 1)
  const room = bound + now * dt - queued
  const taken = arriving < room ? arriving : room > 0 ? room : 0
  // Whether a request starts within its client's timeout is a matter of seconds of the server's
  // mean capacity: this tick's draw (`now`) says only what it completes this tick.
  const inTime = (k.timeout - k.serviceTime) * cap - queued
  const good = inTime <= 0 ? 0 : inTime >= taken ? taken : inTime
  const left = queued + taken - now * dt
  const after = left > 0 ? left : 0
  s.backlog[i] = after
  const parked = arriving > 0 ? (arriving - taken) / arriving : 0
  s.parked[i] = parked
  s.failing[i] =
    cap <= 0 || after / cap > k.checkTimeout
      ? queueState.checkLate
      : parked > 0
        ? queueState.turnedAway
        : good < taken
          ? queueState.requestsLate
          : queueState.ok
  return arriving > 0 ? requests * (good / arriving) : 0
}

/*
 * Why the three loops below are separate copies of the same arithmetic rather than one loop: merging
 * them was measured on 2026-11-30 and it cost too much. Figures are CPU time from the bench's core and
 * minimal-loop sections, with the merged and current builds run in turn, 4 runs each:
 * - one loop for all three, with thread accounting and the features that are off behind
 *   per-call constants: the seed feature set went from 1.04–1.14× the hand-written loop to 1.73–1.80×.
 * - serveLean and serveHolding as one loop (thread accounting behind `if (holding)`), with
 *   serveBasic kept: the core case (10,000 × 3,600, everything on) fell from 82–126 M to 68–96 M
 *   server-ticks per CPU-second. Run alone and repeated, medians went from 124–163 M to 105–121 M.
 *   Two other versions did no better (about 105–120 M): serveHolding for every pool with no held load,
 *   and the thread accounting in a small helper function. With no thread-hold fault in the run the
 *   merged loop was as fast as serveLean, so the loss appears when one compiled loop serves both kinds
 *   of pool.
 * The copies must stay the same arithmetic. test/sim/golden.test.ts holds every shipped scenario,
 * and the bench's everything-on fleet, bit for bit to the figures of the one general loop they
 * replaced. The bench checks serveBasic's pools against bench/minimal.ts. So an edit made to one
 * copy and not the others fails these checks, wherever those runs reach the edited code.
 */
export function serveLean(s: ServerArrays, weight: Float64Array, k: TickSums, n: number): void {
  const {openConnections: open, failing: failingOf, down, effectiveCapacity: effCap, backlog: queue} = s
  const backlogOn = k.backlogOn
  const {perWeight, keep, handshake: h, admission, shed: shedding, collapse, warmStep, cold, quiet, noiseScale, normals} = k
  // This tick's draws are read in turn from the pool's table, from the offset the pool drew.
  let noiseAt = k.noiseAt
  const spreadOf = s.completionSpread
  const {warmth} = s
  const refusedShare = 1 - admission
  let served = 0,
    fast = 0,
    slow = 0,
    shed = 0,
    newAsked = 0,
    loadUp = 0,
    capUp = 0,
    warmed = 0
  for (let i = 0; i < n; i++) {
    const l = perWeight * weight[i]
    const d = down[i]
    if (d !== 0) {
      open[i] = 0
      queue[i] = 0
      failingOf[i] = 1
      if (d === 2) fast += l
      else slow += l
      continue
    }
    const cap = effCap[i]
    /** What it completes this tick: its capacity, or near it a draw around it (capacityNow). */
    let now = cap
    const kept = open[i] * keep
    const onOpen = l < kept ? l : kept
    let fresh = l - onOpen
    newAsked += fresh
    if (admission < 1) {
      const refused = fresh * refusedShare
      fast += refused
      fresh -= refused
    }
    const work = onOpen + fresh * h
    loadUp += work
    capUp += cap
    let done: number
    let late = 0
    if (work <= cap * quiet && queue[i] === 0) {
      done = onOpen + fresh
    } else if (noiseScale !== 0 && work <= (now = capacityNow(cap, spreadOf[i], normals[noiseAt++ & (normalsSize - 1)], k.draw)) && queue[i] === 0) {
      // Near capacity: what it completes this tick, drawn, covers the work.
      done = onOpen + fresh
    } else if (shedding) {
      done = onOpen >= now ? now : onOpen + (now - onOpen) / h
      const rejected = onOpen + fresh - done
      shed += rejected
      fast += rejected
    } else if (backlogOn) {
      done = queueTick(s, i, onOpen + fresh, work, now, cap, k)
      slow += onOpen + fresh - done
      late = failingOf[i]
    } else {
      const goodput = cap * Math.max(0, 1 - collapse * (work / cap - 1))
      done = (onOpen + fresh) * (goodput / work)
      slow += onOpen + fresh - done
      late = 1
    }
    open[i] = done
    failingOf[i] = late
    served += done
    if (warmStep !== 0 && warmth[i] < 1 && done > 0) {
      const w = Math.min(1, warmth[i] + warmStep)
      warmTo(s, i, w, cold, noiseScale)
      if (w === 1) warmed++
    }
  }
  k.served = served
  k.fast = fast
  k.slow = slow
  k.shedLoad = shed
  k.newAsked = newAsked
  k.loadUp = loadUp
  k.capUp = capUp
  k.warmed = warmed
}

/**
 * `serveLean` where requests on new connections cost no more than on open ones, no connection is
 * churned, nothing is warming up and every new connection is admitted (the seed's pools, and most
 * ticks of most scenarios): a multiplication by 1 and the checks for what is off are left out.
 */
export function serveBasic(s: ServerArrays, weight: Float64Array, k: TickSums, n: number): void {
  const {openConnections: open, failing: failingOf, down, effectiveCapacity: effCap, backlog: queue} = s
  const backlogOn = k.backlogOn
  const {perWeight, shed: shedding, collapse} = k
  let served = 0,
    fast = 0,
    slow = 0,
    shed = 0,
    newAsked = 0,
    loadUp = 0,
    capUp = 0
  for (let i = 0; i < n; i++) {
    const l = perWeight * weight[i]
    const d = down[i]
    if (d !== 0) {
      open[i] = 0
      queue[i] = 0
      failingOf[i] = 1
      if (d === 2) fast += l
      else slow += l
      continue
    }
    const cap = effCap[i]
    const kept = open[i]
    const onOpen = l < kept ? l : kept
    const fresh = l - onOpen
    newAsked += fresh
    const work = onOpen + fresh
    loadUp += work
    capUp += cap
    let done = work
    let late = 0
    // Written as the other loops test it (work <= cap serves all), so a NaN would go the same way.
    if (!(work <= cap && queue[i] === 0)) {
      if (shedding) {
        done = onOpen >= cap ? cap : onOpen + (cap - onOpen)
        const rejected = work - done
        shed += rejected
        fast += rejected
      } else if (backlogOn) {
        done = queueTick(s, i, work, work, cap, cap, k)
        slow += work - done
        late = failingOf[i]
      } else {
        const goodput = cap * Math.max(0, 1 - collapse * (work / cap - 1))
        done = work * (goodput / work)
        slow += work - done
        late = 1
      }
    }
    open[i] = done
    failingOf[i] = late
    served += done
  }
  k.served = served
  k.fast = fast
  k.slow = slow
  k.shedLoad = shed
  k.newAsked = newAsked
  k.loadUp = loadUp
  k.capUp = capUp
  k.warmed = 0
}

export function serveHolding(s: ServerArrays, weight: Float64Array, k: TickSums, n: number): void {
  const {openConnections: open, failing: failingOf, down, effectiveCapacity: effCap, backlog: queue} = s
  const backlogOn = k.backlogOn
  const {heldThreads: held, threads, stalled, warmth} = s
  const {perWeight, keep, handshake: h, admission, shed: shedding, collapse, warmStep, cold, quiet, noiseScale, normals} = k
  // This tick's draws are read in turn from the pool's table, from the offset the pool drew.
  let noiseAt = k.noiseAt
  const spreadOf = s.completionSpread
  const {holdShare, holdDecay, dt, serviceTime} = k
  const ring = s.heldRing
  const exact = ring.length !== 0
  // The seed model's held threads decay at random and stall as they always did: its table stays exact.
  const releases = exact && k.holdReleases
  const base = k.holdSlot * n
  let served = 0,
    fast = 0,
    slow = 0,
    shed = 0,
    newAsked = 0,
    loadUp = 0,
    capUp = 0,
    warmed = 0,
    stalledNow = 0
  for (let i = 0; i < n; i++) {
    const l = perWeight * weight[i]
    if (exact) {
      // What was taken holdSeconds ago is released now; the residue of the subtractions is not a thread.
      const left = held[i] - ring[base + i]
      held[i] = left < 1e-9 ? 0 : left
      ring[base + i] = 0
    } else {
      held[i] *= holdDecay
    }
    const d = down[i]
    if (d !== 0) {
      open[i] = 0
      queue[i] = 0
      failingOf[i] = 1
      if (d === 2) fast += l
      else slow += l
      continue
    }
    // Requests of a thread-holding type never succeed and keep a thread each for holdSeconds.
    // Threads limit throughput only near exhaustion (threads left / service time); when held
    // requests take them all the server stalls, and stays stalled until it is restarted; or, where
    // held calls hand their threads back at their timeout, it waits for them, serving nothing.
    const heldLoad = l * holdShare
    let cap = effCap[i]
    if (heldLoad > 0 || held[i] > 0) {
      // A held call that finds no thread free waits in the queue with the rest; none is held twice.
      const taken = releases ? Math.min(heldLoad * dt, Math.max(0, threads[i] - held[i])) : heldLoad * dt
      held[i] += taken
      if (exact) ring[base + i] = taken
      const free = threads[i] - held[i]
      if (free <= 1e-9 && releases) {
        // Every thread held: nothing served, checks unanswered, the queue kept for when calls time out.
        failingOf[i] = 1
        slow += l
        continue
      }
      if (free <= 0) {
        stalled[i] = 1
        down[i] = s.refuses[i] !== 0 ? 2 : 1
        stalledNow++
        open[i] = 0
        failingOf[i] = 1
        slow += l
        continue
      }
      const threadCap = free / serviceTime
      if (threadCap < cap) cap = threadCap
    }
    slow += heldLoad
    const asked = l - heldLoad
    const kept = open[i] * keep
    const onOpen = asked < kept ? asked : kept
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
    /** What it completes this tick: its capacity, or near it a draw around it (capacityNow). */
    let now = cap
    let done: number
    let late = 0
    if (work <= cap * quiet && queue[i] === 0) {
      done = onOpen + fresh
    } else if (noiseScale !== 0 && work <= (now = capacityNow(cap, spreadOf[i], normals[noiseAt++ & (normalsSize - 1)], k.draw)) && queue[i] === 0) {
      // Near capacity: what it completes this tick, drawn, covers the work.
      done = onOpen + fresh
    } else if (shedding) {
      done = onOpen >= now ? now : onOpen + (now - onOpen) / h
      const rejected = onOpen + fresh - done
      shed += rejected
      fast += rejected
    } else if (backlogOn) {
      done = queueTick(s, i, onOpen + fresh, work, now, cap, k)
      slow += onOpen + fresh - done
      late = failingOf[i]
    } else {
      const goodput = cap * Math.max(0, 1 - collapse * (work / cap - 1))
      done = (onOpen + fresh) * (goodput / work)
      slow += onOpen + fresh - done
      late = 1
    }
    open[i] = done
    failingOf[i] = late
    served += done
    if (warmStep !== 0 && warmth[i] < 1 && done > 0) {
      const w = Math.min(1, warmth[i] + warmStep)
      warmTo(s, i, w, cold, noiseScale)
      if (w === 1) warmed++
    }
  }
  k.served = served
  k.fast = fast
  k.slow = slow
  k.shedLoad = shed
  k.newAsked = newAsked
  k.loadUp = loadUp
  k.capUp = capUp
  k.warmed = warmed
  k.stalledNow = stalledNow
}
