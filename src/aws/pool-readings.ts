import type {PoolNow, PoolPeriod, PoolReadings, PoolSettings} from '../ports/pool-readings.js'
import {checkDatapoint, nextMetricPage, targetGroupDimension} from './cloudwatch.js'
import {awsCall} from './errors.js'
import type {CloudWatchCalls, Elbv2Calls} from './sdk.js'

/** The calls an ALB pool's readings make: its target group from ELBv2, its metrics from CloudWatch. */
export interface AlbReadingsCalls {
  elbv2: Pick<Elbv2Calls, 'describeTargetGroups' | 'describeTargetGroupAttributes' | 'describeTargetHealth'>
  cloudwatch: CloudWatchCalls
}
import {FailedError} from '../errors.js'
import {checkPoolNow} from '../ports/reading-bounds.js'

/** What CloudWatch names the pool by: the load balancer's and the target group's dimensions. */
export interface PoolMetricsScope {
  /** `app/NAME/ID`. */
  loadBalancer: string
  /** The target group's ARN. */
  targetGroup: string
}

/** Periods one GetMetricData call asks for (six hours at one minute). */
const periodsPerCall = 360

/** What a pool's periods are read from, and what each can be (src/ports/reading-bounds.ts); a long window comes back in pages (NextToken). */
const metricNames = {
  requests: {name: 'RequestCount', stat: 'Sum', group: true, kind: 'count'},
  target5xx: {name: 'HTTPCode_Target_5XX_Count', stat: 'Sum', group: true, kind: 'count'},
  // The load balancer's own 5xx are counted per load balancer, not per target group.
  elb5xx: {name: 'HTTPCode_ELB_5XX_Count', stat: 'Sum', group: false, kind: 'count'},
  healthy: {name: 'HealthyHostCount', stat: 'Average', group: true, kind: 'servers'},
  // Where they differ, targets went in or out of rotation within the period (rotationChanged).
  healthyLeast: {name: 'HealthyHostCount', stat: 'Minimum', group: true, kind: 'servers'},
  healthyMost: {name: 'HealthyHostCount', stat: 'Maximum', group: true, kind: 'servers'},
  latency: {name: 'TargetResponseTime', stat: 'Average', group: true, kind: 'seconds'},
} as const

/**
 * A pool's metrics over [start, end) in periods of `period` seconds, from CloudWatch's
 * AWS/ApplicationELB namespace: requests, errors (the targets' 5xx and the load balancer's),
 * healthy targets (their mean, and whether it moved within the period) and mean response time. A period with no requests recorded is left out.
 */
async function readPoolHistory(
  cloudwatch: CloudWatchCalls,
  scope: PoolMetricsScope,
  start: Date,
  end: Date,
  period: number,
  signal?: AbortSignal,
): Promise<PoolPeriod[]> {
  const group = targetGroupDimension(scope.targetGroup)
  const source = poolSource(scope)
  const queries = Object.entries(metricNames).map(([id, m]) => ({
    Id: id,
    MetricStat: {
      Metric: {
        Namespace: 'AWS/ApplicationELB',
        MetricName: m.name,
        Dimensions: [{Name: 'LoadBalancer', Value: scope.loadBalancer}, ...(m.group ? [{Name: 'TargetGroup', Value: group}] : [])],
      },
      Period: period,
      Stat: m.stat,
    },
  }))
  const series: Record<string, Map<number, number>> = Object.fromEntries(Object.keys(metricNames).map((id) => [id, new Map<number, number>()]))
  // A long window is read in spans of a few hundred periods: GetMetricData returns at most 100,800
  // points a call (fifteen days of five metrics at one minute is more), and each call has its own
  // deadline (awsDeadlines), which one span answers well inside, however long the window.
  const span = periodsPerCall * period * 1000
  for (let from = start.getTime(); from < end.getTime(); from += span) {
    const to = new Date(Math.min(end.getTime(), from + span))
    let token: string | undefined
    const pages = new Set<string>()
    do {
      const out = await awsCall(
        'CloudWatch',
        'GetMetricData',
        `${scope.loadBalancer} ${group}`,
        (s) => cloudwatch.getMetricData({MetricDataQueries: queries, StartTime: new Date(from), EndTime: to, NextToken: token}, s),
        signal,
      )
      for (const r of out.MetricDataResults ?? []) {
        const into = r.Id === undefined ? undefined : series[r.Id]
        if (into === undefined) continue
        const metric = metricNames[r.Id as keyof typeof metricNames]
        const times = r.Timestamps ?? []
        const values = r.Values ?? []
        const what = `CloudWatch ${metric.name} (${metric.stat})`
        if (times.length !== values.length)
          throw new FailedError(`${source}: ${what} answered ${times.length} timestamps for ${values.length} values; CloudWatch pairs them one to one`)
        times.forEach((t, i) => {
          const at = Math.floor(new Date(t).getTime() / 1000)
          if (!Number.isFinite(at)) throw new FailedError(`${source}: ${what} answered a timestamp that is no time`)
          into.set(at, checkDatapoint(metric.kind, values[i], period, {source, what: `${what} at ${new Date(at * 1000).toISOString()}`}))
        })
      }
      token = nextMetricPage(out.NextToken, pages, source)
    } while (token)
  }
  return [...series.requests.entries()]
    .filter(([, requests]) => requests > 0)
    .sort(([a], [b]) => a - b)
    .map(([at, requests]) => ({
      at,
      requests,
      errors: (series.target5xx.get(at) ?? 0) + (series.elb5xx.get(at) ?? 0),
      healthy: series.healthy.get(at) ?? null,
      rotationChanged: series.healthyLeast.get(at) !== series.healthyMost.get(at),
      latency: series.latency.get(at) ?? null,
    }))
}

const poolSource = (scope: PoolMetricsScope): string => `target group ${scope.targetGroup} and CloudWatch AWS/ApplicationELB for ${scope.loadBalancer}`

const attribute = (attrs: Array<{Key?: string; Value?: string}>, key: string): string | undefined => attrs.find((a) => a.Key === key)?.Value

/**
 * An ALB target group as calibrate and assess read it: its check and routing settings from ELBv2
 * (DescribeTargetGroups, DescribeTargetGroupAttributes, DescribeTargetHealth), its metrics from
 * CloudWatch (GetMetricData on AWS/ApplicationELB). Read-only.
 */
export class AlbPoolReadings implements PoolReadings {
  readonly source: string
  readonly family = 'alb'

  constructor(
    private readonly calls: AlbReadingsCalls,
    private readonly scope: PoolMetricsScope,
  ) {
    this.source = poolSource(scope)
  }

  async settings(signal?: AbortSignal): Promise<PoolSettings> {
    const arn = this.scope.targetGroup
    const label = `target group ${arn}`
    const groups = await awsCall('ELBv2', 'DescribeTargetGroups', label, (s) => this.calls.elbv2.describeTargetGroups({TargetGroupArns: [arn]}, s), signal)
    const group = groups.TargetGroups?.[0]
    if (!group) throw new FailedError(`ELBv2 DescribeTargetGroups on ${label} found no such target group`)
    const attrs = await awsCall(
      'ELBv2',
      'DescribeTargetGroupAttributes',
      label,
      (s) => this.calls.elbv2.describeTargetGroupAttributes({TargetGroupArn: arn}, s),
      signal,
    )
    const targets = await this.targets(signal)
    const a = attrs.Attributes ?? []
    const failover = attribute(a, failoverKey)
    return {
      label: `target group ${group.TargetGroupName ?? arn} (${arn})`,
      family: 'alb',
      servers: targets.length,
      healthy: targets.filter((t) => t === 'healthy').length,
      // ELBv2's own defaults where a group does not say (an HTTP target group's).
      interval: group.HealthCheckIntervalSeconds ?? 30,
      checkTimeout: group.HealthCheckTimeoutSeconds ?? 5,
      fall: group.UnhealthyThresholdCount ?? 2,
      rise: group.HealthyThresholdCount ?? 5,
      slowStart: Number(attribute(a, 'slow_start.duration_seconds') ?? 0),
      drainDelay: Number(attribute(a, 'deregistration_delay.timeout_seconds') ?? 300),
      failoverPercent: failover === undefined || failover === 'off' ? null : Number(failover),
      names: {
        interval: 'HealthCheckIntervalSeconds',
        checkTimeout: 'HealthCheckTimeoutSeconds',
        fall: 'UnhealthyThresholdCount',
        rise: 'HealthyThresholdCount',
        slowStart: 'slow_start.duration_seconds',
        drainDelay: 'deregistration_delay.timeout_seconds',
        failoverPercent: failoverKey,
      },
    }
  }

  history(start: Date, end: Date, period: number, signal?: AbortSignal): Promise<PoolPeriod[]> {
    return readPoolHistory(this.calls.cloudwatch, this.scope, start, end, period, signal)
  }

  /**
   * Demand and errors over the newest three minutes CloudWatch has (its figures arrive a minute or
   * two late, so the last quarter hour is read), and who is in rotation now from target health.
   */
  async now(signal?: AbortSignal): Promise<PoolNow> {
    const end = new Date()
    const periods = await this.history(new Date(end.getTime() - 15 * 60_000), end, 60, signal)
    const newest = periods.slice(-3)
    if (newest.length === 0)
      throw new FailedError(`CloudWatch has no RequestCount for ${this.scope.targetGroup} in the last 15 minutes: nothing to say where the pool is now`)
    const requests = newest.reduce((s, p) => s + p.requests, 0)
    const targets = await this.targets(signal)
    // The load balancer's own 5xx are not in the group's RequestCount: a share past all is all.
    return checkPoolNow(
      {
        at: newest.at(-1)!.at,
        demand: requests / (newest.length * 60),
        errorRate: Math.min(1, newest.reduce((s, p) => s + p.errors, 0) / requests),
        servers: targets.length,
        healthy: targets.filter((t) => t === 'healthy').length,
      },
      this.source,
      {
        demand: `CloudWatch RequestCount (Sum) over the newest ${newest.length} minutes`,
        errorRate: 'CloudWatch HTTPCode_Target_5XX_Count and HTTPCode_ELB_5XX_Count over RequestCount',
        servers: 'the targets of DescribeTargetHealth',
        healthy: 'the healthy targets of DescribeTargetHealth',
      },
    )
  }

  private async targets(signal?: AbortSignal): Promise<string[]> {
    const out = await awsCall(
      'ELBv2',
      'DescribeTargetHealth',
      `target group ${this.scope.targetGroup}`,
      (s) => this.calls.elbv2.describeTargetHealth({TargetGroupArn: this.scope.targetGroup}, s),
      signal,
    )
    return (out.TargetHealthDescriptions ?? []).map((d) => d.TargetHealth?.State ?? 'unknown')
  }
}

const failoverKey = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'
