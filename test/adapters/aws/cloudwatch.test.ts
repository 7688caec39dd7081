import type {GetMetricDataCommandInput, MetricDataResult} from '@aws-sdk/client-cloudwatch'
import {describe, expect, it} from 'vitest'
import {CloudWatchMetrics, maxMetricPages} from '../../../src/aws/cloudwatch.js'
import type {CloudWatchCalls} from '../../../src/aws/sdk.js'
import {FakeClock, FakeGroup} from '../../helpers/fakes.js'
import {accessDenied, expectDenied, fakeCalls} from './fake-calls.js'

const blueArn = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/blue/0123456789abcdef'

/** CloudWatch answering each metric id with these values, in one page unless `pages` says more. */
function cloudwatch(values: Record<string, number[]>, pages: Array<string | undefined> = [undefined]) {
  let page = 0
  return fakeCalls<CloudWatchCalls>({
    getMetricData: async (input) => {
      const results: MetricDataResult[] = (input.MetricDataQueries ?? []).map((q) => ({Id: q.Id, Values: values[q.Id!] ?? [], Timestamps: []}))
      const NextToken = pages[page++]
      return {MetricDataResults: results, ...(NextToken ? {NextToken} : {})}
    },
  })
}

function metrics(calls: CloudWatchCalls, groups = new Map()) {
  const clock = new FakeClock()
  clock.t = 1_700_000_000
  return new CloudWatchMetrics(calls, clock, {loadBalancer: 'app/api/1', loadBalancers: {green: 'app/api-green/2'}, targetGroups: {blue: blueArn}, groups})
}

const queries = (input: unknown) => (input as GetMetricDataCommandInput).MetricDataQueries!

describe('CloudWatch gate metrics over a fake of their narrow interface', () => {
  it("error-rate over the whole load balancer counts the targets' 5xx and the load balancer's own, over its requests", async () => {
    const {calls, made} = cloudwatch({requests: [600, 400], target5xx: [10], elb5xx: [10]})
    expect(await metrics(calls).read('error-rate', 120)).toEqual({value: 2, requests: 1000})
    const asked = queries(made[0].input)
    expect(asked.map((q) => [q.Id, q.MetricStat!.Metric!.MetricName, q.MetricStat!.Stat])).toEqual([
      ['requests', 'RequestCount', 'Sum'],
      ['target5xx', 'HTTPCode_Target_5XX_Count', 'Sum'],
      ['elb5xx', 'HTTPCode_ELB_5XX_Count', 'Sum'],
    ])
    expect(asked[0].MetricStat!.Metric!.Dimensions).toEqual([{Name: 'LoadBalancer', Value: 'app/api/1'}])
    const {StartTime, EndTime} = made[0].input as GetMetricDataCommandInput
    expect((EndTime!.getTime() - StartTime!.getTime()) / 1000).toBe(120)
  })

  it("scoped to a pool with a target group, reads the group's own dimension and leaves the load balancer's 5xx out", async () => {
    const {calls, made} = cloudwatch({requests: [100], target5xx: [3]})
    expect(await metrics(calls).read('error-rate', 60, 'blue')).toEqual({value: 3, requests: 100})
    const asked = queries(made[0].input)
    expect(asked.map((q) => q.Id)).toEqual(['requests', 'target5xx'])
    expect(asked[0].MetricStat!.Metric!.Dimensions).toEqual([
      {Name: 'LoadBalancer', Value: 'app/api/1'},
      {Name: 'TargetGroup', Value: 'targetgroup/blue/0123456789abcdef'},
    ])
  })

  it("a pool behind its own load balancer reads that one's dimension; a window rounds up to whole minutes", async () => {
    const {calls, made} = cloudwatch({requests: [120, 120]})
    expect(await metrics(calls).read('request-rate', 90, 'green')).toEqual({value: 2, requests: 240})
    expect(queries(made[0].input)[0].MetricStat!.Metric!.Dimensions).toEqual([{Name: 'LoadBalancer', Value: 'app/api-green/2'}])
  })

  it('latency-p99 is the worst minute, in milliseconds; no requests is no data, never zero', async () => {
    expect(await metrics(cloudwatch({requests: [10, 10], p99: [0.2, 0.45]}).calls).read('latency-p99', 120)).toEqual({value: 450, requests: 20})
    expect(await metrics(cloudwatch({}).calls).read('error-rate', 60)).toEqual({value: null, requests: 0})
  })

  it('healthy-targets comes from the target groups, with no CloudWatch call', async () => {
    const blue = new FakeGroup('blue', ['a', 'b', 'c', 'd'])
    blue.sick.add('d')
    const {calls, made} = cloudwatch({})
    expect(await metrics(calls, new Map([['blue', blue]])).read('healthy-targets', 60, 'blue')).toEqual({value: 75, requests: null})
    expect(made).toEqual([])
  })

  it('follows NextToken, and stops at a token it was given before, naming the source', async () => {
    const paged = cloudwatch({requests: [50]}, ['next', undefined])
    expect(await metrics(paged.calls).read('request-rate', 60)).toEqual({value: 100 / 60, requests: 100})
    expect(paged.made.map((m) => (m.input as GetMetricDataCommandInput).NextToken)).toEqual([undefined, 'next'])
    const looping = cloudwatch({requests: [50]}, ['same', 'same', 'same'])
    await expect(metrics(looping.calls).read('request-rate', 60)).rejects.toThrow(
      'CloudWatch AWS/ApplicationELB app/api/1: GetMetricData answered a NextToken it had already given; sluice stopped following its pages',
    )
    const endless = cloudwatch(
      {requests: [1]},
      Array.from({length: maxMetricPages + 5}, (_, k) => `t${k}`),
    )
    await expect(metrics(endless.calls).read('request-rate', 60)).rejects.toThrow(`GetMetricData answered more than ${maxMetricPages} pages for one span`)
  })

  it('refuses a datapoint no load balancer gives, naming the metric', async () => {
    await expect(metrics(cloudwatch({requests: [-5]}).calls).read('request-rate', 60)).rejects.toThrow(/CloudWatch RequestCount \(Sum\)/)
  })

  it('AccessDenied names the call, the load balancer and group, and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<CloudWatchCalls>({getMetricData: async () => Promise.reject(accessDenied())})
    await expectDenied(metrics(calls).read('error-rate', 60, 'blue'), 'cloudwatch:GetMetricData', 'app/api/1 targetgroup/blue/0123456789abcdef')
  })
})
