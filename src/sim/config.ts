/**
 * The resolved description of a simulated fleet: what the scenario loader produces and the
 * simulator consumes. Every field is filled in; defaults live in the scenario schema, so the
 * simulator never has to guess.
 */

export interface PoolConfig {
  name: string
  /** `servers` is a load-balanced pool; `sorry` answers every request with a fast 503 (a maintenance endpoint a ramp parks traffic on). */
  kind: 'servers' | 'sorry'
  servers: number
  /** Requests per second one warm server completes. */
  capacity: number
  /** Per-server capacity is drawn uniformly from capacity × (1 ± spread). */
  capacitySpread: number
  /**
   * The coefficient of variation of a request's service time (1: exponential, as M/M/c assumes;
   * 0: every request takes exactly serviceTime). A server near capacity completes a drawn count
   * each tick; the queueing model only.
   */
  serviceSpread: number
  /** A share of the servers, drawn by seed, at `factor` of the capacity; null: none. */
  slowMinority: {share: number; factor: number} | null
  /** How the load balancer spreads requests over the servers in rotation. */
  balance: 'round-robin' | 'random' | 'least-connections'
  /**
   * Work wasted per unit of overload: past capacity a server completes capacity × (1 − collapse ×
   * (asked/capacity − 1)). The waste is answering requests whose clients have gone, so a queue
   * shorter than the clients' timeout wastes nothing: the loader sets 0 then.
   */
  collapse: number
  /** Work units a request on a new connection costs (the TLS handshake); 1 means no more than a request on an open one. */
  handshakeCost: number
  /** Fraction of open connections that clients close and reopen each second. */
  connectionChurn: number
  /** Capacity multiplier of a server that has just restarted (1 = never cold). */
  coldFactor: number
  /** Seconds of taking traffic a cold server needs to reach full capacity. */
  warmupSeconds: number
  /** Requests a server can hold open at once; a dependency that holds threads stalls the server when they run out. */
  threads: number
  /** Seconds a normal request holds a thread. */
  serviceTime: number
  /** Seconds a restarted server is down. */
  restartSeconds: number
  /**
   * Seconds of work a server queues before new requests wait unanswered (until their clients give
   * up); null: unbounded. An overloaded server's queue is full, so a request it takes waits this long.
   */
  queueSeconds: number | null
}

/** A load-balancer setup: the guards the seed compares. */
export interface Policy {
  /** At most this share of a pool is ejected at once (100 = no cap). */
  maxEjectionPercent: number
  /** Below this share of hosts in rotation, route to every registered host (0 = off). */
  panicThreshold: number
  /** Servers reject work beyond their capacity with a fast 503 instead of slowing down. */
  shed: boolean
  /** Seconds over which a returning server's weight grows to full (0 = off). */
  slowStart: number
  /** Weight a server in slow start begins at, in percent. */
  slowStartMinWeightPercent: number
}

export interface HealthCheckConfig {
  /** Seconds between checks (for HAProxy, its `inter`). */
  interval: number
  baseEjection: number
  maxEjection: number
  /** When set, checks follow HAProxy's rules (fall/rise, observe, on-error) instead of Envoy's ejection. */
  haproxy?: HaproxyCheck
}

/** What an HAProxy layer-7 observation does once `errorLimit` consecutive live requests have failed. */
export type HaproxyOnError = 'fastinter' | 'fail-check' | 'sudden-death' | 'mark-down'

/** HAProxy's server check settings (`inter` is HealthCheckConfig.interval). Seconds, as the scenario gives them. */
export interface HaproxyCheck {
  /** Seconds between checks while a server is neither fully up nor fully down (HAProxy's default: inter). */
  fastinter: number
  /** Seconds between checks while a server is down (HAProxy's default: inter). */
  downinter: number
  /** Consecutive failed checks that take an up server down. */
  fall: number
  /** Consecutive good checks that bring a down server back up. */
  rise: number
  /** `layer7`: failed live requests count against a server too; `none`: only checks do. */
  observe: 'none' | 'layer7'
  errorLimit: number
  onError: HaproxyOnError
  /** HAProxy's `timeout server`: a session to a server that does not answer stays open this long (seconds). */
  timeoutServer: number
}

export interface ClientConfig {
  /** Attempts per request, the first included. */
  attempts: number
  /** Seconds a client waits before it gives up on an attempt that gets no answer. */
  timeout: number
  backoffBase: number
  backoffMax: number
  /** Retries are allowed while retries stay under this share of requests (null = no budget). */
  retryBudget: number | null
  /** Seconds of history the retry budget looks at. */
  budgetWindow: number
  /** Clients wait for Retry-After on a 503 instead of their own backoff. */
  honourRetryAfter: boolean
  /** Seconds the Retry-After header of a maintenance pool's 503 asks for (in the seed model, of every fast 503). */
  retryAfter: number
  /**
   * Seconds from an answer to the client's next request on the same connection: a request finds an
   * open connection to a server that answered that long before, and the rest open new ones.
   */
  thinkTime: number
}

export interface TrafficType {
  name: string
  share: number
}

export interface DemandConfig {
  /** Piecewise-linear curve of user requests per second: [seconds, rps], ascending. One point means constant. */
  curve: Array<[number, number]>
  types: TrafficType[]
  /**
   * How many requests arrive in a tick: `mean`, the curve's rate exactly; `poisson`, a seeded draw
   * around it, as independent users arrive (what a drill's load generator sends).
   */
  arrivals: 'mean' | 'poisson'
  /** The share of the requests the Poisson draws are made at (a drill's rate × time scale): fewer requests burst by more. */
  sampleScale?: number
}

export interface DnsConfig {
  /** Seconds resolvers cache an answer; a weight change reaches all clients after one TTL. */
  ttl: number
  /** Route 53-style weights (0–255) per pool. */
  weights: Record<string, number>
}

export type Fault =
  | {kind: 'broken'; pool: string; servers: number; from: number; to: number; mode: 'hang' | 'refuse'}
  | {
      kind: 'thread-hold'
      pool: string
      type: string
      holdSeconds: number
      /** How a server gets held threads back: only by a restart, or as each held call times out (threadHoldReleases). */
      release: ThreadHoldRelease
      from: number
      to: number
    }
  | {kind: 'errors'; pool: string; percent: number; from: number; to: number}
  | {kind: 'metadata-outage'; pool: string; from: number; to: number; lookupCapacity: number | null}

/**
 * How a server whose every thread a dependency holds gets them back:
 * - `restart`: it does not. The server stalls and answers nothing, the end of a held call included,
 *   until it is restarted: thread-pool starvation from a synchronous call in an asynchronous path
 *   (the 2024 CAFE incident), which slow thread injection clears only slowly, if at all.
 * - `at-timeout`: each held call ends after holdSeconds (the dependency's timeout) and hands its
 *   thread back. While every thread is held the server serves nothing and its checks wait in its
 *   queue, as its requests do; as calls time out it serves again.
 */
export type ThreadHoldRelease = 'restart' | 'at-timeout'

/**
 * Which rules the simulator follows where the seed's model and the real software differ:
 * - `queueing` (the default): the rules the drills check against HAProxy and a real fleet. Only a
 *   503 that carries Retry-After makes clients wait for it: the maintenance pool's (clients'
 *   retryAfter) and a restriction's (the step's retryAfter); the load balancer's own "no server" 503
 *   and a shedding server's carry none. A held thread is held for exactly holdSeconds.
 * - `seed`: the model the seed's table was computed with, kept so that table stays reproducible:
 *   every fast failure waits the clients' retryAfter, and held threads are released at random
 *   with a mean of holdSeconds.
 */
export type SimulationModel = 'queueing' | 'seed'

export interface FleetConfig {
  model: SimulationModel
  /** Seconds simulated. */
  duration: number
  /** Seconds per tick. */
  tick: number
  seed: number
  pools: PoolConfig[]
  dns: DnsConfig
  healthCheck: HealthCheckConfig
  clients: ClientConfig
  demand: DemandConfig
  faults: Fault[]
  /** Traffic turned away for a while: the percent of a type, from and to (null: never lifted). */
  restrictions: Array<{type: string; share: number; retryAfter: number; from: number; to: number | null}>
  policy: Policy
}

export const noGuard: Policy = {
  maxEjectionPercent: 100,
  panicThreshold: 0,
  shed: false,
  slowStart: 0,
  slowStartMinWeightPercent: 10,
}
