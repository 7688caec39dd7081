/**
 * A backend is one family of control plane a runbook's targets can name: AWS (a weighted Route 53
 * record, ELBv2 target groups, a listener's rules) or one HAProxy over its Runtime API. Runbooks
 * and actions speak of weights, pools and restrictions; the backend says what those are called
 * there, what a run locks, which IAM it needs, and what it cannot do, so that no action, plan or
 * loader branches on the family. The families are src/aws/backend.ts and src/haproxy/backend.ts;
 * src/runbook/targets.ts picks one for a runbook.
 */

export interface IamStatement {
  Sid: string
  Effect: 'Allow'
  Action: string[]
  Resource: string[]
  Condition?: Record<string, Record<string, string[]>>
}

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
  readonly family: 'aws' | 'haproxy'
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
  /** Where the runbook declares a pool's targets: targets.targetGroups.POOL, targets.haproxy.backends.POOL. */
  poolPath(pool: string): ReadonlyArray<PropertyKey>
  /** The lock names of what a run changes: two runs on one of them may not overlap. */
  locks: {weights(): string[]; pool(pool: string): string[]; restrictions(): string[]}
  /** The IAM statements each kind of change needs; none where the backend is not reached through IAM. */
  iam: {
    weights(): IamStatement[]
    /** A cycle's: `attributes` when it sets slow start or failover, `addresses` when a hook names a target's address ({ip}). */
    pool(pool: string, changes: {attributes: boolean; addresses: boolean}): IamStatement[]
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
