import {CloudWatchClient, PutMetricDataCommand, type MetricDatum} from '@aws-sdk/client-cloudwatch'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, useLiveFixture, type Fixture} from './live-fixture.js'
import {targetGroupDimension} from './seed.js'

// CloudWatch answers back whatever was put in it: a RequestCount of −300 a minute, or 1e200, is a
// datapoint it keeps and returns. assess must refuse it as a reading no pool gives (exit 1, naming
// the metric, the statistic, the minute and the value), never place the pool on its map by it.

let fx: Fixture
useLiveFixture((current) => (fx = current))

/** The last ten minutes of the fixture's target group: RequestCount `perMinute`, no 5xx. */
async function putRequests(perMinute: number): Promise<number> {
  const now = Math.floor(Date.now() / 60_000) * 60_000
  const tg = [
    {Name: 'LoadBalancer', Value: fx.targets.loadBalancer},
    {Name: 'TargetGroup', Value: targetGroupDimension(fx.targets.targetGroupArn)},
  ]
  const minutes = Array.from({length: 10}, (_, i) => new Date(now - (10 - i) * 60_000))
  const data: MetricDatum[] = minutes.flatMap((at) => [
    {MetricName: 'RequestCount', Value: perMinute, Unit: 'Count', Timestamp: at, Dimensions: tg},
    {MetricName: 'HTTPCode_Target_5XX_Count', Value: 0, Unit: 'Count', Timestamp: at, Dimensions: tg},
  ])
  const cw = new CloudWatchClient({...cfg, disableRequestCompression: true})
  try {
    await cw.send(new PutMetricDataCommand({Namespace: 'AWS/ApplicationELB', MetricData: data}))
  } finally {
    cw.destroy()
  }
  return minutes[0].getTime()
}

describe('assess against moto: CloudWatch datapoints no pool gives', () => {
  for (const [name, perMinute, shown] of [
    ['a RequestCount of −300 a minute', -300, '-300'],
    ['a RequestCount of 1e200 a minute', 1e200, '1e+200'],
  ] as const)
    it(`${name} is refused: exit 1 naming the metric and the value, no verdict`, async () => {
      await putRequests(perMinute)
      const out = await sluice(
        ['assess', '--scenario', 'outlook-2026', '--target-group', fx.targets.targetGroupArn, '--load-balancer', fx.targets.loadBalancer, '--quick', '--json'],
        {env: fx.env},
      )
      expect(out.code, out.stderr).toBe(1)
      const json = JSON.parse(out.stdout) as {error?: {message: string}; region?: string}
      expect(json.region).toBeUndefined()
      expect(json.error?.message).toMatch(
        new RegExp(
          `^target group ${fx.targets.targetGroupArn} and CloudWatch AWS/ApplicationELB for ${fx.targets.loadBalancer}: CloudWatch RequestCount \\(Sum\\) at \\S+Z read ${shown.replace('+', '\\+')}; expected a count of requests in 60 s, 0 to 6e\\+10\\. An impossible reading: nothing is judged on it$`,
        ),
      )
    })
})
