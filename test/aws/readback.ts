import {DescribeTargetHealthCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {ListResourceRecordSetsCommand, Route53Client} from '@aws-sdk/client-route-53'
import type {AwsClientConfig} from './moto.js'

/** Weights by set identifier, read back from Route 53. */
export async function readWeights(cfg: AwsClientConfig, zoneId: string, record: string): Promise<Record<string, number>> {
  const r53 = new Route53Client(cfg)
  try {
    const out = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: zoneId, StartRecordName: record, StartRecordType: 'A'}))
    return Object.fromEntries((out.ResourceRecordSets ?? []).filter((s) => s.Name === record && s.SetIdentifier).map((s) => [s.SetIdentifier!, s.Weight!]))
  } finally {
    r53.destroy()
  }
}

/** The targets registered in a group, as `ip:port`, sorted. */
export async function registeredTargets(cfg: AwsClientConfig, arn: string): Promise<string[]> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const out = await elb.send(new DescribeTargetHealthCommand({TargetGroupArn: arn}))
    return (out.TargetHealthDescriptions ?? []).map((d) => `${d.Target!.Id}:${d.Target!.Port}`).sort()
  } finally {
    elb.destroy()
  }
}
