/**
 * What calibrate and assess read of a live pool, whatever fronts it (an ALB's target group and
 * CloudWatch, a HAProxy backend, or queries an operator maps in Prometheus): its settings that
 * shape a cascade, its state now, and its metrics over a window. src/aws/pool-readings.ts is the
 * AWS one; src/wiring/readings.ts picks.
 */

/** What fronts a pool: its checks and guards mean different things, and it has different levers. */
export type PoolFamily = 'alb' | 'envoy' | 'haproxy'

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
  family: PoolFamily
  /** Servers registered now, and of them in rotation now. */
  servers: number
  healthy: number
  /** Seconds between health checks (Envoy: between outlier detection's passes). */
  interval: number
  /** Seconds a check waits for an answer; null where not known (Envoy's outlier detection has none). */
  checkTimeout: number | null
  /**
   * Failed checks in a row before a server is taken out, and passed ones before it is back; null
   * where the family has none (Envoy's outlier detection ejects for a time, not until checks pass).
   */
  fall: number | null
  rise: number | null
  /** Seconds of slow start for a returning server (0: off). */
  slowStart: number
  /** Seconds a drained server keeps its open requests; null where not known. */
  drainDelay: number | null
  /** Below this share of servers healthy, route to all of them (ALB's minimum healthy targets routing, Envoy's panic threshold); null: off. */
  failoverPercent: number | null
  /** HAProxy's check settings beyond the ones every load balancer has; absent for an ALB. */
  haproxy?: HaproxyCheckSettings
  /** Envoy's outlier detection and slow start beyond the ones every load balancer has; Envoy only. */
  envoy?: EnvoyGuardSettings
  /** Each setting's own name, for the comments: {interval: 'HealthCheckIntervalSeconds', …}. */
  names: Record<'interval' | 'checkTimeout' | 'fall' | 'rise' | 'slowStart' | 'drainDelay' | 'failoverPercent', string>
  /**
   * Where the settings came from when they were not read back from the load balancer: Prometheus
   * holds none of them, so a mapping file gives them (`given`, said so in the scenario), and the
   * servers are read from a query or given there too. Absent: every setting was read.
   */
  given?: {
    /** The file the operator gave them in. */
    from: string
    servers: {how: 'read' | 'given'; source: string}
  }
}

/** Envoy's guards beyond the check interval, as its cluster configuration names them (seconds, percent). */
export interface EnvoyGuardSettings {
  /** outlier_detection.base_ejection_time: an ejection lasts this × the times the host was ejected… */
  baseEjection: number
  /** …up to outlier_detection.max_ejection_time. */
  maxEjection: number
  /** outlier_detection.max_ejection_percent: at most this share of the pool ejected at once. */
  maxEjectionPercent: number
  /** slow_start_config.min_weight_percent: where a returning host's weight starts. */
  slowStartMinWeightPercent: number
  /** Each one's name, for the comments. */
  names: Record<'baseEjection' | 'maxEjection' | 'maxEjectionPercent' | 'slowStartMinWeightPercent', string>
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
  /** Where these were read (the configuration file and its line), or given (a mapping file's line). */
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
  /** What fronts the pool, known before anything is read: assess offers its levers. */
  readonly family: PoolFamily
  /** What the readings could not do as asked, said in the calibration (HAProxy stopped before the window ended, say). */
  readonly notes?: string[]
  settings(signal?: AbortSignal): Promise<PoolSettings>
  /** The metrics over [start, end) in periods of `period` seconds, oldest first; periods with no requests left out. */
  history(start: Date, end: Date, period: number, signal?: AbortSignal): Promise<PoolPeriod[]>
  now(signal?: AbortSignal): Promise<PoolNow>
}

/** A live pool's readings as calibrate and assess open them: what the source calls the pool, and how to let go of what they hold. */
export interface OpenedReadings {
  readings: PoolReadings
  pool: string
  close: () => void
}

/** Where a pool stands on its calibrated map, the trigger fixed now (src/assess/assess.ts says how it is found). */
export interface PoolVerdict {
  region: 'unharmed' | 'recovering' | 'at-risk' | 'stuck'
  /** What an operator reads: where it is, how far from the edge, the way out. */
  sentences: string[]
  /** The same in numbers, for a page to draw. */
  place: PoolPlace
}

/**
 * A pool's place on its map (servers broken × demand) in numbers: the point, and the two lines
 * through it the quick assessment walks, where it tips along demand and along servers broken.
 */
export interface PoolPlace {
  scenario: string
  setup: string
  now: PoolNow
  /**
   * Servers broken, the map's across: where the pool is placed along it (the fewest broken that
   * take it to what is out of rotation now, or every one out). Out of rotation now is servers − healthy.
   */
  out: number
  region: PoolVerdict['region']
  /** With `out` servers broken, the demand above which it is stuck; null: not within twice today's. */
  stuckAboveDemand: number | null
  /** At today's demand, the stretches of servers broken with which it is stuck, [first, last]. */
  stuckOut: Array<[number, number]>
  /** Requests a second the scenario says a server, those in rotation now, and every server can serve. */
  capacity: {perServer: number; inRotation: number; pool: number}
}

/**
 * Places a pool on the map of its calibrated scenario: a runbook's `assess` step asks before it
 * ramps into a pool that cannot hold. The wiring gives live runs and rehearsals the same one.
 */
export interface PoolAssessor {
  /** `scenario` as the runbook names it: a file (relative to the runbook) or a built-in name. */
  assess(scenario: string, setup: string | undefined, now: PoolNow): Promise<PoolVerdict>
}
