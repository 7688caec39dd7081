import type {MetricDataQuery} from '@aws-sdk/client-cloudwatch'
import type {Clock, MetricKind, MetricsPort, PoolPort, Reading} from '../ports/control-plane.js'
import {checkGateReading, readingBounds, within} from '../ports/reading-bounds.js'
import {healthyShare} from '../ports/target-groups.js'
import type {AwsClients} from './clients.js'
import {awsCall} from './errors.js'

/** ALB metrics come in one-minute points, so a window is a whole number of minutes. */
const period = 60

/** `targetgroup/name/id` from a target group ARN: the TargetGroup dimension CloudWatch uses. */
export function targetGroupDimension(arn: string): string {
  const at = arn.indexOf('targetgroup/')
  return at >= 0 ? arn.slice(at) : arn
}

export interface CloudWatchScope {
  /** `app/name/id`: the LoadBalancer dimension. */
  loadBalancer: string
  /** Pool → `app/name/id` when pools sit behind different load balancers. */
  loadBalancers: Record<string, string>
  /** Pool → target group ARN, to scope a pool's metrics to its group. */
  targetGroups: Record<string, string>
  /** Pool → the group port, for healthy-targets. */
  groups: Map<string, PoolPort>
}

/**
 * Gate metrics from CloudWatch's AWS/ApplicationELB namespace. sluice computes the ratios itself.
 * No RequestCount point in the window means no requests, which is no data, never zero errors.
 * Scoped to a pool with a target group, errors are the targets' 5xx over the group's requests
 * (errors the load balancer itself answers are only published per load balancer).
 */
export class CloudWatchMetrics implements MetricsPort {
  readonly label: string

  constructor(
    private readonly clients: AwsClients,
    private readonly clock: Clock,
    private readonly scope: CloudWatchScope,
  ) {
    this.label = `CloudWatch AWS/ApplicationELB ${scope.loadBalancer}`
  }

  async read(kind: MetricKind, windowSeconds: number, pool?: string, signal?: AbortSignal): Promise<Reading> {
    if (kind === 'healthy-targets') return {value: await healthyShare(this.scope.groups, pool, signal), requests: null}
    const loadBalancer = (pool && this.scope.loadBalancers[pool]) || this.scope.loadBalancer
    const targetGroup = pool && this.scope.targetGroups[pool] ? targetGroupDimension(this.scope.targetGroups[pool]) : undefined
    const dimensions = [{Name: 'LoadBalancer', Value: loadBalancer}, ...(targetGroup ? [{Name: 'TargetGroup', Value: targetGroup}] : [])]
    const query = (id: string, metric: string, stat: string): MetricDataQuery => ({
      Id: id,
      MetricStat: {Metric: {Namespace: 'AWS/ApplicationELB', MetricName: metric, Dimensions: dimensions}, Period: period, Stat: stat},
      ReturnData: true,
    })
    const queries = [query('requests', 'RequestCount', 'Sum')]
    if (kind === 'error-rate') {
      queries.push(query('target5xx', 'HTTPCode_Target_5XX_Count', 'Sum'))
      if (!targetGroup) queries.push(query('elb5xx', 'HTTPCode_ELB_5XX_Count', 'Sum'))
    }
    if (kind === 'latency-p99') queries.push(query('p99', 'TargetResponseTime', 'p99'))

    const window = Math.max(period, Math.ceil(windowSeconds / period) * period)
    const end = new Date(this.clock.now() * 1000)
    const start = new Date(end.getTime() - window * 1000)
    const {GetMetricDataCommand} = await import('@aws-sdk/client-cloudwatch')
    const client = await this.clients.cloudwatch()
    const values: Record<string, number[]> = {}
    let token: string | undefined
    do {
      const out = await awsCall(
        'CloudWatch',
        'GetMetricData',
        `${loadBalancer}${targetGroup ? ` ${targetGroup}` : ''}`,
        (abortSignal) => client.send(new GetMetricDataCommand({MetricDataQueries: queries, StartTime: start, EndTime: end, NextToken: token}), {abortSignal}),
        signal,
      )
      for (const r of out.MetricDataResults ?? []) {
        const metric = queries.find((q) => q.Id === r.Id)?.MetricStat
        if (!metric) continue
        // Each datapoint checked before it is summed: CloudWatch answers back whatever was put (−5, 1e300).
        const what = `CloudWatch ${metric.Metric!.MetricName} (${metric.Stat})`
        const checked = (r.Values ?? []).map((v) =>
          metric.Stat === 'p99'
            ? within(v, 0, readingBounds.maxSeconds, {source: this.label, what}, `seconds to an answer, 0 to ${readingBounds.maxSeconds}`)
            : within(
                v,
                0,
                readingBounds.maxRps * period,
                {source: this.label, what},
                `a count of requests a minute, 0 to ${(readingBounds.maxRps * period).toExponential()}`,
              ),
        )
        values[r.Id!] = [...(values[r.Id!] ?? []), ...checked]
      }
      token = out.NextToken
    } while (token)

    const sum = (id: string) => (values[id] ?? []).reduce((a, b) => a + b, 0)
    const requests = sum('requests')
    const at = {source: this.label, what: `${kind} from CloudWatch AWS/ApplicationELB`}
    if (requests <= 0) return {value: null, requests: 0}
    if (kind === 'request-rate') return checkGateReading(kind, {value: requests / window, requests}, at, window)
    // The load balancer's own 5xx are not in a target group's RequestCount: a share past all is all.
    if (kind === 'error-rate')
      return checkGateReading(kind, {value: Math.min(100, ((sum('target5xx') + sum('elb5xx')) / requests) * 100), requests}, at, window)
    const p99 = values.p99 ?? []
    return checkGateReading(kind, {value: p99.length === 0 ? null : p99.reduce((a, b) => Math.max(a, b), 0) * 1000, requests}, at, window)
  }
}
