import {randomUUID} from 'node:crypto'
import {CloudWatchClient, PutMetricDataCommand, type Dimension, type MetricDatum} from '@aws-sdk/client-cloudwatch'
import {CreateSubnetCommand, CreateVpcCommand, EC2Client} from '@aws-sdk/client-ec2'
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateRuleCommand,
  CreateTargetGroupCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
  RegisterTargetsCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {ChangeResourceRecordSetsCommand, CreateHostedZoneCommand, Route53Client} from '@aws-sdk/client-route-53'
import {CreateBucketCommand, S3Client} from '@aws-sdk/client-s3'
import type {AwsClientConfig} from './moto.js'

/** A name no other test in any worker will pick; moto is shared across the whole run. */
export function uniqueName(prefix: string, max = 32): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`.slice(0, max).toLowerCase()
}

/** A bucket of its own, and the address of an S3 state store under a prefix in it: what a team names in sluice.yaml. */
export async function seedS3State(cfg: AwsClientConfig): Promise<string> {
  const bucket = uniqueName('sluice-state')
  const s3 = new S3Client({...cfg, forcePathStyle: true})
  await s3.send(new CreateBucketCommand({Bucket: bucket}))
  s3.destroy()
  return `s3://${bucket}/team/sluice`
}

export interface SeededZone {
  /** Bare id, e.g. Z0123ABC, without the /hostedzone/ prefix. */
  zoneId: string
  /** Fully qualified, with the trailing dot, exactly as ListResourceRecordSets names it. */
  record: string
}

/**
 * A public hosted zone holding one weighted A record per set identifier, each pointing at its own
 * TEST-NET-1 address (192.0.2.1, .2, ... in key order). `record` may be relative to the zone or fully qualified.
 */
export async function seedZone(
  cfg: AwsClientConfig,
  opts: {zoneName: string; record: string; ttl?: number; sets: Record<string, number>},
): Promise<SeededZone> {
  const r53 = new Route53Client(cfg)
  try {
    const zone = await r53.send(new CreateHostedZoneCommand({Name: opts.zoneName, CallerReference: randomUUID()}))
    const zoneId = zone.HostedZone!.Id!.replace(/^\/hostedzone\//, '')
    const record = fqdn(opts.record, opts.zoneName)
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: zoneId,
        ChangeBatch: {
          Changes: Object.entries(opts.sets).map(([setId, weight], i) => ({
            Action: 'CREATE',
            ResourceRecordSet: {
              Name: record,
              Type: 'A',
              SetIdentifier: setId,
              Weight: weight,
              TTL: opts.ttl ?? 60,
              ResourceRecords: [{Value: `192.0.2.${i + 1}`}],
            },
          })),
        },
      }),
    )
    return {zoneId, record}
  } finally {
    r53.destroy()
  }
}

export interface SeededLoadBalancer {
  loadBalancerArn: string
  /** app/NAME/ID, the LoadBalancer dimension value CloudWatch uses. */
  loadBalancerDimension: string
  targetGroupArn: string
  /** targetgroup/NAME/ID, the TargetGroup dimension value CloudWatch uses. */
  targetGroupDimension: string
  listenerArn: string
  targetIps: string[]
}

/**
 * A VPC with two subnets in different AZs, an internet-facing ALB and an `ip` target group on 443
 * (both named `name`; they live in separate namespaces), `targets` registered IPs from 10.0.1.10,
 * and an HTTP:80 listener forwarding to the group. `name` must be unique per test and at most 32 chars.
 */
export async function seedLoadBalancer(cfg: AwsClientConfig, opts: {name: string; targets: number}): Promise<SeededLoadBalancer> {
  const ec2 = new EC2Client(cfg)
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const vpc = await ec2.send(new CreateVpcCommand({CidrBlock: '10.0.0.0/16'}))
    const vpcId = vpc.Vpc!.VpcId!
    const subnetIds: string[] = []
    for (const [cidr, az] of [
      ['10.0.1.0/24', 'us-east-1a'],
      ['10.0.2.0/24', 'us-east-1b'],
    ]) {
      const subnet = await ec2.send(new CreateSubnetCommand({VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: az}))
      subnetIds.push(subnet.Subnet!.SubnetId!)
    }

    const lb = await elb.send(new CreateLoadBalancerCommand({Name: opts.name, Subnets: subnetIds, Scheme: 'internet-facing', Type: 'application'}))
    const loadBalancerArn = lb.LoadBalancers![0].LoadBalancerArn!

    const tg = await elb.send(
      new CreateTargetGroupCommand({
        Name: opts.name,
        Protocol: 'HTTPS',
        Port: 443,
        VpcId: vpcId,
        TargetType: 'ip',
        HealthCheckProtocol: 'HTTPS',
        HealthCheckPath: '/healthz',
      }),
    )
    const targetGroupArn = tg.TargetGroups![0].TargetGroupArn!

    const targetIps = Array.from({length: opts.targets}, (_, i) => `10.0.1.${10 + i}`)
    if (targetIps.length > 0) {
      await elb.send(new RegisterTargetsCommand({TargetGroupArn: targetGroupArn, Targets: targetIps.map((Id) => ({Id, Port: 443}))}))
    }

    const listener = await elb.send(
      new CreateListenerCommand({
        LoadBalancerArn: loadBalancerArn,
        Protocol: 'HTTP',
        Port: 80,
        DefaultActions: [{Type: 'forward', TargetGroupArn: targetGroupArn}],
      }),
    )

    return {
      loadBalancerArn,
      loadBalancerDimension: loadBalancerDimension(loadBalancerArn),
      targetGroupArn,
      targetGroupDimension: targetGroupDimension(targetGroupArn),
      listenerArn: listener.Listeners![0].ListenerArn!,
      targetIps,
    }
  } finally {
    ec2.destroy()
    elb.destroy()
  }
}

/** arn:...:loadbalancer/app/NAME/ID -> app/NAME/ID */
/** A second, empty target group (ip targets, HTTPS 443) in the VPC of `beside`: the green pool a weighted forward ramps to. Its ARN. */
export async function seedTargetGroupBeside(cfg: AwsClientConfig, beside: string, prefix = 'green'): Promise<string> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const [blue] = (await elb.send(new DescribeTargetGroupsCommand({TargetGroupArns: [beside]}))).TargetGroups!
    const created = await elb.send(new CreateTargetGroupCommand({Name: uniqueName(prefix), Protocol: 'HTTPS', Port: 443, VpcId: blue.VpcId, TargetType: 'ip'}))
    return created.TargetGroups![0].TargetGroupArn!
  } finally {
    elb.destroy()
  }
}

export function loadBalancerDimension(arn: string): string {
  return arn.slice(arn.indexOf(':loadbalancer/') + ':loadbalancer/'.length)
}

/** arn:...:targetgroup/NAME/ID -> targetgroup/NAME/ID */
export function targetGroupDimension(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1)
}

export interface AlbPoint {
  at: Date
  requests: number
  target5xx?: number
  elb5xx?: number
  latencySeconds?: number
}

/**
 * Publishes ALB metrics into AWS/ApplicationELB the way the ALB itself would: every metric under
 * LoadBalancer, and (when a target group is given) the target-side metrics again under
 * LoadBalancer+TargetGroup. HTTPCode_ELB_5XX_Count is never per target group in AWS, so it isn't here either.
 */
export async function putAlbMetrics(cfg: AwsClientConfig, opts: {loadBalancer: string; targetGroup?: string; points: AlbPoint[]}): Promise<void> {
  const lbOnly: Dimension[] = [{Name: 'LoadBalancer', Value: opts.loadBalancer}]
  const withTg: Dimension[] | undefined = opts.targetGroup ? [...lbOnly, {Name: 'TargetGroup', Value: opts.targetGroup}] : undefined

  const data: MetricDatum[] = []
  for (const p of opts.points) {
    for (const dims of withTg ? [lbOnly, withTg] : [lbOnly]) {
      const datum = (MetricName: string, Value: number, Unit: 'Count' | 'Seconds'): MetricDatum => ({
        MetricName,
        Value,
        Unit,
        Timestamp: p.at,
        Dimensions: dims,
      })
      data.push(datum('RequestCount', p.requests, 'Count'))
      if (p.target5xx !== undefined) data.push(datum('HTTPCode_Target_5XX_Count', p.target5xx, 'Count'))
      if (p.elb5xx !== undefined && dims === lbOnly) data.push(datum('HTTPCode_ELB_5XX_Count', p.elb5xx, 'Count'))
      if (p.latencySeconds !== undefined) data.push(datum('TargetResponseTime', p.latencySeconds, 'Seconds'))
    }
  }

  const cw = new CloudWatchClient(cfg)
  try {
    // Small batches stay inside every PutMetricData limit AWS has had.
    for (let i = 0; i < data.length; i += 20) {
      await cw.send(new PutMetricDataCommand({Namespace: 'AWS/ApplicationELB', MetricData: data.slice(i, i + 20)}))
    }
  } finally {
    cw.destroy()
  }
}

function fqdn(record: string, zoneName: string): string {
  const zone = zoneName.replace(/\.$/, '')
  const name = record.replace(/\.$/, '')
  return name === zone || name.endsWith(`.${zone}`) ? `${name}.` : `${name}.${zone}.`
}

/**
 * A listener rule (priority 100, /mail/*) whose forward sends everything to `blue` and nothing
 * to `green`: what a weighted-target-groups step shifts. Its ARN. `stickiness` adds the forward's
 * target-group stickiness, which a shift must keep.
 */
export async function seedWeightedRule(cfg: AwsClientConfig, listenerArn: string, blue: string, green: string, stickiness = false): Promise<string> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const rule = await elb.send(
      new CreateRuleCommand({
        ListenerArn: listenerArn,
        Priority: 100,
        Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: ['/mail/*']}}],
        Actions: [
          {
            Type: 'forward',
            ForwardConfig: {
              TargetGroups: [
                {TargetGroupArn: blue, Weight: 100},
                {TargetGroupArn: green, Weight: 0},
              ],
              ...(stickiness ? {TargetGroupStickinessConfig: {Enabled: true, DurationSeconds: 300}} : {}),
            },
          },
        ],
      }),
    )
    return rule.Rules![0].RuleArn!
  } finally {
    elb.destroy()
  }
}
