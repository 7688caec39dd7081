import type {GetMetricDataCommandInput} from '@aws-sdk/client-cloudwatch'
import {describe, expect, it} from 'vitest'
import {AlbPoolReadings, type AlbReadingsCalls} from '../../../src/aws/pool-readings.js'
import type {CloudWatchCalls} from '../../../src/aws/sdk.js'
import {accessDenied, expectDenied, fakeCalls} from './fake-calls.js'

const arn = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/api/0123456789abcdef'
const scope = {loadBalancer: 'app/api/1', targetGroup: arn}
const failoverKey = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'

/** ELBv2 with one target group of these settings and targets in these states. */
function elbv2(group: Record<string, number> | null, attributes: Record<string, string>, states: string[]) {
  return fakeCalls<AlbReadingsCalls['elbv2']>({
    describeTargetGroups: async () => ({TargetGroups: group ? [{TargetGroupArn: arn, TargetGroupName: 'api', ...group}] : []}),
    describeTargetGroupAttributes: async () => ({Attributes: Object.entries(attributes).map(([Key, Value]) => ({Key, Value}))}),
    describeTargetHealth: async () => ({
      TargetHealthDescriptions: states.map((State, k) => ({Target: {Id: `i-${k}`}, TargetHealth: {State: State as 'healthy'}})),
    }),
  })
}

/** CloudWatch answering each metric id, by minute offset from the span's start, with `series[id][minute]`. */
function cloudwatch(series: Record<string, Array<number | undefined>>) {
  return fakeCalls<CloudWatchCalls>({
    getMetricData: async (input) => {
      const start = input.StartTime!.getTime()
      const minutes = Math.round((input.EndTime!.getTime() - start) / 60_000)
      return {
        MetricDataResults: (input.MetricDataQueries ?? []).map((q) => {
          const points = Array.from({length: minutes}, (_, m) => [m, series[q.Id!]?.[m]] as const).filter(([, v]) => v !== undefined)
          return {Id: q.Id, Timestamps: points.map(([m]) => new Date(start + m * 60_000)), Values: points.map(([, v]) => v!)}
        }),
      }
    },
  })
}

const noMetrics = (): CloudWatchCalls => cloudwatch({}).calls

describe("an ALB pool's readings over fakes of their narrow interfaces", () => {
  it("reads the group's check and routing settings, with ELBv2's own defaults where the group does not say", async () => {
    const given = elbv2(
      {HealthCheckIntervalSeconds: 10, HealthCheckTimeoutSeconds: 4, UnhealthyThresholdCount: 3, HealthyThresholdCount: 2},
      {
        'slow_start.duration_seconds': '60',
        'deregistration_delay.timeout_seconds': '30',
        [failoverKey]: '50',
      },
      ['healthy', 'healthy', 'unhealthy'],
    )
    const settings = await new AlbPoolReadings({elbv2: given.calls, cloudwatch: noMetrics()}, scope).settings()
    expect(settings).toMatchObject({
      label: `target group api (${arn})`,
      family: 'alb',
      servers: 3,
      healthy: 2,
      interval: 10,
      checkTimeout: 4,
      fall: 3,
      rise: 2,
      slowStart: 60,
      drainDelay: 30,
      failoverPercent: 50,
    })
    const defaults = elbv2({}, {}, ['healthy'])
    expect(await new AlbPoolReadings({elbv2: defaults.calls, cloudwatch: noMetrics()}, scope).settings()).toMatchObject({
      interval: 30,
      checkTimeout: 5,
      fall: 2,
      rise: 5,
      slowStart: 0,
      drainDelay: 300,
      failoverPercent: null,
    })
    expect(given.made.map((m) => m.input)).toEqual([{TargetGroupArns: [arn]}, {TargetGroupArn: arn}, {TargetGroupArn: arn}])
  })

  it('says so when there is no such target group', async () => {
    const {calls} = elbv2(null, {}, [])
    await expect(new AlbPoolReadings({elbv2: calls, cloudwatch: noMetrics()}, scope).settings()).rejects.toThrow(
      `ELBv2 DescribeTargetGroups on target group ${arn} found no such target group`,
    )
  })

  it("reads each period's requests, errors (the targets' and the load balancer's), healthy targets and latency; periods with no requests are left out", async () => {
    const {calls, made} = cloudwatch({
      requests: [100, 0, 200],
      target5xx: [1, undefined, 4],
      elb5xx: [2, undefined, undefined],
      healthy: [3, 3, 2.5],
      healthyLeast: [3, 3, 2],
      healthyMost: [3, 3, 3],
      latency: [0.1, undefined, 0.3],
    })
    const start = new Date('2026-12-04T06:00:00Z')
    const periods = await new AlbPoolReadings({elbv2: elbv2({}, {}, []).calls, cloudwatch: calls}, scope).history(
      start,
      new Date(start.getTime() + 3 * 60_000),
      60,
    )
    const at = start.getTime() / 1000
    expect(periods).toEqual([
      {at, requests: 100, errors: 3, healthy: 3, rotationChanged: false, latency: 0.1},
      {at: at + 120, requests: 200, errors: 4, healthy: 2.5, rotationChanged: true, latency: 0.3},
    ])
    const queries = (made[0].input as GetMetricDataCommandInput).MetricDataQueries!
    expect(queries.find((q) => q.Id === 'elb5xx')!.MetricStat!.Metric!.Dimensions).toEqual([{Name: 'LoadBalancer', Value: 'app/api/1'}])
    expect(queries.find((q) => q.Id === 'requests')!.MetricStat!.Metric!.Dimensions).toEqual([
      {Name: 'LoadBalancer', Value: 'app/api/1'},
      {Name: 'TargetGroup', Value: 'targetgroup/api/0123456789abcdef'},
    ])
  })

  it('reads a long window in spans of 360 periods, one call each', async () => {
    const {calls, made} = cloudwatch({})
    const start = new Date('2026-12-04T00:00:00Z')
    await new AlbPoolReadings({elbv2: elbv2({}, {}, []).calls, cloudwatch: calls}, scope).history(start, new Date(start.getTime() + 13 * 3600_000), 60)
    const spans = made.map((m) => {
      const {StartTime, EndTime} = m.input as GetMetricDataCommandInput
      return (EndTime!.getTime() - StartTime!.getTime()) / 3600_000
    })
    expect(spans).toEqual([6, 6, 1])
  })

  it('refuses an answer whose timestamps and values do not pair one to one', async () => {
    const broken = fakeCalls<CloudWatchCalls>({
      getMetricData: async () => ({MetricDataResults: [{Id: 'requests', Timestamps: [new Date()], Values: [1, 2]}]}),
    })
    await expect(
      new AlbPoolReadings({elbv2: elbv2({}, {}, []).calls, cloudwatch: broken.calls}, scope).history(new Date(0), new Date(60_000), 60),
    ).rejects.toThrow('CloudWatch RequestCount (Sum) answered 1 timestamps for 2 values; CloudWatch pairs them one to one')
  })

  it('the pool now: demand and errors over the newest three minutes with data, and who is in rotation from target health', async () => {
    // The fake fills every minute of the quarter hour read; the newest three carry 120 requests each.
    const requests = Array.from({length: 15}, () => 120)
    const {calls} = cloudwatch({requests, target5xx: requests.map(() => 6)})
    const now = await new AlbPoolReadings({elbv2: elbv2({}, {}, ['healthy', 'healthy', 'draining']).calls, cloudwatch: calls}, scope).now()
    expect(now).toMatchObject({demand: 2, errorRate: 0.05, servers: 3, healthy: 2})
  })

  it('the pool now with no requests at all says there is nothing to place it by', async () => {
    await expect(new AlbPoolReadings({elbv2: elbv2({}, {}, ['healthy']).calls, cloudwatch: noMetrics()}, scope).now()).rejects.toThrow(
      `CloudWatch has no RequestCount for ${arn} in the last 15 minutes`,
    )
  })

  it('AccessDenied names the call, the resource and the IAM permission to grant', async () => {
    const denied = fakeCalls<AlbReadingsCalls['elbv2']>({describeTargetGroups: async () => Promise.reject(accessDenied())})
    await expectDenied(
      new AlbPoolReadings({elbv2: denied.calls, cloudwatch: noMetrics()}, scope).settings(),
      'elasticloadbalancing:DescribeTargetGroups',
      `target group ${arn}`,
    )
    const metrics = fakeCalls<CloudWatchCalls>({getMetricData: async () => Promise.reject(accessDenied())})
    await expectDenied(
      new AlbPoolReadings({elbv2: elbv2({}, {}, []).calls, cloudwatch: metrics.calls}, scope).history(new Date(0), new Date(60_000), 60),
      'cloudwatch:GetMetricData',
      'app/api/1 targetgroup/api/0123456789abcdef',
    )
  })
})
