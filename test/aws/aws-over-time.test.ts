// The emulation of AWS's behaviour over time (./aws-over-time.ts) read through the real SDK
// clients, as the restart adapters will read it: SSM Run Command, EC2 reboots, and ECS's
// service scheduler replacing a stopped task behind a target group.
import {DescribeInstanceStatusCommand, EC2Client, RebootInstancesCommand} from '@aws-sdk/client-ec2'
import {DescribeServicesCommand, DescribeTasksCommand, ECSClient, ListTasksCommand, RunTaskCommand, StopTaskCommand} from '@aws-sdk/client-ecs'
import {DescribeTargetHealthCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {CancelCommandCommand, GetCommandInvocationCommand, ListCommandsCommand, SendCommandCommand, SSMClient} from '@aws-sdk/client-ssm'
import {afterEach, beforeEach, describe, expect, inject, test} from 'vitest'
import {AwsOverTime, taskIp} from './aws-over-time.js'
import {clientConfig} from './moto.js'
import {RecordingProxy} from './proxy.js'
import {seedEcsService, seedInstanceGroup} from './seed-restarts.js'
import {uniqueName} from './seed.js'

const moto = inject('motoEndpoint')
const cfg = clientConfig(moto)

let proxy: RecordingProxy
let aws: AwsOverTime
let ssm: SSMClient
let ec2: EC2Client
let ecs: ECSClient
let elb: ElasticLoadBalancingV2Client

beforeEach(async () => {
  proxy = new RecordingProxy(moto)
  await proxy.start()
  aws = await AwsOverTime.install(proxy, moto, {invocationSeconds: 1, pendingSeconds: 0.3, rebootSeconds: 1})
  const through = clientConfig(proxy.endpoint)
  ssm = new SSMClient(through)
  ec2 = new EC2Client(through)
  ecs = new ECSClient(through)
  elb = new ElasticLoadBalancingV2Client(through)
})

afterEach(async () => {
  await aws.stop()
  for (const client of [ssm, ec2, ecs, elb]) client.destroy()
  await proxy.stop()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Polls `read` until `done` holds of its value, or fails after `ms`. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 5_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)} after ${ms} ms`)
    await sleep(50)
  }
}

/**
 * A reading of what holds only until `deadline` (a Date.now() value), checked only when it came
 * back by then: on a loaded machine an answer can come later than any window here is long, and
 * then it says nothing. Returns whether it was checked.
 */
async function readBy<T>(deadline: number, read: () => Promise<T>, check: (value: T) => void): Promise<boolean> {
  const value = await read()
  if (Date.now() < deadline) {
    check(value)
    return true
  }
  console.warn(`a reading came back ${Date.now() - deadline} ms after its window: not checked`)
  return false
}

async function failure(promise: Promise<unknown>): Promise<{name: string; message: string; status?: number}> {
  try {
    await promise
  } catch (error) {
    const e = error as {name: string; message: string; $metadata?: {httpStatusCode?: number}}
    return {name: e.name, message: e.message, status: e.$metadata?.httpStatusCode}
  }
  throw new Error('expected the call to fail')
}

const restart = (instanceId: string, extra: Partial<{TimeoutSeconds: number; Parameters: Record<string, string[]>}> = {}) =>
  new SendCommandCommand({
    InstanceIds: [instanceId],
    DocumentName: 'AWS-RunShellScript',
    Parameters: {commands: ['systemctl restart app']},
    Comment: `sluice restart ${instanceId}`,
    TimeoutSeconds: 60,
    ...extra,
  })

describe('SSM Run Command', () => {
  test('an invocation is Pending, then InProgress, until invocationSeconds, then Success; SendCommand names only its instance', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 3})
    const [target, other] = group.instanceIds
    aws.ssmEnds(target, {ends: 'Success', stdout: 'restarted\n'})

    const sent = (await ssm.send(restart(target))).Command!
    // moto puts every instance of the account in a command; AWS only the ones named.
    expect(sent).toMatchObject({InstanceIds: [target], Status: 'Pending', TargetCount: 1, CompletedCount: 0, Comment: `sluice restart ${target}`})
    const read = () => ssm.send(new GetCommandInvocationCommand({CommandId: sent.CommandId, InstanceId: target}))
    const {sentAt} = aws.commands.at(-1)!

    await readBy(sentAt + 300, read, (pending) => expect(pending.Status).toBe('Pending'))
    await sleep(400)
    await readBy(sentAt + 1_000, read, (running) => {
      expect(running).toMatchObject({Status: 'InProgress', ResponseCode: -1, ExecutionEndDateTime: ''})
      expect(running.ExecutionStartDateTime).not.toBe('')
    })
    await sleep(700)
    expect(await read()).toMatchObject({Status: 'Success', StatusDetails: 'Success', ResponseCode: 0, StandardOutputContent: 'restarted\n'})

    expect(aws.sendCommands(target)).toBe(1)
    expect(aws.sendCommands(other)).toBe(0)
    expect(proxy.count('SendCommand')).toBe(1)
  })

  test('ListCommands finds a command sent before, with its comment, document, time, instance and status, and honours InvokedAfter', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 2})
    const [target, other] = group.instanceIds
    const before = new Date(Date.now() - 2_000)
    const sent = (await ssm.send(restart(target))).Command!

    const listed = async (instanceId: string, after: Date) =>
      (await ssm.send(new ListCommandsCommand({InstanceId: instanceId, Filters: [{key: 'InvokedAfter', value: after.toISOString()}]}))).Commands ?? []
    const [found] = await listed(target, before)
    expect(found).toMatchObject({
      CommandId: sent.CommandId,
      Comment: `sluice restart ${target}`,
      DocumentName: 'AWS-RunShellScript',
      InstanceIds: [target],
      Status: 'Pending',
    })
    expect(Math.abs(found.RequestedDateTime!.getTime() - Date.now())).toBeLessThan(5_000)
    expect(await listed(target, new Date(Date.now() + 60_000))).toEqual([])
    expect((await listed(other, before)).map((c) => c.CommandId)).not.toContain(sent.CommandId)

    await sleep(1_100)
    expect((await listed(target, before))[0].Status).toBe('Success')
  })

  test('an instance configured to fail ends Failed, with its response code and standard error', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 2})
    const [bad, good] = group.instanceIds
    aws.ssmEnds(bad, {ends: 'Failed', responseCode: 3, stderr: 'app.service: start request repeated too quickly'})
    const failed = (await ssm.send(restart(bad))).Command!
    const fine = (await ssm.send(restart(good))).Command!
    await sleep(1_100)
    expect(await ssm.send(new GetCommandInvocationCommand({CommandId: failed.CommandId, InstanceId: bad}))).toMatchObject({
      Status: 'Failed',
      ResponseCode: 3,
      StandardErrorContent: 'app.service: start request repeated too quickly',
    })
    expect((await ssm.send(new GetCommandInvocationCommand({CommandId: fine.CommandId, InstanceId: good}))).Status).toBe('Success')
    const [listed] = (await ssm.send(new ListCommandsCommand({CommandId: failed.CommandId}))).Commands!
    expect(listed).toMatchObject({Status: 'Failed', ErrorCount: 1, CompletedCount: 1})
  })

  test('a hanging command stays InProgress until CancelCommand, then reads Cancelled (moto has no CancelCommand)', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 1})
    const [target] = group.instanceIds
    aws.ssmEnds(target, {ends: 'Hang'})
    const sent = (await ssm.send(restart(target))).Command!
    const read = () => ssm.send(new GetCommandInvocationCommand({CommandId: sent.CommandId, InstanceId: target}))
    await sleep(1_200)
    expect((await read()).Status).toBe('InProgress')

    await ssm.send(new CancelCommandCommand({CommandId: sent.CommandId, InstanceIds: [target]}))
    expect(await read()).toMatchObject({Status: 'Cancelled', StatusDetails: 'Cancelled', ResponseCode: -1})
    expect((await ssm.send(new ListCommandsCommand({CommandId: sent.CommandId}))).Commands![0].Status).toBe('Cancelled')
    expect(await failure(ssm.send(new CancelCommandCommand({CommandId: '00000000-0000-0000-0000-000000000000'})))).toMatchObject({name: 'InvalidCommandId'})
  })

  test('a hanging command times out at its execution timeout; an undelivered one at TimeoutSeconds', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 2})
    const [hung, offline] = group.instanceIds
    aws.ssmEnds(hung, {ends: 'Hang'})
    aws.ssmEnds(offline, {ends: 'Undelivered'})
    const slow = (await ssm.send(restart(hung, {Parameters: {commands: ['sleep 999'], executionTimeout: ['1']}}))).Command!
    const lost = (await ssm.send(restart(offline, {TimeoutSeconds: 30}))).Command!

    await sleep(500)
    await readBy(
      aws.commands.find((c) => c.commandId === slow.CommandId)!.sentAt + 1_300,
      () => ssm.send(new GetCommandInvocationCommand({CommandId: slow.CommandId, InstanceId: hung})),
      (invocation) => expect(invocation.Status).toBe('InProgress'),
    )
    expect((await ssm.send(new GetCommandInvocationCommand({CommandId: lost.CommandId, InstanceId: offline}))).Status).toBe('Pending')
    // Delivered after pendingSeconds (0.3), it runs its executionTimeout (1 s) out.
    await sleep(1_000)
    expect(await ssm.send(new GetCommandInvocationCommand({CommandId: slow.CommandId, InstanceId: hung}))).toMatchObject({
      Status: 'TimedOut',
      StatusDetails: 'ExecutionTimedOut',
    })
    // Thirty seconds is AWS's least TimeoutSeconds: read the undelivered one's end ahead of time.
    expect(aws.invocation(lost.CommandId!, offline, Date.now() + 30_000)).toMatchObject({Status: 'TimedOut', StatusDetails: 'DeliveryTimedOut'})
  })

  test('GetCommandInvocation can answer InvocationDoesNotExist just after SendCommand; a TimeoutSeconds under 30 is refused', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 1})
    const [target] = group.instanceIds
    aws.settings.invisibleSeconds = 0.4
    const sent = (await ssm.send(restart(target))).Command!
    const read = () => ssm.send(new GetCommandInvocationCommand({CommandId: sent.CommandId, InstanceId: target}))
    const {sentAt} = aws.commands.at(-1)!
    await readBy(
      sentAt + 400,
      () => failure(read()),
      (error) => expect(error).toMatchObject({name: 'InvocationDoesNotExist', status: 400}),
    )
    await sleep(500)
    await readBy(sentAt + 1_000, read, (invocation) => expect(invocation.Status).toBe('InProgress'))

    expect(await failure(ssm.send(restart(target, {TimeoutSeconds: 5})))).toMatchObject({name: 'ValidationException', status: 400})
    expect(aws.sendCommands(target)).toBe(1)
  })
})

describe('EC2 reboot', () => {
  const checks = async (instanceId: string) => {
    const [status] = (await ec2.send(new DescribeInstanceStatusCommand({InstanceIds: [instanceId], IncludeAllInstances: true}))).InstanceStatuses!
    return [status.InstanceStatus?.Status, status.SystemStatus?.Status]
  }

  test('a rebooted instance reads initializing for rebootSeconds, then ok; the others stay ok', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ec2'), instances: 2})
    const [target, other] = group.instanceIds
    expect(await checks(target)).toEqual(['ok', 'ok'])
    // The window opens when the reboot is answered: later than this.
    const asked = Date.now()
    await ec2.send(new RebootInstancesCommand({InstanceIds: [target]}))
    await readBy(
      asked + 1_000,
      () => checks(target),
      (read) => expect(read).toEqual(['initializing', 'initializing']),
    )
    expect(await checks(other)).toEqual(['ok', 'ok'])
    await sleep(1_100)
    expect(await checks(target)).toEqual(['ok', 'ok'])
    expect(aws.reboots(target)).toBe(1)
    expect(aws.reboots(other)).toBe(0)
  })

  test('an instance configured to come back impaired fails its instance check after the reboot', async () => {
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ec2'), instances: 1})
    const [target] = group.instanceIds
    aws.rebootEnds(target, 'impaired')
    const asked = Date.now()
    await ec2.send(new RebootInstancesCommand({InstanceIds: [target]}))
    await readBy(
      asked + 1_000,
      () => checks(target),
      (read) => expect(read).toEqual(['initializing', 'initializing']),
    )
    await sleep(1_100)
    const [status] = (await ec2.send(new DescribeInstanceStatusCommand({InstanceIds: [target], IncludeAllInstances: true}))).InstanceStatuses!
    expect(status.InstanceStatus).toMatchObject({Status: 'impaired', Details: [{Name: 'reachability', Status: 'failed'}]})
    expect(status.InstanceStatus!.Details![0].ImpairedSince).toBeInstanceOf(Date)
    expect(status.SystemStatus!.Status).toBe('ok')
  })
})

describe('ECS service scheduler', () => {
  const health = async (targetGroupArn: string) =>
    Object.fromEntries(
      ((await elb.send(new DescribeTargetHealthCommand({TargetGroupArn: targetGroupArn}))).TargetHealthDescriptions ?? []).map((d) => [
        `${d.Target!.Id}:${d.Target!.Port}`,
        d.TargetHealth!.State,
      ]),
    )
  const running = async (cluster: string, serviceName: string) => {
    const arns = (await ecs.send(new ListTasksCommand({cluster, serviceName, desiredStatus: 'RUNNING'}))).taskArns ?? []
    return arns.length === 0 ? [] : ((await ecs.send(new DescribeTasksCommand({cluster, tasks: arns}))).tasks ?? [])
  }

  test('a stopped task is deregistered at once, replaced after replaceAfterSeconds (initial, then healthy), and the desired count kept', async () => {
    const seeded = await seedEcsService(cfg, {name: uniqueName('ecs'), tasks: 3, port: 8080})
    const {clusterName: cluster, serviceName, targetGroupArn} = seeded
    const service = aws.ecsService({cluster, service: serviceName, targetGroupArn, port: 8080, replaceAfterSeconds: 1.5, healthyAfterSeconds: 1.5})
    // A task in the cluster outside the service: ListTasks by serviceName must leave it out (moto does not).
    await new ECSClient(cfg).send(
      new RunTaskCommand({
        cluster,
        taskDefinition: seeded.taskDefinitionArn,
        launchType: 'FARGATE',
        networkConfiguration: {awsvpcConfiguration: {subnets: seeded.subnetIds, securityGroups: [seeded.securityGroupId]}},
      }),
    )

    const before = await running(cluster, serviceName)
    expect(before.map((t) => t.taskArn).sort()).toEqual([...seeded.taskArns].sort())
    expect(before.every((t) => t.group === `service:${serviceName}` && t.lastStatus === 'RUNNING')).toBe(true)
    expect(await health(targetGroupArn)).toEqual(Object.fromEntries(seeded.taskIps.map((ip) => [`${ip}:8080`, 'healthy'])))

    const [victim, ...rest] = seeded.taskArns
    const victimIp = seeded.taskIps[0]
    const asked = Date.now()
    await ecs.send(new StopTaskCommand({cluster, task: victim, reason: 'sluice restart'}))
    const [stopped] = (await ecs.send(new DescribeTasksCommand({cluster, tasks: [victim]}))).tasks!
    expect(stopped).toMatchObject({lastStatus: 'STOPPED', desiredStatus: 'STOPPED', stoppedReason: 'sluice restart'})
    expect(Object.keys(await health(targetGroupArn))).not.toContain(`${victimIp}:8080`)
    // Until its replacement starts, replaceAfterSeconds after the stop:
    await readBy(
      asked + 1_500,
      () => running(cluster, serviceName),
      (tasks) => expect(tasks.map((t) => t.taskArn).sort()).toEqual([...rest].sort()),
    )
    await readBy(
      asked + 1_500,
      () => ecs.send(new DescribeServicesCommand({cluster, services: [serviceName]})),
      (out) => expect(out.services![0]).toMatchObject({desiredCount: 3, runningCount: 2, pendingCount: 1}),
    )

    const replaced = await until(
      () => running(cluster, serviceName),
      (tasks) => tasks.length === 3,
    )
    const fresh = replaced.find((t) => !rest.includes(t.taskArn!))!
    expect(fresh.group).toBe(`service:${serviceName}`)
    const freshTarget = `${taskIp(fresh)}:8080`
    // ECS registers a task once it runs: there is a moment when it runs unregistered.
    await until(
      async () => service.replacements.length,
      (n) => n === 1,
    )
    await readBy(
      service.replacements[0].healthyAt,
      () => health(targetGroupArn),
      (h) => expect(h[freshTarget]).toBe('initial'),
    )
    await until(
      () => health(targetGroupArn),
      (h) => h[freshTarget] === 'healthy',
    )
    expect(Object.keys(await health(targetGroupArn))).toHaveLength(3)
    expect((await ecs.send(new DescribeServicesCommand({cluster, services: [serviceName]}))).services![0]).toMatchObject({runningCount: 3, pendingCount: 0})
    expect(aws.stops(victimIp)).toBe(1)
    expect(service.replacements).toMatchObject([{replaces: victim, target: freshTarget}])

    // Stopping the stopped task again starts nothing more.
    await ecs.send(new StopTaskCommand({cluster, task: victim, reason: 'again'}))
    await sleep(1_700)
    expect(await running(cluster, serviceName)).toHaveLength(3)
    expect(aws.errors).toEqual([])
  })

  test('a replacement failing its health checks goes from initial to unhealthy; an old target drains when draining is emulated', async () => {
    const seeded = await seedEcsService(cfg, {name: uniqueName('ecs'), tasks: 2, port: 80})
    const {clusterName: cluster, serviceName, targetGroupArn} = seeded
    // The group and port come from the service's load balancer.
    const service = aws.ecsService({cluster, service: serviceName, replaceAfterSeconds: 0.3, healthyAfterSeconds: 1.5})
    proxy.emulateDraining(2)
    const asked = Date.now()
    await ecs.send(new StopTaskCommand({cluster, task: seeded.taskArns[0], reason: 'sluice restart'}))
    await readBy(
      asked + 2_000,
      () => health(targetGroupArn),
      (h) => expect(h[`${seeded.taskIps[0]}:80`]).toBe('draining'),
    )

    await until(
      async () => service.replacements.length,
      (n) => n === 1,
    )
    const fresh = service.replacements[0]
    proxy.failChecks(targetGroupArn, [fresh.ip])
    await readBy(
      fresh.healthyAt,
      () => health(targetGroupArn),
      (h) => expect(h[fresh.target]).toBe('initial'),
    )
    await until(
      () => health(targetGroupArn),
      (h) => h[fresh.target] === 'unhealthy',
    )
    expect(aws.errors).toEqual([])
  })
})
