import type {Policy} from '../config.js'

/** Later than any tick (and still a small integer to V8, unlike 2^31 − 1). */
export const noTimer = 2 ** 30 - 1

/**
 * What a health-check family sees of its pool, and the two moves it makes: a server out of
 * rotation until a tick, and back in. The per-server arrays are the pool's own (src/sim/pool.ts).
 */
export interface CheckedPool {
  readonly size: number
  readonly dt: number
  readonly policy: Policy
  readonly registered: Uint8Array
  readonly ejected: Uint8Array
  /** Non-zero when this tick the server would fail a health check (queueState, in the queueing model). */
  readonly failing: Uint8Array
  /** Share of a server's work its full queue turned away this tick (the queueing model). */
  readonly parked: Float64Array
  /** 0 up, 1 hangs, 2 answers fast. */
  readonly down: Uint8Array
  /** What each server completed in the last tick, per second. */
  readonly openConnections: Float64Array
  /** Work queued at each server (the queueing model), and what it completes a second: a check waits backlog ÷ capacity. */
  readonly backlog: Float64Array
  readonly effectiveCapacity: Float64Array
  /** Share of new connections the shared metadata store routes this tick (1 = all); the rest are refused. */
  readonly newConnectionAdmission: number
  readonly timesEjected: Int32Array
  readonly ejectedCount: number
  readonly maxEjected: number
  /** Out of rotation until tick `until` (noTimer: until checks bring it back). */
  takeOut(i: number, until: number): void
  /** Back into rotation at tick `t`, in slow start when the policy has it. */
  putBack(i: number, t: number): void
}

/**
 * A load balancer's health checks: Envoy's outlier ejection (envoy-ejection.ts) or HAProxy's
 * fall/rise checks (haproxy-checks.ts). The pool serves; its checks decide who is in rotation.
 */
export interface PoolChecks {
  /**
   * After a tick's traffic was served. `weight` and `perWeight` are how it was routed; `routed` is
   * false when no server could be sent any (perWeight is then 0).
   */
  afterTick(t: number, weight: Float64Array, perWeight: number, routed: boolean): void
  /** The weight of a server `elapsed` ticks into a slow start of `window` ticks. */
  slowStartWeight(elapsed: number, window: number, minWeight: number): number
  /** The operator put server `i` back (registered it again) at tick `t`. */
  registered(i: number, t: number): void
  /**
   * Seconds from tick `t` until the balancer has no session open on server `i`, which it stops
   * sending new requests now: how long a drain of it takes.
   */
  drainSeconds(i: number, t: number): number
  /** Which balancer's rules: HAProxy takes slow start and failover from its config file only, Envoy can change both at runtime. */
  readonly family: 'envoy' | 'haproxy'
}
