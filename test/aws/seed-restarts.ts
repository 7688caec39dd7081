import {
  CreateSecurityGroupCommand,
  CreateSubnetCommand,
  CreateTagsCommand,
  CreateVpcCommand,
  EC2Client,
  ModifyVpcAttributeCommand,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2'
import {CreateClusterCommand, CreateServiceCommand, ECSClient, RegisterTaskDefinitionCommand, RunTaskCommand} from '@aws-sdk/client-ecs'
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  CreateTargetGroupCommand,
  ElasticLoadBalancingV2Client,
  RegisterTargetsCommand,
  type TargetTypeEnum,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {pinEcsTasks, taskIp} from './aws-over-time.js'
import type {AwsClientConfig} from './moto.js'

/** An AMI moto ships with (any id moto knows will do: it runs nothing). */
const AMI = 'ami-12c6146b'

interface Network {
  vpcId: string
  /** Two subnets in different AZs, 10.0.1.0/24 (us-east-1a) and 10.0.2.0/24 (us-east-1b). */
  subnetIds: string[]
  loadBalancerArn: string
  targetGroupArn: string
  listenerArn: string
}

/**
 * A VPC with two subnets, an internet-facing ALB named `name`, a target group named `name` of
 * `targetType` on HTTP:`port`, and an HTTP:80 listener forwarding to it: seedLoadBalancer's
 * layout (./seed.ts), with the group's type and port chosen.
 */
async function seedNetwork(cfg: AwsClientConfig, name: string, targetType: TargetTypeEnum, port: number, dnsHostnames: boolean): Promise<Network> {
  const ec2 = new EC2Client(cfg)
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const vpc = await ec2.send(new CreateVpcCommand({CidrBlock: '10.0.0.0/16'}))
    const vpcId = vpc.Vpc!.VpcId!
    // ECS's awsvpc tasks need it, as in AWS.
    if (dnsHostnames) await ec2.send(new ModifyVpcAttributeCommand({VpcId: vpcId, EnableDnsHostnames: {Value: true}}))
    const subnetIds: string[] = []
    for (const [cidr, az] of [
      ['10.0.1.0/24', 'us-east-1a'],
      ['10.0.2.0/24', 'us-east-1b'],
    ]) {
      const subnet = await ec2.send(new CreateSubnetCommand({VpcId: vpcId, CidrBlock: cidr, AvailabilityZone: az}))
      subnetIds.push(subnet.Subnet!.SubnetId!)
    }
    const lb = await elb.send(new CreateLoadBalancerCommand({Name: name, Subnets: subnetIds, Scheme: 'internet-facing', Type: 'application'}))
    const loadBalancerArn = lb.LoadBalancers![0].LoadBalancerArn!
    const tg = await elb.send(
      new CreateTargetGroupCommand({
        Name: name,
        Protocol: 'HTTP',
        Port: port,
        VpcId: vpcId,
        TargetType: targetType,
        HealthCheckProtocol: 'HTTP',
        HealthCheckPath: '/healthz',
      }),
    )
    const targetGroupArn = tg.TargetGroups![0].TargetGroupArn!
    const listener = await elb.send(
      new CreateListenerCommand({
        LoadBalancerArn: loadBalancerArn,
        Protocol: 'HTTP',
        Port: 80,
        DefaultActions: [{Type: 'forward', TargetGroupArn: targetGroupArn}],
      }),
    )
    return {vpcId, subnetIds, loadBalancerArn, targetGroupArn, listenerArn: listener.Listeners![0].ListenerArn!}
  } finally {
    ec2.destroy()
    elb.destroy()
  }
}

export interface SeededInstanceGroup extends Network {
  instanceIds: string[]
  privateIps: string[]
}

/**
 * `instances` running EC2 instances (tagged Name=`name`) in the first subnet of a new VPC,
 * registered on port 80 in an `instance` target group named `name` behind an ALB and HTTP:80
 * listener: the fleet an SSM or EC2-reboot restart works through. `name` must be unique per
 * test and at most 32 chars.
 */
export async function seedInstanceGroup(cfg: AwsClientConfig, opts: {name: string; instances: number}): Promise<SeededInstanceGroup> {
  const network = await seedNetwork(cfg, opts.name, 'instance', 80, false)
  const ec2 = new EC2Client(cfg)
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const run = await ec2.send(
      new RunInstancesCommand({ImageId: AMI, InstanceType: 't3.micro', MinCount: opts.instances, MaxCount: opts.instances, SubnetId: network.subnetIds[0]}),
    )
    const instances = run.Instances ?? []
    const instanceIds = instances.map((i) => i.InstanceId!)
    await ec2.send(new CreateTagsCommand({Resources: instanceIds, Tags: [{Key: 'Name', Value: opts.name}]}))
    await elb.send(new RegisterTargetsCommand({TargetGroupArn: network.targetGroupArn, Targets: instanceIds.map((Id) => ({Id, Port: 80}))}))
    return {...network, instanceIds, privateIps: instances.map((i) => i.PrivateIpAddress!)}
  } finally {
    ec2.destroy()
    elb.destroy()
  }
}

export interface SeededEcsService extends Network {
  clusterName: string
  clusterArn: string
  serviceName: string
  serviceArn: string
  taskDefinitionArn: string
  securityGroupId: string
  /** The container port, each task's target port. */
  port: number
  taskArns: string[]
  /** Each task's ENI address, in the order of taskArns: registered as `ip:port` in the group. */
  taskIps: string[]
}

/**
 * An ECS cluster and a Fargate service (both named `name`) of `tasks` awsvpc tasks of an `app`
 * container on `port`, behind an `ip` target group named `name` (HTTP:`port`) under an ALB and
 * HTTP:80 listener, as ECS with a load balancer runs one. moto has no service scheduler, so its
 * first fill is done here as ECS would: `tasks` tasks started in group `service:NAME` by the
 * service's deployment, and each registered in the group as `ip:port`. moto's task state
 * machine is pinned (pinEcsTasks) so they stay RUNNING. `name` must be unique per test and at
 * most 32 chars.
 */
export async function seedEcsService(cfg: AwsClientConfig, opts: {name: string; tasks: number; port: number}): Promise<SeededEcsService> {
  await pinEcsTasks(cfg.endpoint)
  const network = await seedNetwork(cfg, opts.name, 'ip', opts.port, true)
  const ec2 = new EC2Client(cfg)
  const ecs = new ECSClient(cfg)
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const sg = await ec2.send(new CreateSecurityGroupCommand({GroupName: opts.name, Description: `tasks of ${opts.name}`, VpcId: network.vpcId}))
    const securityGroupId = sg.GroupId!
    const cluster = await ecs.send(new CreateClusterCommand({clusterName: opts.name}))
    const definition = await ecs.send(
      new RegisterTaskDefinitionCommand({
        family: opts.name,
        networkMode: 'awsvpc',
        requiresCompatibilities: ['FARGATE'],
        cpu: '256',
        memory: '512',
        // moto sums the containers' own cpu and memory to place a task: both are needed.
        containerDefinitions: [
          {name: 'app', image: 'public.ecr.aws/nginx/nginx:stable', cpu: 256, memory: 512, essential: true, portMappings: [{containerPort: opts.port}]},
        ],
      }),
    )
    const taskDefinitionArn = definition.taskDefinition!.taskDefinitionArn!
    const networkConfiguration = {awsvpcConfiguration: {subnets: network.subnetIds, securityGroups: [securityGroupId], assignPublicIp: 'DISABLED' as const}}
    const created = await ecs.send(
      new CreateServiceCommand({
        cluster: opts.name,
        serviceName: opts.name,
        taskDefinition: taskDefinitionArn,
        desiredCount: opts.tasks,
        launchType: 'FARGATE',
        networkConfiguration,
        loadBalancers: [{targetGroupArn: network.targetGroupArn, containerName: 'app', containerPort: opts.port}],
      }),
    )
    const service = created.service!
    const taskArns: string[] = []
    const taskIps: string[] = []
    if (opts.tasks > 0) {
      const run = await ecs.send(
        new RunTaskCommand({
          cluster: opts.name,
          taskDefinition: taskDefinitionArn,
          count: opts.tasks,
          launchType: 'FARGATE',
          group: `service:${opts.name}`,
          startedBy: service.deployments?.[0]?.id ?? 'ecs-svc',
          networkConfiguration,
        }),
      )
      for (const task of run.tasks ?? []) {
        taskArns.push(task.taskArn!)
        taskIps.push(taskIp(task)!)
      }
      await elb.send(new RegisterTargetsCommand({TargetGroupArn: network.targetGroupArn, Targets: taskIps.map((Id) => ({Id, Port: opts.port}))}))
    }
    return {
      ...network,
      clusterName: opts.name,
      clusterArn: cluster.cluster!.clusterArn!,
      serviceName: opts.name,
      serviceArn: service.serviceArn!,
      taskDefinitionArn,
      securityGroupId,
      port: opts.port,
      taskArns,
      taskIps,
    }
  } finally {
    ec2.destroy()
    ecs.destroy()
    elb.destroy()
  }
}
