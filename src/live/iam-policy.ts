import type {IamStatement} from '../ports/backend.js'
import {actionOf} from '../actions/registry.js'
import type {Runbook} from '../loader/runbook.js'
import {backendOf} from '../runbook/targets.js'

/**
 * The least-privilege IAM policy for a runbook: the statements each of its steps needs (each
 * action says which), and the metric reads its gates make. Statements with one Sid are merged,
 * so two cycles on two groups give one statement over both.
 *
 * Not in it: sts:GetCallerIdentity, which every live run and `plan --live` calls first to name the
 * account it acts in. AWS requires no permission for it (it answers even where a policy denies it
 * explicitly), so a statement for it would grant nothing.
 */
export function iamPolicy(runbook: Runbook): {Version: string; Statement: IamStatement[]} {
  const statements = new Map<string, IamStatement>()
  const add = (s: IamStatement) => {
    const held = statements.get(s.Sid)
    if (!held) return statements.set(s.Sid, {...s, Action: [...s.Action], Resource: [...s.Resource]})
    for (const a of s.Action) if (!held.Action.includes(a)) held.Action.push(a)
    for (const r of s.Resource) if (!held.Resource.includes(r)) held.Resource.push(r)
  }
  for (const s of backendOf(runbook.targets).iam.read()) add(s)
  for (const step of runbook.steps) for (const s of actionOf(step).iam(step, runbook.targets)) add(s)
  for (const s of gateStatements(runbook)) add(s)
  return {Version: '2012-10-17', Statement: [...statements.values()]}
}

/** An IAM action that only reads: Describe*, List*, Get*. */
const reads = (action: string): boolean => /^[a-z0-9-]+:(Describe|List|Get)[A-Za-z]*$/.test(action)

/**
 * The runbook's policy with only its reads: what `sluice plan --live` and `sluice status` call,
 * and a gate's metric reads, for a role that may look and never change.
 */
export function readOnlyPolicy(runbook: Runbook): {Version: string; Statement: IamStatement[]} {
  const policy = iamPolicy(runbook)
  const Statement = policy.Statement.map((s) => ({...s, Action: s.Action.filter(reads)})).filter((s) => s.Action.length > 0)
  return {...policy, Statement}
}

/**
 * What to say instead of a policy with no statements (which IAM would refuse anyway): the
 * runbook makes no AWS call, e.g. because it drives HAProxy. Null when it needs a policy.
 */
export function noPolicyNeeded(runbook: Runbook, policy: ReturnType<typeof iamPolicy>): string | null {
  if (policy.Statement.length > 0) return null
  const backend = backendOf(runbook.targets)
  const on = backend.reachedWithoutIam ? ` (it drives ${backend.name} ${backend.reachedWithoutIam})` : ''
  return `${runbook.name} makes no AWS calls${on}: no AWS permissions are needed`
}

/** Gates read metrics: CloudWatch's GetMetricData, and target health for healthy-targets gates. */
function gateStatements(runbook: Runbook): IamStatement[] {
  const {targetGroups, metrics} = runbook.targets
  const gates = runbook.steps.flatMap((s) => ('gate' in s && s.gate ? [s.gate] : []))
  const statements: IamStatement[] = []
  if (targetGroups && gates.some((g) => g.metric === 'healthy-targets'))
    statements.push({
      Sid: 'ReadTargetHealth',
      Effect: 'Allow',
      Action: ['elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:DescribeTargetGroupAttributes'],
      Resource: ['*'],
    })
  // A cycle's headroom guard reads the request rate through the same metrics source.
  const readsMetrics = gates.some((g) => g.metric !== 'healthy-targets') || runbook.steps.some((s) => s.action === 'cycle' && s.headroom !== undefined)
  if (metrics?.source === 'cloudwatch' && readsMetrics)
    statements.push({Sid: 'GateMetrics', Effect: 'Allow', Action: ['cloudwatch:GetMetricData'], Resource: ['*']})
  return statements
}
