import {InputError} from '../errors.js'
import type {BackendFamily} from '../ports/backend.js'
import type {MetricsPort, PoolPort} from '../ports/control-plane.js'
import type {OpenedReadings} from '../ports/pool-readings.js'
import {awsFace, type AwsTargets} from './backend.js'
import {AwsClients, type AwsOptions} from './clients.js'
import {CloudWatchMetrics} from './cloudwatch.js'
import {Elbv2TargetGroup} from './elbv2.js'
import {ForwardWeights} from './forward-weights.js'
import {callerIdentity} from './identity.js'
import {InstanceAddresses} from './instances.js'
import {awsRestarts} from './restarts/adapters.js'
import {AlbPoolReadings, type PoolMetricsScope} from './pool-readings.js'
import {arnRegion, targetsRegion} from './region.js'
import {Route53Dns} from './route53.js'
import {ListenerRules} from './rules.js'
import {sdkCalls} from './sdk.js'

/** What AWS's factory reads of a runbook's targets: its face's fields, and where the gates' metrics come from. */
export interface AwsRunTargets extends AwsTargets {
  metrics?: {source: string; loadBalancer?: string; loadBalancers?: Record<string, string>}
}

/** Whether the targets reach anything on AWS: a runbook that only freezes touches sluice's own state, and needs no account. */
const onAws = (targets: AwsRunTargets): boolean =>
  targets.dns !== undefined || Object.keys(targets.targetGroups ?? {}).length > 0 || targets.listener !== undefined || targets.metrics?.source === 'cloudwatch'

/**
 * AWS as a live run drives it: the weighted Route 53 record, the ELBv2 target groups, the
 * listener's rules and a rule's weighted forward, CloudWatch gate metrics, and EC2 for the
 * addresses an instance target group does not list. Every call goes through one set of clients
 * (src/aws/clients.ts: the run's settings, deadlines, retries), in the region the ARNs name.
 */
export const awsFamily: BackendFamily<AwsRunTargets, AwsOptions> = {
  face: awsFace,
  awsNeeds: (targets, locate) => ({
    region: targetsRegion(targets, locate),
    // Route 53 is global; target groups, listeners and CloudWatch are regional.
    regional: Object.keys(targets.targetGroups ?? {}).length > 0 || targets.listener !== undefined || targets.metrics?.source === 'cloudwatch',
  }),
  async identity(targets, aws, {locate, signal}) {
    if (!onAws(targets)) return null
    const clients = new AwsClients({...aws, runbookRegion: targetsRegion(targets, locate)})
    try {
      return await callerIdentity(sdkCalls(clients).sts, signal)
    } finally {
      clients.destroy()
    }
  },
  controlPlane(targets, aws, {clock, locate}) {
    const clients = new AwsClients({...aws, runbookRegion: targetsRegion(targets, locate)})
    const calls = sdkCalls(clients)
    const {dns, listener, targetGroups = {}} = targets
    const pools = new Map<string, PoolPort>()
    for (const [pool, arn] of Object.entries(targetGroups)) pools.set(pool, new Elbv2TargetGroup(calls.elbv2, clock, pool, arn))
    let metrics: MetricsPort | undefined
    const m = targets.metrics
    if (m?.source === 'cloudwatch') {
      if (!m.loadBalancer)
        throw new InputError(`${locate(['targets', 'metrics'])}: targets.metrics: live CloudWatch gates need loadBalancer (the app/NAME/ID dimension)`)
      metrics = new CloudWatchMetrics(calls.cloudwatch, clock, {
        loadBalancer: m.loadBalancer,
        loadBalancers: m.loadBalancers ?? {},
        targetGroups,
        groups: pools,
      })
    }
    return {
      weights: dns ? new Route53Dns(calls.route53, clock, dns.zone, dns.record, dns.type) : undefined,
      poolWeights: (at) => new ForwardWeights(calls.elbv2, at, targetGroups),
      pools,
      restrictions: listener ? new ListenerRules(calls.elbv2, listener) : undefined,
      metrics,
      // An instance target group lists instance ids only: a hook that names {ip} gets the address from EC2.
      addresses: targets.targetGroups ? new InstanceAddresses(calls.ec2) : undefined,
      restarts: targets.targetGroups ? awsRestarts(calls, clock) : undefined,
      close: () => clients.destroy(),
    }
  },
}

/** An ALB target group's readings for calibrate and assess: ELBv2 and CloudWatch, in the region its ARN names. */
export function albPoolReadings(scope: PoolMetricsScope, aws: AwsOptions): OpenedReadings {
  const clients = new AwsClients({...aws, runbookRegion: arnRegion(scope.targetGroup)})
  return {
    readings: new AlbPoolReadings(sdkCalls(clients), scope),
    pool: /targetgroup\/([^/]+)\//.exec(scope.targetGroup)?.[1] ?? scope.targetGroup,
    close: () => clients.destroy(),
  }
}
