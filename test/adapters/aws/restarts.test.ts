import type {SummaryStatus} from '@aws-sdk/client-ec2'
import type {CommandInvocationStatus} from '@aws-sdk/client-ssm'
import {describe, expect, it} from 'vitest'
import {Ec2Reboot} from '../../../src/aws/restarts/ec2-reboot.js'
import {EcsReplace} from '../../../src/aws/restarts/ecs-replace.js'
import {SsmRunCommand} from '../../../src/aws/restarts/ssm-command.js'
import type {Ec2Calls, EcsCalls, Elbv2Calls, SsmCalls} from '../../../src/aws/sdk.js'
import type {Clock, EcsReplaceSpec, SsmSpec, Target} from '../../../src/ports/control-plane.js'
import {awsError, fakeCalls, names} from './fake-calls.js'

/** A clock that moves only when slept on, at once: the adapters' waits take no real time. */
function steppedClock(): Clock & {t: number} {
  const clock = {
    t: 1_000,
    now: () => clock.t,
    sleep: async (seconds: number) => {
      clock.t += seconds
    },
  }
  return clock
}

const ssmSpec: SsmSpec = {
  with: 'ssm',
  document: 'AWS-RunShellScript',
  parameters: {commands: ['systemctl restart app']},
  timeoutSeconds: 60,
  comment: 'sluice run-1 step 1 restart',
}

/** An invocation that is under way for `seconds` of the clock after it was sent, then ends as given. */
function ssmFake(
  clock: {t: number},
  seconds: number,
  end: {Status: CommandInvocationStatus; ResponseCode?: number; StandardOutputContent?: string; StandardErrorContent?: string},
) {
  let sentAt = 0
  let looks = 0
  return fakeCalls<SsmCalls>({
    sendCommand: async () => {
      sentAt = clock.t
      return {Command: {CommandId: 'cmd-1'}}
    },
    getCommandInvocation: async () => {
      // AWS lists the invocation a moment after SendCommand answers.
      if (looks++ === 0) throw awsError('InvocationDoesNotExist')
      return clock.t - sentAt < seconds ? {Status: 'InProgress' as const, ResponseCode: -1} : end
    },
    cancelCommand: async () => ({}),
    listCommands: async () => ({Commands: []}),
  })
}

describe('ssm: SSM Run Command on the instance, waited on', () => {
  it('sends the document to that one instance with its parameters and comment, waits through InProgress, and reports status, exit and output', async () => {
    const clock = steppedClock()
    const {calls, made} = ssmFake(clock, 7, {Status: 'Success', ResponseCode: 0, StandardOutputContent: 'stopping\nstarted app\n'})
    const result = await new SsmRunCommand(calls, clock).run(ssmSpec, 'i-0123456789abcdef0')
    expect(made[0].input).toMatchObject({
      InstanceIds: ['i-0123456789abcdef0'],
      DocumentName: 'AWS-RunShellScript',
      Parameters: {commands: ['systemctl restart app']},
      Comment: 'sluice run-1 step 1 restart',
    })
    expect(names(made).filter((n) => n === 'getCommandInvocation').length).toBeGreaterThan(3)
    expect(result.note).toMatch(/^SSM command cmd-1 \(AWS-RunShellScript\) on i-0123456789abcdef0: Success, exit 0 after [78] s: stopping ⏎ started app$/)
    expect(names(made)).not.toContain('cancelCommand')
  })

  it('a command that ends Failed fails the target with its exit code and error output', async () => {
    const clock = steppedClock()
    const {calls} = ssmFake(clock, 3, {Status: 'Failed', ResponseCode: 3, StandardErrorContent: 'unit app.service not found'})
    await expect(new SsmRunCommand(calls, clock).run(ssmSpec, 'i-0123456789abcdef0')).rejects.toThrow(
      /on i-0123456789abcdef0: Failed, exit 3 after \d+ s: unit app\.service not found/,
    )
  })

  it('a command still running at the timeout is cancelled and fails the target', async () => {
    const clock = steppedClock()
    const {calls, made} = ssmFake(clock, 10_000, {Status: 'Success'})
    await expect(new SsmRunCommand(calls, clock).run(ssmSpec, 'i-0123456789abcdef0')).rejects.toThrow(
      /was still InProgress after 60 s, the hook's timeout; it was cancelled/,
    )
    expect(made.find((m) => m.call === 'cancelCommand')?.input).toEqual({CommandId: 'cmd-1', InstanceIds: ['i-0123456789abcdef0']})
    expect(clock.t - 1_000).toBeGreaterThanOrEqual(60)
    expect(clock.t - 1_000).toBeLessThan(63)
  })

  it('on resume, finds the command the dead run sent by its comment and waits for it, without sending another', async () => {
    const clock = steppedClock()
    const {calls, made} = fakeCalls<SsmCalls>({
      listCommands: async () => ({
        Commands: [
          {CommandId: 'other', Comment: 'sluice run-1 step 2 restart', DocumentName: 'AWS-RunShellScript'},
          {CommandId: 'cmd-0', Comment: ssmSpec.comment, DocumentName: 'AWS-RunShellScript'},
        ],
      }),
      getCommandInvocation: async (input) => ({Status: 'Success', ResponseCode: 0, StandardOutputContent: `done ${(input as {CommandId: string}).CommandId}`}),
    })
    const since = new Date('2026-12-07T09:00:00Z')
    const result = await new SsmRunCommand(calls, clock).finish(ssmSpec, 'i-0123456789abcdef0', since)
    expect(names(made)).toEqual(['listCommands', 'getCommandInvocation'])
    expect(made[0].input).toEqual({InstanceId: 'i-0123456789abcdef0', Filters: [{key: 'InvokedAfter', value: '2026-12-07T08:59:00.000Z'}]})
    expect(result.note).toMatch(/^sent before the resume; SSM command cmd-0 .*: done cmd-0$/)
  })

  it('on resume with no such command sent (the run died before it), sends it once', async () => {
    const clock = steppedClock()
    const {calls, made} = ssmFake(clock, 0, {Status: 'Success', ResponseCode: 0})
    await new SsmRunCommand(calls, clock).finish(ssmSpec, 'i-0123456789abcdef0', new Date())
    expect(names(made).filter((n) => n === 'sendCommand')).toHaveLength(1)
  })
})

describe('ec2-reboot: reboot, then the status checks', () => {
  function ec2Fake(clock: {t: number}, checks: (since: number) => {instance: SummaryStatus; system: SummaryStatus}) {
    let rebootedAt = clock.t
    return fakeCalls<Ec2Calls>({
      rebootInstances: async () => {
        rebootedAt = clock.t
        return {}
      },
      describeInstanceStatus: async () => {
        const c = checks(clock.t - rebootedAt)
        return {
          InstanceStatuses: [
            {InstanceId: 'i-0123456789abcdef0', InstanceState: {Name: 'running'}, InstanceStatus: {Status: c.instance}, SystemStatus: {Status: c.system}},
          ],
        }
      },
    })
  }

  it('believes the checks only after settling, and returns once both are ok', async () => {
    const clock = steppedClock()
    const {calls, made} = ec2Fake(clock, (since) => (since < 40 ? {instance: 'initializing', system: 'ok'} : {instance: 'ok', system: 'ok'}))
    const result = await new Ec2Reboot(calls, clock).run({with: 'ec2-reboot', settleSeconds: 20, timeoutSeconds: 300}, 'i-0123456789abcdef0')
    expect(names(made)[0]).toBe('rebootInstances')
    expect(result.note).toMatch(/status checks ok after (40|4[1-5]) s/)
    expect(clock.t - 1_000).toBeGreaterThanOrEqual(40)
  })

  it('checks that never pass fail the target at its timeout, naming what they last said', async () => {
    const clock = steppedClock()
    const {calls} = ec2Fake(clock, () => ({instance: 'impaired', system: 'ok'}))
    await expect(new Ec2Reboot(calls, clock).run({with: 'ec2-reboot', settleSeconds: 20, timeoutSeconds: 90}, 'i-0123456789abcdef0')).rejects.toThrow(
      /did not pass within 90 s, the hook's timeout \(last: running, instance status impaired, system status ok\)/,
    )
  })

  it('on resume never reboots again: it waits for the checks', async () => {
    const clock = steppedClock()
    const {calls, made} = ec2Fake(clock, () => ({instance: 'ok', system: 'ok'}))
    await new Ec2Reboot(calls, clock).finish({with: 'ec2-reboot', settleSeconds: 5, timeoutSeconds: 90}, 'i-0123456789abcdef0', new Date())
    expect(names(made)).not.toContain('rebootInstances')
  })
})

describe('ecs-replace: the task stopped, the service replaces it', () => {
  const spec: EcsReplaceSpec = {with: 'ecs-replace', cluster: 'prod', service: 'api', timeoutSeconds: 120, reason: 'sluice run-1 step 1 restart'}
  const target = (ip: string): Target => ({id: `${ip}:8080`, targetId: ip, ip, port: 8080, health: 'unused'})
  const taskAt = (n: number, ip: string, desired = 'RUNNING', createdAt = new Date(0)) => ({
    taskArn: `arn:aws:ecs:us-east-1:1:task/prod/t${n}`,
    createdAt,
    stoppingAt: undefined as Date | undefined,
    group: 'service:api',
    lastStatus: 'RUNNING',
    desiredStatus: desired,
    attachments: [{type: 'ElasticNetworkInterface', details: [{name: 'privateIPv4Address', value: ip}]}],
  })

  /** A service of two tasks; a stopped task's replacement runs after 10 s and is healthy 20 s later. */
  function world(clock: {t: number}, opts: {stopped?: string[]; replaces?: boolean} = {}) {
    const tasks = [taskAt(1, '10.0.0.1'), taskAt(2, '10.0.0.2')]
    for (const ip of opts.stopped ?? []) {
      const task = tasks.find((t) => t.attachments[0].details[0].value === ip)!
      task.desiredStatus = 'STOPPED'
      task.stoppingAt = new Date(clock.t * 1000)
    }
    let stoppedAt = opts.stopped?.length ? clock.t : Infinity
    const replacement = () => (opts.replaces === false || clock.t - stoppedAt < 10 ? [] : [taskAt(3, '10.0.0.3', 'RUNNING', new Date((stoppedAt + 10) * 1000))])
    const ecs = fakeCalls<EcsCalls>({
      describeServices: async () => ({
        services: [{serviceName: 'api', status: 'ACTIVE', desiredCount: 2, loadBalancers: [{targetGroupArn: 'tg-api', containerPort: 8080}]}],
      }),
      listTasks: async (input) => ({
        taskArns: [...tasks, ...replacement()]
          .filter((t) => t.desiredStatus === ((input as {desiredStatus?: string}).desiredStatus ?? 'RUNNING'))
          .map((t) => t.taskArn),
      }),
      describeTasks: async (input) => ({tasks: [...tasks, ...replacement()].filter((t) => (input as {tasks: string[]}).tasks.includes(t.taskArn))}),
      stopTask: async (input) => {
        const task = tasks.find((t) => t.taskArn === (input as {task: string}).task)!
        task.desiredStatus = 'STOPPED'
        task.stoppingAt = new Date(clock.t * 1000)
        stoppedAt = clock.t
        return {}
      },
    })
    const elbv2 = fakeCalls<Elbv2Calls>({
      describeTargetHealth: async () => ({
        TargetHealthDescriptions: [
          ...tasks
            .filter((t) => t.desiredStatus === 'RUNNING')
            .map((t) => ({Target: {Id: t.attachments[0].details[0].value, Port: 8080}, TargetHealth: {State: 'healthy' as const}})),
          ...replacement().map((t) => ({
            Target: {Id: t.attachments[0].details[0].value, Port: 8080},
            TargetHealth: {State: clock.t - stoppedAt < 30 ? ('initial' as const) : ('healthy' as const)},
          })),
        ],
      }),
    })
    return {ecs, elbv2}
  }

  it('stops the task at the target address with the reason, and returns when the service is whole again, the new task named', async () => {
    const clock = steppedClock()
    const {ecs, elbv2} = world(clock)
    const result = await new EcsReplace(ecs.calls, elbv2.calls, clock).run(spec, target('10.0.0.1'))
    expect(ecs.made.filter((m) => m.call === 'stopTask').map((m) => m.input)).toEqual([
      {cluster: 'prod', task: 'arn:aws:ecs:us-east-1:1:task/prod/t1', reason: 'sluice run-1 step 1 restart'},
    ])
    expect(result.rejoined).toBe(true)
    expect(result.replacements).toEqual(['10.0.0.3:8080'])
    expect(result.note).toMatch(/stopped task t1 \(10\.0\.0\.1\); 2 of 2 tasks running and healthy in its target group after 3\d s \(new: 10\.0\.0\.3\)/)
  })

  it('on resume of a task already stopped, stops nothing and waits for its replacement', async () => {
    const clock = steppedClock()
    const {ecs, elbv2} = world(clock, {stopped: ['10.0.0.1']})
    const result = await new EcsReplace(ecs.calls, elbv2.calls, clock).finish(spec, target('10.0.0.1'), new Date())
    expect(names(ecs.made)).not.toContain('stopTask')
    expect(result.note).toMatch(/already stopped by the run this one resumes/)
    // The task ECS started after the old one began stopping is the new one: the cycle will not cycle it.
    expect(result.replacements).toEqual(['10.0.0.3:8080'])
  })

  it('a replacement that never becomes healthy fails the target at the timeout, with the count', async () => {
    const clock = steppedClock()
    const {ecs, elbv2} = world(clock, {replaces: false})
    await expect(new EcsReplace(ecs.calls, elbv2.calls, clock).run(spec, target('10.0.0.2'))).rejects.toThrow(
      /stopped task t2 \(10\.0\.0\.2\), but only 1 of its 2 tasks were running and healthy in its target group after 120 s/,
    )
  })

  it('tells a resume whether a replacement was begun: the task at the address is no longer meant to run', async () => {
    const clock = steppedClock()
    const {ecs, elbv2} = world(clock, {stopped: ['10.0.0.1']})
    const replace = new EcsReplace(ecs.calls, elbv2.calls, clock)
    expect(await replace.begun(spec, target('10.0.0.1'))).toBe(true)
    expect(await replace.begun(spec, target('10.0.0.2'))).toBe(false)
    expect(names(ecs.made)).not.toContain('stopTask')
  })

  it('refuses, before any change, targets that are no running task of the service', async () => {
    const clock = steppedClock()
    const {ecs, elbv2} = world(clock)
    const refused = await new EcsReplace(ecs.calls, elbv2.calls, clock).refusals(spec, [target('10.0.0.1'), target('10.9.9.9')])
    expect(refused).toEqual([
      expect.stringMatching(/1 of 2 targets are not the address of a running task of ECS service api in cluster prod \(10\.9\.9\.9:8080\)/),
    ])
    expect(names(ecs.made)).not.toContain('stopTask')
  })
})
