/**
 * What calibrate and assess read of a live pool, whatever fronts it (an ALB's target group and
 * CloudWatch, a HAProxy backend): its settings that shape a cascade, its state now, and its
 * metrics over a window. src/aws/pool-readings.ts is the AWS one; src/wiring/readings.ts picks.
 */

/**
 * One period of a pool's metrics, as a load balancer counts them: what arrived, what failed, how
 * many servers were in rotation and how long an answer took. A reading may be missing for a
 * period (CloudWatch leaves a period out where nothing was put).
 */
export interface PoolPeriod {
  /** Start of the period, epoch seconds. */
  at: number
  /** Requests that reached the pool in the period. */
  requests: number
  /** Of them, answered with an error (the servers' 5xx and the load balancer's own). */
  errors: number
  /** Servers in rotation (healthy), averaged over the period; null where not read. */
  healthy: number | null
  /**
   * Whether servers went in or out of rotation during the period, where the readings can tell.
   * Such a period says nothing of what one server serves: a server taken out still answers what
   * it had queued, and the mean in rotation divides it by too few.
   */
  rotationChanged?: boolean
  /**
   * Where the load balancer counts per server (HAProxy): what the servers in rotation were sent
   * and answered, and their server-seconds in rotation. What one server serves is read from these
   * rather than from the pool's totals over its mean in rotation.
   */
  inRotation?: {requests: number; served: number; serverSeconds: number}
  /** Mean seconds to an answer; null where not read. */
  latency: number | null
}

/** A pool's settings that shape a cascade, each with the name its load balancer gives it (for the scenario's comments). */
export interface PoolSettings {
  /** What was read, as a person names it: `target group mailbox (arn:…)`. */
  label: string
  /** The load balancer's family: its checks and guards mean different things. */
  family: 'alb' | 'haproxy'
  /** Servers registered now, and of them in rotation now. */
  servers: number
  healthy: number
  /** Seconds between health checks. */
  interval: number
  /** Seconds a check waits for an answer. */
  checkTimeout: number
  /** Failed checks in a row before a server is taken out, and passed ones before it is back. */
  fall: number
  rise: number
  /** Seconds of slow start for a returning server (0: off). */
  slowStart: number
  /** Seconds a drained server keeps its open requests. */
  drainDelay: number
  /** Below this share of servers healthy, route to all of them (ALB's minimum healthy targets routing); null: off. */
  failoverPercent: number | null
  /** HAProxy's check settings beyond the ones every load balancer has; absent for an ALB. */
  haproxy?: HaproxyCheckSettings
  /** Each setting's own name, for the comments: {interval: 'HealthCheckIntervalSeconds', …}. */
  names: Record<'interval' | 'checkTimeout' | 'fall' | 'rise' | 'slowStart' | 'drainDelay' | 'failoverPercent', string>
}

/** A HAProxy backend's check settings as its configuration gives them (seconds), with HAProxy's defaults where unset. */
export interface HaproxyCheckSettings {
  fastinter: number
  downinter: number
  observe: 'none' | 'layer7'
  errorLimit: number
  onError: 'fastinter' | 'fail-check' | 'sudden-death' | 'mark-down'
  /** `timeout server`: how long HAProxy waits for a server's answer. */
  timeoutServer: number
  /** Where these were read: the configuration file and its line. */
  from: string
}

/** The pool now: what assess places on the map. */
export interface PoolNow {
  at: number
  /** Requests a second over the last few periods. */
  demand: number
  /** Share of them answered with an error, 0–1. */
  errorRate: number
  servers: number
  healthy: number
}

export interface PoolReadings {
  /** Where the readings come from, as said in the scenario's header: `AWS (us-east-1): target group …, CloudWatch AWS/ApplicationELB`. */
  readonly source: string
  /** What the readings could not do as asked, said in the calibration (HAProxy stopped before the window ended, say). */
  readonly notes?: string[]
  settings(signal?: AbortSignal): Promise<PoolSettings>
  /** The metrics over [start, end) in periods of `period` seconds, oldest first; periods with no requests left out. */
  history(start: Date, end: Date, period: number, signal?: AbortSignal): Promise<PoolPeriod[]>
  now(signal?: AbortSignal): Promise<PoolNow>
}

/** Where a pool stands on its calibrated map, the trigger fixed now (src/assess/assess.ts says how it is found). */
export interface PoolVerdict {
  region: 'unharmed' | 'recovering' | 'stuck'
  /** What an operator reads: where it is, how far from the edge, the way out. */
  sentences: string[]
}

/**
 * Places a pool on the map of its calibrated scenario: a runbook's `assess` step asks before it
 * ramps into a pool that cannot hold. The wiring gives live runs and rehearsals the same one.
 */
export interface PoolAssessor {
  /** `scenario` as the runbook names it: a file (relative to the runbook) or a built-in name. */
  assess(scenario: string, setup: string | undefined, now: PoolNow): Promise<PoolVerdict>
}
