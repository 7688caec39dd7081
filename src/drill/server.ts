import http from 'node:http'
import type {Socket} from 'node:net'
import type {ThreadHoldRelease} from '../sim/config.js'
import {Random} from '../sim/random.js'

/**
 * One backend server of the loopback fleet: a real HTTP server on 127.0.0.1 whose capacity is a
 * concurrency limit and a service time, so overload queues and times out for real.
 *
 * - Capacity (requests per second, wall clock) is realised as `workers` concurrent slots, each
 *   request holding one for workers / capacity seconds: about the scenario's service time, rounded
 *   so that the throughput is the capacity exactly, however late this process's timers fire (a
 *   worker's next request starts when its last was due to end). A cold server serves each request slower by
 *   coldFactor, warming to full over warmupSeconds of taking traffic. A request on a client's new
 *   connection costs handshakeCost service times, as the scenario's handshake does, with
 *   connections counted by the scenario's rule (ServerConfig.connectionWindow).
 * - Threads bound everything open at once (requests in service and requests held by a dependency),
 *   as in the 2024 CAFE incident: a held request keeps a thread for exactly holdSeconds, then fails.
 *   When held requests take every thread the server stalls: it answers nothing, its checks
 *   included, until it is restarted (the simulator's rule, in the schema's words).
 * - Requests wait in one FIFO queue. Past `queueLimit` a request is parked: never read, never
 *   answered, as a full accept backlog would leave it; its client times out. A queued request
 *   whose client has gone is still served, as most servers do: that wasted work is the collapse.
 * - GET /health waits in the same queue and costs no service time, so an overloaded server fails
 *   a load balancer's check by timing out, as it does in production.
 */

export type FaultMode = 'none' | 'broken' | 'hang' | 'refuse'

export interface ServerConfig {
  /** Requests per second a warm server completes (wall clock). */
  capacity: number
  /** Seconds a request is in service, about; rounded so that workers / serviceTime is the capacity. */
  serviceTime: number
  /** Requests open at once (in service or held); at least the workers. */
  threads: number
  /** Requests that wait for a worker or a thread before new ones are parked unanswered. */
  queueLimit: number
  /** Capacity multiplier just after a restart (1 = never cold). */
  coldFactor: number
  /** Seconds of taking traffic a cold server needs to reach full capacity. */
  warmupSeconds: number
  /** Seconds a restart keeps the server down (refusing connections). */
  restartSeconds: number
  /**
   * Service times a request on a client's new connection costs (the TLS handshake the scenario's
   * handshakeCost stands for); 1 means no more than one on an open connection. The connections
   * are the scenario's clients', counted by its rule (see connectionWindow); HAProxy's own
   * connections to the server cost nothing extra, as an L4 balancer's would not exist.
   */
  handshakeCost: number
  /**
   * Wall seconds of the scenario's clients' think time: a client keeps its connection to a server
   * that answered it and asks again a think time later, so each window as many requests ride
   * open connections as the server answered in the window before, and the rest are new. The run
   * starts in steady state, every client connected, as the simulator's does; a restart closes
   * them all. Needed only when handshakeCost is above 1.
   */
  connectionWindow?: number
  /**
   * Wall seconds the scenario's clients wait for an answer. An answer later than that reaches a
   * client that has closed its connection (HTTP/1.1 cannot cancel a request, so a client that
   * gives up drops the connection and asks again on a new one), so only answers in time keep a
   * connection open, as in the simulator (done: started within the timeout). HAProxy keeps its own
   * side open and takes the late answer, so the server cannot tell by its socket. Missing: every
   * answer keeps one.
   */
  clientTimeout?: number
  /** The coefficient of variation of a request's service time (the scenario's serviceSpread); 0 or missing: every request takes exactly its service time. */
  serviceSpread?: number
  /** Seeds the server's service-time draws, so a run repeats them. */
  seed?: number
}

/**
 * A dependency that holds threads: requests of `type` each keep a thread for holdSeconds, then
 * fail. With every thread held, `restart`: the server stalls until restarted; `at-timeout`: it
 * waits for held calls to time out and serves again (the scenario's thread-hold `release`).
 */
export interface Hold {
  type: string
  holdSeconds: number
  release: ThreadHoldRelease
}

export interface ServerState {
  port: number
  fault: FaultMode
  /** The share of served requests it answers with a 500 (0–1). */
  erring: number
  hold: Hold | null
  /** Down for a restart. */
  restarting: boolean
  /** Held requests took every thread: nothing is answered until a restart. */
  stalled: boolean
  /** 0 = cold, 1 = warm. */
  warmth: number
  workers: number
  inService: number
  held: number
  queued: number
  parked: number
  served: number
  /** Client connections open now. */
  connections: number
}

/** The header that names a request's traffic type; `/t/<type>` in the path says the same. */
export const typeHeader = 'x-sluice-type'

interface Pending {
  req: http.IncomingMessage
  res: http.ServerResponse
  kind: 'health' | 'work' | 'held'
  /** On a client's new connection: it pays the handshake. */
  fresh: boolean
  /** performance.now() when it came in. */
  arrivedAt: number
}

export function workersFor(config: Pick<ServerConfig, 'capacity' | 'serviceTime'>): number {
  return Math.max(1, Math.round(config.capacity * config.serviceTime))
}

export function trafficType(req: http.IncomingMessage): string | undefined {
  const header = req.headers[typeHeader]
  if (typeof header === 'string' && header !== '') return header
  const match = /^\/t\/([^/?]+)/.exec(req.url ?? '')
  return match ? decodeURIComponent(match[1]) : undefined
}

export class LoopbackServer {
  readonly workers: number
  /** Service times drawn with the scenario's spread, seeded per server. */
  private readonly serviceDraw: Random
  /** Which served requests err, seeded per server (a stream of its own). */
  private readonly errorDraw: Random
  private readonly http: http.Server
  private readonly sockets = new Set<Socket>()
  private queue: Pending[] = []
  /** Requests past the queue limit, left unanswered until their clients give up. */
  private readonly parked = new Set<http.ServerResponse>()
  private inService = 0
  private heldNow = 0
  private served = 0
  private fault: FaultMode = 'none'
  private hold: Hold | null = null
  /** The share of served requests answered 500 after their service (a fault of kind errors), 0–1. */
  private erring = 0
  private restarting = false
  private stalled = false
  private restartTimer: NodeJS.Timeout | null = null
  private warmth = 1
  private lastServedAt = 0
  /** The scenario's client connections: requests that may still ride open ones this window, and answers so far. */
  private readonly connections = new OpenConnections()
  /** Bumped on each restart and stop: work started before it no longer touches the counters. */
  private generation = 0
  private listening = false
  private stopped = false
  /**
   * When the service that just ended was due to end (ms, performance.now()'s clock), while its
   * worker looks for the next request; null otherwise. See dispatch.
   */
  private freedAt: number | null = null
  /** Listener changes (refuse, restore, restart, stop) run one at a time. */
  private chain: Promise<void> = Promise.resolve()

  constructor(
    readonly config: ServerConfig,
    public port = 0,
  ) {
    this.workers = workersFor(config)
    this.serviceDraw = new Random(config.seed ?? 1)
    this.errorDraw = new Random((config.seed ?? 1) ^ 0xe7702)
    this.http = http.createServer((req, res) => this.onRequest(req, res))
    // A hanging server hangs for as long as the client waits; Node's own request timeout would answer 408.
    this.http.requestTimeout = 0
    this.http.headersTimeout = 0
    // Longer than a load balancer keeps an idle connection, as backends are set up in production:
    // otherwise the server closes a pooled connection just as HAProxy reuses it, and the 502 that
    // follows is the fleet's artefact, not the fault's.
    this.http.keepAliveTimeout = 65_000
    this.http.on('connection', (socket: Socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
  }

  /** Listens on 127.0.0.1 (the given port, or one the system picks) and returns the port. */
  async start(): Promise<number> {
    await this.listen()
    return this.port
  }

  state(): ServerState {
    return {
      port: this.port,
      fault: this.fault,
      erring: this.erring,
      hold: this.hold,
      restarting: this.restarting,
      stalled: this.stalled,
      warmth: this.warmth,
      workers: this.workers,
      inService: this.inService,
      held: this.heldNow,
      queued: this.queue.length,
      parked: this.parked.size,
      served: this.served,
      connections: this.sockets.size,
    }
  }

  /** Sets the fault switch. `refuse` closes the listener and drops every connection. */
  setFault(mode: FaultMode): Promise<void> {
    return this.serial(async () => {
      const was = this.fault
      this.fault = mode
      if (mode === 'refuse') {
        await this.close()
        this.dropQueue()
      } else if (was === 'refuse' && !this.restarting) {
        await this.listen()
      }
      if (mode === 'broken') this.answerQueueWith500()
      if (mode === 'none') this.dispatch()
    })
  }

  /** Answers this share (0–1) of the requests it serves with a 500, after their full service time. */
  setErrors(share: number): void {
    this.erring = share
  }

  setHold(hold: Hold | null): void {
    this.hold = hold
    this.dispatch()
  }

  /**
   * Restarts the server: down (refusing connections) for restartSeconds, its queue and held
   * threads gone, then back cold. The fault switch stays as it was: a restart does not fix what
   * broke the server, though it does free threads a dependency held.
   */
  restart(): Promise<void> {
    return this.serial(async () => {
      if (this.stopped) return
      this.generation++
      this.restarting = true
      await this.close()
      this.dropQueue()
      this.inService = 0
      this.heldNow = 0
      this.stalled = false
      this.connections.closeAll()
      if (this.restartTimer) clearTimeout(this.restartTimer)
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null
        void this.serial(async () => {
          if (this.stopped) return
          this.restarting = false
          this.warmth = this.config.coldFactor < 1 ? 0 : 1
          this.lastServedAt = 0
          if (this.fault !== 'refuse') await this.listen()
        })
      }, this.config.restartSeconds * 1000)
    })
  }

  /** Closes the listener and every connection, for good. */
  stop(): Promise<void> {
    return this.serial(async () => {
      this.stopped = true
      this.generation++
      if (this.restartTimer) clearTimeout(this.restartTimer)
      this.restartTimer = null
      await this.close()
      this.queue = []
    })
  }

  private serial(step: () => Promise<void>): Promise<void> {
    const next = this.chain.then(step)
    this.chain = next.catch(() => undefined)
    return next
  }

  private listen(): Promise<void> {
    if (this.listening || this.stopped) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err)
      this.http.once('error', onError)
      this.http.listen(this.port, '127.0.0.1', () => {
        this.http.off('error', onError)
        this.listening = true
        this.port = (this.http.address() as {port: number}).port
        resolve()
      })
    })
  }

  private close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    this.sockets.clear()
    if (!this.listening) return Promise.resolve()
    this.listening = false
    return new Promise((resolve) => this.http.close(() => resolve()))
  }

  private dropQueue(): void {
    for (const p of this.queue) p.res.socket?.destroy()
    this.queue = []
    this.parked.clear()
  }

  private answerQueueWith500(): void {
    const queue = this.queue
    this.queue = []
    for (const p of queue) answer(p.res, 500, 'broken')
  }

  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    // The body, if any, is not needed; reading it lets keep-alive reuse the connection.
    req.resume()
    if (this.fault === 'broken') return answer(res, 500, 'broken')
    if (this.fault === 'hang' || this.restarting || this.stalled) return
    const path = req.url ?? '/'
    const type = trafficType(req)
    const kind: Pending['kind'] = path === '/health' || path.startsWith('/health?') ? 'health' : this.hold && type === this.hold.type ? 'held' : 'work'
    if (this.queue.length >= this.config.queueLimit) {
      this.parked.add(res)
      res.on('close', () => this.parked.delete(res))
      return
    }
    const fresh = kind !== 'health' && this.config.handshakeCost > 1 && !this.connections.ride(performance.now() / 1000, this.config.connectionWindow ?? 1)
    this.queue.push({req, res, kind, fresh, arrivedAt: performance.now()})
    this.dispatch()
  }

  /** Starts what the free workers and threads allow, in arrival order. */
  private dispatch(): void {
    if (this.fault !== 'none' || this.restarting || this.stalled) return
    const {threads} = this.config
    while (this.queue.length > 0) {
      const head = this.queue[0]
      if (head.kind === 'health') {
        // Answered when its turn comes, if the server has a thread to answer with.
        if (this.inService + this.heldNow >= threads) return
        this.queue.shift()
        answer(head.res, 200, 'ok')
        continue
      }
      if (this.inService + this.heldNow >= threads) return
      // A request that arrived while the dependency held threads and is started after it was
      // fixed finds the dependency answering: it is served as any other. (Read through a null
      // hold, it threw in the timer and wedged the server: drill-thread-hold-at-timeout's pool
      // never came back after the fix.)
      const hold = this.hold
      if (head.kind === 'held' && hold === null) head.kind = 'work'
      if (head.kind === 'held' && hold !== null) {
        this.queue.shift()
        this.heldNow++
        const gen = this.generation
        setTimeout(() => {
          if (gen !== this.generation) return
          this.heldNow--
          // A stalled server answers nothing, the end of a held call included.
          if (this.stalled) return
          answer(head.res, 500, 'dependency timed out')
          this.dispatch()
        }, hold.holdSeconds * 1000)
        if (this.heldNow >= threads) {
          // Starved for good (release: restart), or until the first held call times out.
          if (hold.release === 'restart') this.stalled = true
          return
        }
        continue
      }
      if (this.inService >= this.workers) return
      this.queue.shift()
      this.inService++
      const gen = this.generation
      const now = performance.now()
      // A timer fires late by however late this process's event loop runs (a millisecond on a
      // quiet machine, ten on a busy one), and a worker that started its next request only then
      // would lose that time on every request: 1% of a 100 ms service when quiet, measured, more
      // when busy, and at a pool's capacity every point of capacity lost is a point of demand
      // lost. A real server's clock loses nothing, so a worker that ends one request and takes
      // the next starts it when the first was due to end, or when the next came in if later.
      const start = this.freedAt === null ? now : Math.max(this.freedAt, head.arrivedAt)
      this.freedAt = null
      const end = start + this.serviceSeconds() * this.serviceDraw.spread(this.config.serviceSpread ?? 0) * (head.fresh ? this.config.handshakeCost : 1) * 1000
      setTimeout(
        () => {
          if (gen !== this.generation) return
          this.inService--
          this.served++
          this.warm()
          const timeout = this.config.clientTimeout
          if (!head.res.destroyed && (timeout === undefined || end - head.arrivedAt <= timeout * 1000)) this.connections.answered()
          if (this.erring > 0 && this.errorDraw.next() < this.erring) answer(head.res, 500, 'erred')
          else answer(head.res, 200, 'ok')
          this.freedAt = end
          this.dispatch()
          this.freedAt = null
        },
        Math.max(0, end - now),
      )
    }
  }

  /** Seconds one request is in service now: workers / capacity, longer while cold. */
  private serviceSeconds(): number {
    const {capacity, coldFactor} = this.config
    const factor = coldFactor + (1 - coldFactor) * this.warmth
    return this.workers / (capacity * factor)
  }

  /** Warmth grows with the seconds spent taking traffic: gaps of over a second count as one. */
  private warm(): void {
    if (this.warmth >= 1) return
    const now = performance.now() / 1000
    const step = this.lastServedAt === 0 ? 0 : Math.min(1, now - this.lastServedAt)
    this.lastServedAt = now
    const warmup = this.config.warmupSeconds
    this.warmth = warmup <= 0 ? 1 : Math.min(1, this.warmth + step / warmup)
  }
}

/**
 * The simulator's connection rule at one server: requests beyond the rate it answered waiting
 * clients at are on new connections. The simulator's rule is on rates (last tick's completions
 * ride open connections), and a drill's server sees a request or two a window, so both rates are
 * smoothed over `smoothing` windows: counted window by window, the chance alone that a window
 * brings one more request than the last answered would make a third of a steady pool's requests
 * new. What is new is chosen evenly among arrivals (an accumulator), not at random.
 */
export class OpenConnections {
  private windowStart = -1
  private arrivalsNow = 0
  private answeredNow = 0
  /** Smoothed per window; null until the first window has ended (the steady state's, all connected). */
  private arrivalRate: number | null = null
  private answerRate = 0
  private owed = 0

  constructor(private readonly smoothing = 10) {}

  /** A request arrives at `now` (seconds): true if it rides an open connection. */
  ride(now: number, window: number): boolean {
    if (this.windowStart < 0) this.windowStart = now
    if (now >= this.windowStart + window) {
      const elapsed = Math.floor((now - this.windowStart) / window)
      const a = 1 / this.smoothing
      if (this.arrivalRate === null) {
        // The run starts in steady state: every client connected, answered as it asks.
        this.arrivalRate = this.arrivalsNow
        this.answerRate = this.arrivalsNow
      } else {
        this.arrivalRate += a * (this.arrivalsNow - this.arrivalRate)
        this.answerRate += a * (this.answeredNow - this.answerRate)
      }
      // Windows with nothing in them.
      const idle = (1 - a) ** (elapsed - 1)
      this.arrivalRate *= idle
      this.answerRate *= idle
      this.arrivalsNow = 0
      this.answeredNow = 0
      this.windowStart += elapsed * window
    }
    this.arrivalsNow++
    if (this.arrivalRate === null || this.answerRate >= this.arrivalRate) return true
    this.owed += 1 - this.answerRate / this.arrivalRate
    if (this.owed < 1) return true
    this.owed -= 1
    return false
  }

  answered(): void {
    this.answeredNow++
  }

  /** A restart: no connection is left open. */
  closeAll(): void {
    this.answerRate = 0
    this.answeredNow = 0
    this.arrivalRate ??= 0
  }
}

function answer(res: http.ServerResponse, status: number, body: string): void {
  if (res.destroyed || res.writableEnded) return
  res.writeHead(status, {'content-type': 'text/plain', 'content-length': Buffer.byteLength(body)})
  res.end(body)
}
