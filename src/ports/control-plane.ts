import type {PoolAssessor} from './pool-readings.js'
/**
 * The ports: the narrow interfaces every action talks to. The live adapters (src/aws,
 * src/haproxy) and the simulated fleet (src/sim/adapters) implement the same ones, and src/wiring
 * picks which, so an action never knows whether it is live, rehearsed or drilled.
 */

/** Time as the run experiences it: wall time live, virtual time in a rehearsal. */
export interface Clock {
  /** Seconds (live: since the epoch; rehearsal: since the scenario started). */
  now(): number
  /** Waits `seconds`; returns early, without throwing, when `signal` aborts. */
  sleep(seconds: number, signal?: AbortSignal): Promise<void>
}

/** Weight per weighted-record set identifier (Route 53: 0–255). */
export type WeightMap = Record<string, number>

/**
 * A `signal` given to a port method stops its calls to the outside world: a live adapter aborts
 * the call in flight and throws. Without one, a live call still ends at its own deadline.
 */
export interface WeightsPort {
  /** What a person would call this record, for messages: `Z123 outlook.example.com. A`. */
  readonly label: string
  ttl(signal?: AbortSignal): Promise<number>
  readWeights(signal?: AbortSignal): Promise<WeightMap>
  /**
   * Applies every changed weight in one atomic change and returns when it is in sync. When
   * `signal` aborts after the change was accepted, it returns at once: the change is applied and
   * reaches every name server without being watched.
   */
  applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void>
}

export type TargetHealth = 'healthy' | 'unhealthy' | 'initial' | 'draining' | 'unused'

export interface Target {
  /**
   * The registration: the target and its port (`i-0abc:443`, `10.0.1.10:443`) where the group has
   * ports, so a journal names exactly one registration even when a target is registered twice.
   */
  id: string
  /** The target as its owner knows it, without the port: the instance id or the IP. Hooks get this as `{id}`. */
  targetId: string
  health: TargetHealth
  ip?: string
  port?: number
  /**
   * The share of its capacity a target in rotation serves now, 0–1, where the load balancer shows
   * it or this process started its slow start (a paced ramp counts it at this); absent when warm
   * or not known.
   */
  warmth?: number
}

export interface PoolPort {
  /** The pool name the runbook uses for this group. */
  readonly name: string
  readonly label: string
  /** Every target the group knows, draining ones included. */
  targets(signal?: AbortSignal): Promise<Target[]>
  deregister(ids: string[]): Promise<void>
  /** Waits until the targets have drained; false if they had not within the timeout. */
  waitDrained(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean>
  register(ids: string[]): Promise<void>
  /** Waits until the targets pass their health checks; false if they had not within the timeout. */
  waitHealthy(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean>
  slowStart(): Promise<number>
  setSlowStart(seconds: number): Promise<void>
  /**
   * Routing failover (ALB's target_group_health.unhealthy_state_routing, Envoy's panic threshold):
   * below this share of healthy targets, route to all of them. null = off.
   */
  failoverPercent(): Promise<number | null>
  setFailoverPercent(percent: number | null): Promise<void>
}

/** A class of requests turned away at the load balancer with a fast 503 and Retry-After. */
export interface Restriction {
  /** The traffic type: the rule's name and tag, and the simulator's traffic type. */
  type: string
  paths: string[]
  headers: Record<string, string[]>
  retryAfterSeconds: number
  /**
   * The percent of the type's requests turned away, 1–100; absent: all of them. 0 where one is
   * listed that turns nothing away (a HAProxy entry keeping 100%, an ALB rule that forwards).
   */
  share?: number
}

export interface RestrictionPort {
  readonly label: string
  list(): Promise<Restriction[]>
  add(restriction: Restriction): Promise<void>
  /** Removes the restriction for a type; false if there was none. */
  remove(type: string): Promise<boolean>
}

export type MetricKind = 'error-rate' | 'latency-p99' | 'healthy-targets' | 'request-rate'

export const metricUnits: Record<MetricKind, string> = {
  'error-rate': '%',
  'latency-p99': 'ms',
  'healthy-targets': '%',
  'request-rate': 'rps',
}

/** A metric over a window, with how many requests it was measured on. */
export interface Reading {
  /** null when there is no data, which a gate must treat as inconclusive, never as a pass. */
  value: number | null
  /**
   * The requests in the window, where the source counts them: a gate with `minRequests` needs it,
   * since 1 failure in 3 requests is not 33% of anything. null for healthy-targets and where the
   * source cannot count (a Prometheus source without a request-rate query).
   */
  requests: number | null
}

export interface MetricsPort {
  readonly label: string
  /**
   * The metric over the last `windowSeconds`, scoped to one pool or to everything. Throws when the
   * source cannot be read (an error, a timeout, `signal` aborted): that is not a verdict either.
   */
  read(kind: MetricKind, windowSeconds: number, pool?: string, signal?: AbortSignal): Promise<Reading>
  /** What the source cannot see that a gate on it would need to (read before a run, and shown with its plan). */
  caveats?(signal?: AbortSignal): Promise<string[]>
}

export interface FreezeRecord {
  by: string
  reason: string
  /** ISO 8601 */
  since: string
  expires?: string
  /** The run that set it: only that run lifts it without an explicit override. */
  runId?: string
  /** Set by an operator's own `sluice freeze`, not by a runbook: that operator lifts it with `sluice unfreeze`. */
  byHand?: boolean
}

export interface FreezePort {
  get(): Promise<FreezeRecord | null>
  /** `byRun`: the run writing it, whose lock the write is fenced by (the record's own run unless said: a rollback puts back another's). */
  set(record: FreezeRecord, byRun?: string): Promise<void>
  /** `byRun`: the run clearing it, whose lock the write is fenced by (an unfreeze step, a rollback). */
  clear(byRun?: string): Promise<void>
}

/** A restart or remediation command: an argv template, never a shell string. */
export interface CommandSpec {
  with: 'command'
  command: string[]
  timeoutSeconds: number
  /** Names of sluice's environment variables the command also gets; by default it gets almost none. */
  env?: string[]
}

/** SSM Run Command on the target's EC2 instance: a document and its parameters, waited on. */
export interface SsmSpec {
  with: 'ssm'
  document: string
  parameters: Record<string, string[]>
  timeoutSeconds: number
  /** The command's comment, by which a resumed run finds one it sent before it died: the run, the step and the kind. */
  comment: string
}

/** A reboot of the target's EC2 instance, waited on until its status checks pass. */
export interface Ec2RebootSpec {
  with: 'ec2-reboot'
  /** Seconds after the reboot before the status checks are believed: they read ok for a while after it, as before it. */
  settleSeconds: number
  timeoutSeconds: number
}

/** The target's ECS task stopped, and the service's replacement waited on until it serves in the service's target groups. */
export interface EcsReplaceSpec {
  with: 'ecs-replace'
  cluster: string
  service: string
  timeoutSeconds: number
  /** Said to ECS as the reason the task was stopped, and found again by a resumed run. */
  reason: string
}

/** How a cycle restarts or remediates a target: a command of the operator's, or one of the AWS adapters. */
export type HookSpec = CommandSpec | SsmSpec | Ec2RebootSpec | EcsReplaceSpec

/** What a restart or remediation reports when it worked. */
export interface HookResult {
  /** What it did, in words for the journal: the command's id, status and output, the checks' state. */
  note?: string
  /**
   * The target is back in rotation by the platform's own doing (an ECS service registers its
   * replacement task), so the cycle registers nothing for it: the old target is gone for good.
   */
  rejoined?: boolean
  /** The targets that took this one's place (an ECS service's new tasks, `ip:port`): new, so never cycled by this cycle. */
  replacements?: string[]
}

/** One way of restarting a target through its platform's API (SSM, EC2, ECS), as a family gives it. */
export interface RestartAdapter<S extends HookSpec> {
  run(spec: S, target: Target, signal?: AbortSignal): Promise<HookResult>
  /** See HookPort.finish. */
  finish(spec: S, target: Target, since: Date, signal?: AbortSignal): Promise<HookResult>
  refusals?(spec: S, targets: Target[], signal?: AbortSignal): Promise<string[]>
  /** See HookPort.begun. */
  begun?(spec: S, target: Target, signal?: AbortSignal): Promise<boolean>
}

/** The restart adapters a family has, by the name a runbook gives them. */
export interface RestartAdapters {
  ssm?: RestartAdapter<SsmSpec>
  'ec2-reboot'?: RestartAdapter<Ec2RebootSpec>
  'ecs-replace'?: RestartAdapter<EcsReplaceSpec>
}

export interface HookPort {
  /** Runs the hook for one target; throws with the reason when it fails or times out, or when it names a value the target does not have. */
  run(kind: 'restart' | 'remediate', hook: HookSpec, target: Target, signal?: AbortSignal): Promise<HookResult | void>
  /**
   * Finishes a hook a run that died had begun on this target (its intent is in the journal, its
   * outcome is not), without doing it twice: waits for the command it sent, for the instance it
   * rebooted, for the task it stopped to be replaced; does it only where it is sure it was never
   * done. A port that cannot tell (a local command) has none: the hook counts as run, and the
   * target's health check on its way back says whether it worked.
   */
  finish?(kind: 'restart' | 'remediate', hook: HookSpec, target: Target, since: Date, signal?: AbortSignal): Promise<HookResult | void>
  /**
   * What the hook names ({ip}, {port}) that these targets cannot give it, one entry per target
   * short of one, read before a run changes anything. A port that runs no command (a rehearsal's,
   * a drill's) has nothing to fill and leaves it out.
   */
  unfilled?(hook: HookSpec, targets: Target[], signal?: AbortSignal): Promise<Unfilled[]>
  /** Why the hook cannot act on these targets at all (an SSM command on IP targets, a service that is not there), read before a run changes anything. */
  refusals?(hook: HookSpec, targets: Target[], signal?: AbortSignal): Promise<string[]>
  /**
   * Whether the hook's change to the target was begun, read from its platform (an ECS task no
   * longer meant to run was stopped); undefined where the port cannot tell. Read on resume, for a
   * change journalled without its outcome.
   */
  begun?(hook: HookSpec, target: Target, signal?: AbortSignal): Promise<boolean | undefined>
}

/** A value a hook names that a target cannot give: the placeholder, and why not in words naming what the target is. */
export interface Unfilled {
  target: Target
  placeholder: string
  why: string
}

/**
 * Addresses that are not in a pool's own answer, looked up by target id: an EC2 instance's
 * private address (an instance target group lists only instance ids).
 */
export interface AddressBook {
  /** Each id's address, or why it has none, in words naming what the target is (`EC2 instance i-0abc is terminated`). */
  lookUp(targetIds: string[], signal?: AbortSignal): Promise<Map<string, {ip: string} | {none: string}>>
}

/** Everything a run can touch. Parts a runbook does not name are absent. */
export interface ControlPlane {
  clock: Clock
  /** The weights traffic is split by: a weighted DNS record's, or a HAProxy ramp map's. */
  weights?: WeightsPort
  /**
   * The load balancer's own split between pools, keyed by pool, where it has one: an ALB rule's
   * forward action (by the rule's or listener's ARN), HAProxy's ramp map (its one split), the
   * simulator's routing. Unlike DNS weights, every request follows a change at once. A change is
   * recorded against the port's label, which finds the port again.
   */
  poolWeights?: (at: string) => WeightsPort
  /** The pools a runbook names: target groups, HAProxy backends, the simulator's pools. */
  pools: Map<string, PoolPort>
  /** Where traffic types are turned away: a listener's rules, a HAProxy restriction map. */
  restrictions?: RestrictionPort
  metrics?: MetricsPort
  /** Places a pool on its calibrated map, for an `assess` step. */
  assessor?: PoolAssessor
  freeze: FreezePort
  hooks: HookPort
  /** Who is operating, for the freeze record and the journal. */
  operator: string
  /** The run this control plane acts for, when it is one (a live run's id; 'rehearsal'). */
  runId?: string
  /**
   * The run is one command an operator typed (`sluice freeze`, `sluice unfreeze`), not a runbook:
   * a freeze it sets is that operator's, and the same operator lifts it from the command line.
   */
  byHand?: boolean
}
