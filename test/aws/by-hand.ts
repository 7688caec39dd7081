import {DeleteRuleCommand, DescribeRulesCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {ChangeResourceRecordSetsCommand, ListResourceRecordSetsCommand, Route53Client} from '@aws-sdk/client-route-53'
import type {AwsClientConfig} from './moto.js'

// What a person (or a restart) does to live state while a run is down, straight through the APIs.

/** Sets a weighted record's weights, keeping each set's values and TTL. */
export async function setWeightsByHand(cfg: AwsClientConfig, zoneId: string, record: string, weights: Record<string, number>): Promise<void> {
  const r53 = new Route53Client(cfg)
  try {
    const out = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: zoneId, StartRecordName: record, StartRecordType: 'A'}))
    const sets = (out.ResourceRecordSets ?? []).filter((s) => s.Name === record && s.SetIdentifier && s.SetIdentifier in weights)
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {Changes: sets.map((s) => ({Action: 'UPSERT', ResourceRecordSet: {...s, Weight: weights[s.SetIdentifier!]}}))},
      }),
    )
  } finally {
    r53.destroy()
  }
}

/** Deletes every rule on a listener but its default one. */
export async function deleteListenerRules(cfg: AwsClientConfig, listenerArn: string): Promise<number> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const rules = ((await elb.send(new DescribeRulesCommand({ListenerArn: listenerArn}))).Rules ?? []).filter((r) => !r.IsDefault)
    for (const r of rules) await elb.send(new DeleteRuleCommand({RuleArn: r.RuleArn}))
    return rules.length
  } finally {
    elb.destroy()
  }
}
