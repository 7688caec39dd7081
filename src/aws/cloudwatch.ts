import type {MetricDataQuery} from '@aws-sdk/client-cloudwatch'
import type {Clock, MetricKind, MetricsPort, PoolPort, Reading} from '../ports/control-plane.js'
import {checkGateReading, ImpossibleReading, readingBounds, within} from '../ports/reading-bounds.js'
import {healthyShare} from '../ports/target-groups.js'
import {FailedError} from '../errors.js'
import {awsCall} from './errors.js'
import type {CloudWatchCalls} from './sdk.js'

/** ALB metrics come in one-minute points, so a window is a whole number of minutes. */
const period = 60

/**
 * One datapoint checked against what its metric can be: a count of requests in the period one
 * pool could be sent (a billion a second at most), a count of servers in rotation within a pool's
 * most, seconds to an answer within a day. CloudWatch takes whatever is put (−5, 1e300) and
 * answers it back; sluice judges nothing on it.
 */
export function checkDatapoint(kind: 'count' | 'servers' | 'seconds', value: unknown, period: number, at: {source: string; what: string}): number {
  // Not a number at all (the SDK gives what the answer held): the value as it came, in the error.
  if (typeof value !== 'number')
    throw new ImpossibleReading(at.source, at.what, value, kind === 'count' ? 'a count of requests' : kind === 'servers' ? 'a count of servers' : 'seconds')
  if (kind === 'count')
    return within(value, 0, readingBounds.maxRps * period, at, `a count of requests in ${period} s, 0 to ${(readingBounds.maxRps * period).toExponential()}`)
  if (kind === 'servers') return within(value, 0, readingBounds.maxServers, at, `servers in rotation, 0 to ${readingBounds.maxServers}`)
  return within(value, 0, readingBounds.maxSeconds, at, `seconds to an answer, 0 to ${readingBounds.maxSeconds}`)
}

/**
 * Pages of one GetMetricData span sluice follows at the most. A span is one page in practice (its
 * points are well under a call's 100,800); an endpoint that hands out NextTokens without end, or
 * the same one again, must not hold a run for ever.
 */
export const maxMetricPages = 100

/** The next page's token, or the error saying why there is none to follow: the same token twice, or past maxMetricPages. */
export function nextMetricPage(token: string | undefined, seen: Set<string>, what: string): string | undefined {
  if (token === undefined || token === '') return undefined
  if (seen.has(token)) throw new FailedError(`${what}: GetMetricData answered a NextToken it had already given; sluice stopped following its pages`)
  if (seen.size + 1 >= maxMetricPages)
    throw new FailedError(`${what}: GetMetricData answered more than ${maxMetricPages} pages for one span; sluice stopped following them`)
  seen.add(token)
  return token
}

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
    private readonly cloudwatch: CloudWatchCalls,
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
    const values: Record<string, number[]> = {}
    let token: string | undefined
    const pages = new Set<string>()
    do {
      const out = await awsCall(
        'CloudWatch',
        'GetMetricData',
        `${loadBalancer}${targetGroup ? ` ${targetGroup}` : ''}`,
        (abortSignal) => this.cloudwatch.getMetricData({MetricDataQueries: queries, StartTime: start, EndTime: end, NextToken: token}, abortSignal),
        signal,
      )
      for (const r of out.MetricDataResults ?? []) {
        const metric = queries.find((q) => q.Id === r.Id)?.MetricStat
        if (!metric) continue
        // Each datapoint checked before it is summed: CloudWatch answers back whatever was put (−5, 1e300).
        const what = `CloudWatch ${metric.Metric!.MetricName} (${metric.Stat})`
        const checked = (r.Values ?? []).map((v) => checkDatapoint(metric.Stat === 'p99' ? 'seconds' : 'count', v, period, {source: this.label, what}))
        values[r.Id!] = [...(values[r.Id!] ?? []), ...checked]
      }
      token = nextMetricPage(out.NextToken, pages, this.label)
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
