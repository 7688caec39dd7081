import type {AddressBook, Clock, MetricsPort, PoolPort, RestartAdapters, RestrictionPort, WeightsPort} from './control-plane.js'
import type {PoolFamily} from './pool-readings.js'

/**
 * A backend is one family of control plane a runbook's targets can name: AWS (a weighted Route 53
 * record, ELBv2 target groups, a listener's rules) or one HAProxy over its Runtime API. Runbooks
 * and actions speak of weights, pools and restrictions; the backend says what those are called
 * there, what a run locks, which IAM it needs, and what it cannot do, so that no action, plan or
 * loader branches on the family.
 *
 * A family has two halves, one per layer, each in the family's own folder:
 * - its face (BackendFace, in src/<family>/backend.ts): which targets name it, and the Backend it
 *   makes of them. The core reads only this, so reading a runbook loads no adapter code.
 *   src/runbook/targets.ts lists the faces and picks one for a runbook.
 * - its factory (BackendFamily, beside its adapters): the ports a live run drives, made from the
 *   same targets. src/wiring/families.ts lists the factories and looks one up by its face.
 * Adding a family is its folder and a line in each list; the simulator stands in for any family
 * from its face alone (src/sim/adapters/control-plane.ts).
 */

export interface IamStatement {
  Sid: string
  Effect: 'Allow'
  Action: string[]
  Resource: string[]
  Condition?: Record<string, Record<string, string[]>>
}

/** What a restart adapter acts on, for the permissions it needs. */
export type RestartIamNeeds = {with: 'ssm'; document: string} | {with: 'ec2-reboot'} | {with: 'ecs-replace'; cluster: string; service: string}

/** Where in the runbook something is wrong (a path the loader reports as file:line:column), and what. */
export interface BackendProblem {
  path: ReadonlyArray<PropertyKey>
  message: string
}

/** What of a step a backend may refuse: the fields that differ between families. */
export interface BackendStep {
  action: string
  pool?: string
  /** A restriction's traffic type. */
  type?: string
  headers?: Record<string, string[]>
  paths?: string[]
  slowStart?: unknown
  failoverPercent?: unknown
  /** A restriction's percent turned away. */
  share?: number
  /** A lift's steps. */
  schedule?: unknown
}

/** One place a load balancer splits traffic between pools by weight. */
export interface PoolSplit {
  /** What the step's changes are recorded against, and what ControlPlane.poolWeights takes: the ARN, the map. */
  at: string
  /** As a plan names it. */
  label: string
  /** The pools it can weigh. */
  pools: string[]
  locks: string[]
  iam: IamStatement[]
}

export interface Backend {
  /** The family's name, as its face and its factory go by it: `aws`, `haproxy`. */
  readonly family: string
  /** What a live run changes, for the question it asks first and the IAM policy: `AWS`, `HAProxy /run/haproxy/admin.sock`. */
  readonly name: string
  /** Every pool the targets name. */
  readonly pools: Set<string>
  /** The pools whose targets a cycle drains (target groups, HAProxy backends), in the runbook's order. */
  readonly targetPools: string[]
  /** The weighted sets a ramp moves traffic between, set → pool; undefined when there is nothing to ramp. */
  readonly weightedSets: Record<string, string> | undefined
  /** What one weighted set is called here, and where the runbook declares them: `weighted set` in targets.dns.sets. */
  readonly sets: {noun: string; plural: string; at: string}
  /** Where the weights live, as a plan names it: the record, or the ramp map on its socket. */
  readonly weightsLabel: string | undefined
  /** Where restrictions go, as a plan names it: the listener, or the restriction map on its socket. */
  readonly restrictionsLabel: string | undefined
  /** A pool as a plan names it: its target group ARN, or its HAProxy backend on its socket. */
  poolLabel(pool: string): string | undefined
  /** A pool and where it is, as a cycle's plan line opens: `mailbox (targetgroup/mail)`, `mailbox, haproxy backend mail (socket),`. */
  poolInPlan(pool: string): string
  /**
   * Whether the run's AWS settings (--region, --endpoint-url) say where it acts, so its question
   * names them: true where the family is reached through AWS's APIs.
   */
  readonly actsThroughAws: boolean
  /** How sluice reaches the family where no IAM is involved, for a policy with no statements: `over its Runtime API`. */
  readonly reachedWithoutIam?: string
  /** Where the runbook declares a pool's targets: targets.targetGroups.POOL, targets.haproxy.backends.POOL. */
  poolPath(pool: string): ReadonlyArray<PropertyKey>
  /** Where the runbook says which pool a weighted set sends to: targets.dns.sets.SET; on HAProxy the set is a backend, at its pool. */
  setPath(set: string): ReadonlyArray<PropertyKey>
  /**
   * Whether a pool of targetPools may have no servers of its own: a HAProxy backend may be the
   * sorry backend a ramp parks traffic on, while a target group is only ever cycled.
   */
  readonly poolsMayBeSorry: boolean
  /** What fronts the pools, for an assess step's levers, where the family settles it (AWS: an ALB); else the scenario says. */
  readonly frontedBy?: PoolFamily
  /** The lock names of what a run changes: two runs on one of them may not overlap. */
  locks: {weights(): string[]; pool(pool: string): string[]; restrictions(): string[]}
  /** The IAM statements each kind of change needs; none where the backend is not reached through IAM. */
  iam: {
    weights(): IamStatement[]
    /** A cycle's: `attributes` when it sets slow start or failover, `addresses` when a hook names a target's address ({ip}). */
    pool(pool: string, changes: {attributes: boolean; addresses: boolean}): IamStatement[]
    /** A cycle's restart or remediation through the family's own APIs (an SSM document, an EC2 reboot, an ECS service's tasks). */
    restart(pool: string, restart: RestartIamNeeds): IamStatement[]
    restrict(): IamStatement[]
    lift(): IamStatement[]
    /** What a live run reads of every target before it asks (its preflight, `plan --live`, `status`): the weights, each pool's targets, the rules. */
    read(): IamStatement[]
  }
  /**
   * Where the load balancer splits traffic between pools by weight, for a weighted-target-groups
   * step: AWS names it per step (`rule`, a listener rule's or listener's ARN), HAProxy has one
   * (its ramp map). What a step gave, or the problems with it.
   */
  poolSplit(rule: string | undefined, path: ReadonlyArray<PropertyKey>): PoolSplit | {problems: BackendProblem[]}
  /** What is wrong with the targets themselves, for this family. */
  problems(): BackendProblem[]
  /** What a step asks that this family cannot do, at paths under `path`. */
  stepProblems(step: BackendStep, path: ReadonlyArray<PropertyKey>): BackendProblem[]
}

/** Where a path of the runbook is, as an error names it: `file:line:column`, or the flag that gave it. */
export type Locate = (path: ReadonlyArray<PropertyKey>) => string

/**
 * A family as the core knows it: which runbooks' targets name it, and its face for them. Each
 * face reads only its own fields of the targets (`T`); `names` is true when one of them is there.
 */
export interface BackendFace<T = never> {
  readonly family: string
  names(targets: T): boolean
  backend(targets: T): Backend
}

/** Who a live run's calls act as, where the family has accounts (AWS: the account, and the caller's ARN). */
export interface CallerIdentity {
  account: string
  arn: string
}

/** What a family gives a live run: its part of the control plane, made from the runbook's targets. Parts the targets do not name are absent. */
export interface FamilyPorts {
  weights?: WeightsPort
  poolWeights?: (at: string) => WeightsPort
  pools: Map<string, PoolPort>
  restrictions?: RestrictionPort
  /** Gate metrics from the family's own source, when targets.metrics.source names it (CloudWatch, HAProxy's counters). */
  metrics?: MetricsPort
  /** Addresses the pools' own answers lack (an instance target group lists ids only), for hooks that name {ip}. */
  addresses?: AddressBook
  /** The ways the family restarts a target through its own APIs (SSM, an EC2 reboot, an ECS replacement), beside commands. */
  restarts?: RestartAdapters
  /** Lets go of what the ports hold (clients, connections) once the run is done with them. */
  close(): void
}

/**
 * A family's factory: what a live run drives, from the runbook's targets (`T`, the fields its face
 * reads) and the run's AWS settings (`S`: --region, --profile, --endpoint-url), which every run
 * has because its state store may be DynamoDB. A family not on AWS leaves the AWS hooks out.
 */
export interface BackendFamily<T = never, S = never> {
  readonly face: BackendFace<T>
  /**
   * What the family's AWS calls need of the run's settings, checked before its first call: the
   * region the targets' ARNs name (two are refused, at `locate`), and whether its calls need one.
   */
  awsNeeds?(targets: T, locate: Locate): {region: string | undefined; regional: boolean}
  /** Who the run acts as, for its confirmation and journal; null when the targets reach nothing that has accounts. */
  identity?(targets: T, settings: S, context: {locate: Locate; signal?: AbortSignal}): Promise<CallerIdentity | null>
  /** The ports of a live run, on `clock`; bad input in the targets is refused at `locate`. */
  controlPlane(targets: T, settings: S, context: {clock: Clock; locate: Locate}): FamilyPorts
}
