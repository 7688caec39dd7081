import {actionOf} from '../actions/registry.js'
import {AwsClients, noRegion, resolveAws, type AwsOptions} from '../aws/clients.js'
import {CloudWatchMetrics} from '../aws/cloudwatch.js'
import {callerIdentity, type CallerIdentity} from '../aws/identity.js'
import {InstanceAddresses} from '../aws/instances.js'
import {Elbv2TargetGroup} from '../aws/elbv2.js'
import {PrometheusMetrics} from '../prometheus/metrics.js'
import {authorizationFromEnv} from '../prometheus/query.js'
import {Route53Dns} from '../aws/route53.js'
import {ForwardWeights} from '../aws/forward-weights.js'
import {ListenerRules} from '../aws/rules.js'
import type {ControlPlane, FreezePort, MetricsPort, PoolPort} from '../ports/control-plane.js'
import {InputError} from '../errors.js'
import type {Runbook} from '../loader/runbook.js'
import {WallClock} from '../local/wall-clock.js'
import {CommandHooks} from '../local/command-hooks.js'
import {haproxyPorts} from '../haproxy/ports.js'
import {backendOf} from '../runbook/targets.js'
import {scenarioAssessor} from './assessor.js'

export interface LiveControl {
  control: ControlPlane
  clients: AwsClients
}

/** The region an ARN names (`arn:aws:elasticloadbalancing:eu-west-1:…`), or none. */
export const arnRegion = (arn: string): string | undefined => /^arn:[^:]+:[^:]+:([a-z0-9-]+):/.exec(arn)?.[1]

/**
 * The region the runbook's ARNs name (`arn:aws:elasticloadbalancing:eu-west-1:123:…`), or none.
 * One run drives one region: ARNs in two are refused, naming both.
 */
export function runbookRegion(runbook: Runbook): string | undefined {
  const {targets} = runbook
  const arns: Array<{path: Array<string>; arn: string}> = [
    ...Object.entries(targets.targetGroups ?? {}).map(([pool, arn]) => ({path: ['targets', 'targetGroups', pool], arn})),
    ...(targets.listener ? [{path: ['targets', 'listener'], arn: targets.listener}] : []),
  ]
  const regions = new Map<string, string[]>()
  for (const {path, arn} of arns) {
    const region = arnRegion(arn)
    if (region) regions.set(region, [...(regions.get(region) ?? []), path.slice(1).join('.')])
  }
  if (regions.size > 1) {
    const first = arns.find((a) => /^arn:/.test(a.arn))!
    const named = [...regions].map(([region, paths]) => `${region} (${paths.join(', ')})`)
    throw new InputError(
      `${runbook.locate(first.path)}: targets: the runbook's ARNs name two regions, ${named.join(' and ')}; one run drives one region, so split the runbook`,
    )
  }
  return [...regions.keys()][0]
}

/**
 * A live run's AWS settings, checked before its first call (and its journal): a profile that
 * does not exist, ARNs in two regions, or no region at all for the regional calls it makes are
 * refused as bad input; so is a Prometheus header that cannot be sent. With no region configured, the runbook's ARNs give it.
 */
export async function liveAws(runbook: Runbook, aws: AwsOptions): Promise<AwsOptions> {
  // The Prometheus header too: one that cannot be sent is bad input before a journal or a lock.
  prometheusAuthorization(runbook)
  const resolved = await resolveAws({...aws, runbookRegion: runbookRegion(runbook)})
  const {targets} = runbook
  const regional = Object.keys(targets.targetGroups ?? {}).length > 0 || targets.listener !== undefined || targets.metrics?.source === 'cloudwatch'
  if (regional && !resolved.region) throw noRegion()
  return resolved
}

/** The Authorization header a Prometheus metrics source sends, from the variable the runbook names, checked (src/prometheus/query.ts). */
function prometheusAuthorization(runbook: Runbook): string | undefined {
  const m = runbook.targets.metrics
  if (m?.source !== 'prometheus' || m.url === undefined) return undefined
  return authorizationFromEnv(m.authorizationEnv, `${runbook.locate(['targets', 'metrics', 'authorizationEnv'])}: targets.metrics.authorizationEnv`, m.url)
}

/**
 * The AWS account and principal a live run on AWS acts as (STS GetCallerIdentity), for its
 * confirmation, its plan and its journal; null for a runbook whose targets are not on AWS (one
 * that drives HAProxy, or only freezes), which makes no AWS call of its own. A failure (no credentials, invalid ones, no answer) is the run's first
 * failure, before it reads or changes anything.
 */
export async function liveIdentity(runbook: Runbook, aws: AwsOptions, signal?: AbortSignal): Promise<CallerIdentity | null> {
  const {targets} = runbook
  // A freeze or an unfreeze touches sluice's own state only: it needs no AWS account.
  const onAws =
    targets.dns !== undefined ||
    Object.keys(targets.targetGroups ?? {}).length > 0 ||
    targets.listener !== undefined ||
    targets.metrics?.source === 'cloudwatch'
  if (backendOf(targets).family !== 'aws' || !onAws) return null
  const clients = new AwsClients({...aws, runbookRegion: runbookRegion(runbook)})
  try {
    return await callerIdentity(clients, signal)
  } finally {
    clients.destroy()
  }
}

/**
 * The control plane of a live run: the runbook's targets on AWS, or on one HAProxy over its
 * Runtime API (the loader allows one or the other), state in the local state directory.
 */
export function liveControlPlane(runbook: Runbook, aws: AwsOptions, options: {operator: string; freeze: FreezePort; runId?: string}): LiveControl {
  // Made for a HAProxy runbook too: the state store may still be DynamoDB, and callers destroy it.
  const clients = new AwsClients({...aws, runbookRegion: runbookRegion(runbook)})
  const clock = new WallClock()
  const {targets} = runbook
  const m = targets.metrics
  const haproxy = targets.haproxy ? haproxyPorts({...targets.haproxy, metrics: m?.source === 'haproxy'}, clock) : undefined
  const groups = haproxy?.pools ?? new Map<string, PoolPort>()
  for (const [pool, arn] of Object.entries(targets.targetGroups ?? {})) groups.set(pool, new Elbv2TargetGroup(clients, clock, pool, arn))

  let metrics: MetricsPort | undefined = haproxy?.metrics
  if (m?.source === 'cloudwatch') {
    if (!m.loadBalancer)
      throw new InputError(`${runbook.locate(['targets', 'metrics'])}: targets.metrics: live CloudWatch gates need loadBalancer (the app/NAME/ID dimension)`)
    metrics = new CloudWatchMetrics(clients, clock, {
      loadBalancer: m.loadBalancer,
      loadBalancers: m.loadBalancers ?? {},
      targetGroups: targets.targetGroups ?? {},
      groups,
    })
  } else if (m?.source === 'prometheus') {
    if (!m.url || !m.queries) throw new InputError(`${runbook.locate(['targets', 'metrics'])}: targets.metrics: a Prometheus source needs url and queries`)
    const authorization = prometheusAuthorization(runbook)
    metrics = new PrometheusMetrics(m.url, m.queries, clock, authorization)
  }

  return {
    clients,
    control: {
      clock,
      weights: targets.dns ? new Route53Dns(clients, clock, targets.dns.zone, targets.dns.record, targets.dns.type) : haproxy?.weights,
      poolWeights: haproxy ? haproxy.poolWeights : (at) => new ForwardWeights(clients, at, targets.targetGroups ?? {}),
      pools: groups,
      restrictions: targets.listener ? new ListenerRules(clients, targets.listener) : haproxy?.restrictions,
      metrics,
      assessor: scenarioAssessor(runbook),
      freeze: options.freeze,
      // An instance target group lists instance ids only: a hook that names {ip} gets the address from EC2.
      hooks: new CommandHooks(targets.targetGroups ? new InstanceAddresses(clients) : undefined),
      operator: options.operator,
      runId: options.runId,
      byHand: runbook.source.kind === 'flags',
    },
  }
}

/** The resources a runbook changes, as lock names: two runs on any of the same ones may not overlap. */
export function lockedResources(runbook: Runbook): string[] {
  return [...new Set(runbook.steps.flatMap((step) => actionOf(step).locks(step, runbook.targets)))]
}
