import {DescribeServicesCommand, DescribeTasksCommand, ECSClient, ListTasksCommand, RunTaskCommand, type Service, type Task} from '@aws-sdk/client-ecs'
import {
  DeregisterTargetsCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  RegisterTargetsCommand,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {clientConfig} from './moto.js'
import type {Answer, Interception, RecordedCall, RecordingProxy, Reply} from './proxy.js'

/**
 * AWS's behaviour over time, which moto lacks, played in a RecordingProxy for the restart
 * adapters (SSM Run Command, EC2 reboot, ECS task replacement):
 *
 * - SSM: each invocation is Pending, then InProgress, for `invocationSeconds` after SendCommand,
 *   then ends as configured per instance (ssmEnds): Success, Failed, hanging until its
 *   execution timeout (TimedOut), or never delivered until the command's TimeoutSeconds
 *   (TimedOut); CancelCommand cancels it. moto answers Success at once, has no CancelCommand,
 *   ignores ListCommands' Filters, and puts every instance of the account in each command.
 * - EC2: after RebootInstances the instance's status checks read `initializing` for
 *   `rebootSeconds`, then `ok` (or `impaired`, rebootEnds). moto always reads ok/ok.
 * - ECS: ecsService() plays the service scheduler for one service: a task stopped through the
 *   proxy is deregistered from the service's target group, and a replacement is started and
 *   registered after `replaceAfterSeconds`, `initial` in DescribeTargetHealth for
 *   `healthyAfterSeconds`, then healthy. ListTasks honours serviceName and DescribeServices
 *   counts the service's tasks. moto has no scheduler and ignores serviceName.
 *
 * Side effects (RunTask, RegisterTargets, DeregisterTargets, DescribeTasks) go to moto directly,
 * so the proxy records only what the client under test called.
 */

export interface OverTimeSettings {
  /** Seconds from SendCommand until an invocation ends (Success or Failed). */
  invocationSeconds: number
  /** Of those, seconds it is Pending (not yet delivered to the instance) before InProgress. */
  pendingSeconds: number
  /** Seconds after SendCommand that GetCommandInvocation answers InvocationDoesNotExist, as AWS can at first. */
  invisibleSeconds: number
  /** Seconds an instance's status checks read `initializing` after RebootInstances. */
  rebootSeconds: number
}

/** How an instance's invocations end. */
export type SsmOutcome =
  | {ends: 'Success'; stdout?: string}
  | {ends: 'Failed'; responseCode?: number; stdout?: string; stderr?: string}
  /** Delivered and running, never finishing: InProgress until its execution timeout (the document's `executionTimeout` parameter, 3600 s by default), then TimedOut (ExecutionTimedOut). */
  | {ends: 'Hang'}
  /** Never delivered (the agent is offline): Pending until the command's TimeoutSeconds, then TimedOut (DeliveryTimedOut). */
  | {ends: 'Undelivered'}

export interface InvocationState {
  Status: 'Pending' | 'InProgress' | 'Success' | 'Failed' | 'Cancelled' | 'TimedOut'
  StatusDetails: string
  ResponseCode: number
  StandardOutputContent: string
  StandardErrorContent: string
  /** Date.now() values; undefined while not started / not ended. */
  startedAt?: number
  endedAt?: number
}

interface Invocation {
  instanceId: string
  outcome: SsmOutcome
  cancelledAt?: number
}

/** A command sent through the proxy, as the emulation keeps it. */
export interface SentCommand {
  commandId: string
  instanceIds: string[]
  documentName: string
  comment: string
  parameters: Record<string, string[]>
  timeoutSeconds: number
  /** When SendCommand was answered (Date.now()). */
  sentAt: number
  invocationSeconds: number
  pendingSeconds: number
  invocations: Invocation[]
}

export interface EcsServiceOptions {
  cluster: string
  service: string
  /** The group its tasks are registered in; the service's first load balancer's when left out. */
  targetGroupArn?: string
  /** The tasks' target port; the service's first load balancer's containerPort when left out. */
  port?: number
  /** Seconds from a task's stop until its replacement runs and is registered (default 1). */
  replaceAfterSeconds?: number
  /** Seconds a replacement is listed `initial` before `healthy` (default 1). */
  healthyAfterSeconds?: number
}

/** A task the emulated scheduler started in place of a stopped one. */
export interface Replacement {
  taskArn: string
  ip: string
  /** `ip:port`, as the target group lists it. */
  target: string
  /** The stopped task it replaces. */
  replaces: string
  /** Date.now() when it was registered, and when its health checks pass. */
  registeredAt: number
  healthyAt: number
}

/** One ECS service whose scheduler is emulated. */
export class EcsServiceEmulation {
  readonly cluster: string
  readonly service: string
  targetGroupArn?: string
  port?: number
  readonly replaceAfterSeconds: number
  readonly healthyAfterSeconds: number
  /** Tasks stopped through the proxy, in order. */
  readonly stopped: string[] = []
  readonly replacements: Replacement[] = []
  /** Replacements due and not yet started. */
  pending = 0

  constructor(opts: EcsServiceOptions) {
    this.cluster = lastSegment(opts.cluster)
    this.service = lastSegment(opts.service)
    this.targetGroupArn = opts.targetGroupArn
    this.port = opts.port
    this.replaceAfterSeconds = opts.replaceAfterSeconds ?? 1
    this.healthyAfterSeconds = opts.healthyAfterSeconds ?? 1
  }

  get group(): string {
    return `service:${this.service}`
  }
}

const json = 'application/x-amz-json-1.1'

function reply(status: number, body: unknown): {reply: Reply} {
  return {reply: {status, contentType: json, body: JSON.stringify(body)}}
}

/** A JSON-protocol error as AWS sends it. */
function awsError(type: string, message?: string): {reply: Reply} {
  return reply(400, message === undefined ? {__type: type} : {__type: type, message})
}

function lastSegment(nameOrArn: string): string {
  return nameOrArn.slice(nameOrArn.lastIndexOf('/') + 1)
}

function parse(body: string): Record<string, any> {
  try {
    return body ? (JSON.parse(body) as Record<string, any>) : {}
  } catch {
    return {}
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString()
}

/** A task's ENI address (its awsvpc target id). */
export function taskIp(task: Pick<Task, 'attachments'>): string | undefined {
  for (const attachment of task.attachments ?? []) for (const d of attachment.details ?? []) if (d.name === 'privateIPv4Address') return d.value
  return undefined
}

/**
 * Pins moto's ECS task state machine, so a RUNNING task stays RUNNING however often it is
 * described (by default each DescribeTasks walks it a step towards STOPPED). moto-wide: every
 * test of the run shares the server; StopTask still sets STOPPED at once.
 */
export async function pinEcsTasks(motoEndpoint: string): Promise<void> {
  const response = await fetch(`${motoEndpoint}/moto-api/state-manager/set-transition`, {
    method: 'POST',
    body: JSON.stringify({model_name: 'ecs::task', transition: {progression: 'manual', times: 1_000_000}}),
  })
  if (!response.ok) throw new Error(`moto refused to pin ecs::task: HTTP ${response.status} ${await response.text()}`)
}

/** The state of an instance's invocation of `command` at `now`, as AWS would report it. */
export function invocationAt(command: SentCommand, invocation: Invocation, now = Date.now()): InvocationState {
  const {outcome} = invocation
  const pendingMs = Math.min(command.pendingSeconds, command.invocationSeconds) * 1000
  const deliveredAt = outcome.ends === 'Undelivered' ? Infinity : command.sentAt + pendingMs
  const executionTimeout = Number(command.parameters.executionTimeout?.[0] ?? 3600)
  const endsAt =
    outcome.ends === 'Hang'
      ? deliveredAt + executionTimeout * 1000
      : outcome.ends === 'Undelivered'
        ? command.sentAt + command.timeoutSeconds * 1000
        : command.sentAt + command.invocationSeconds * 1000
  const base = {ResponseCode: -1, StandardOutputContent: '', StandardErrorContent: '', startedAt: deliveredAt <= now ? deliveredAt : undefined}
  const cancelled = invocation.cancelledAt
  if (cancelled !== undefined && cancelled < endsAt && now >= cancelled)
    return {...base, Status: 'Cancelled', StatusDetails: 'Cancelled', startedAt: deliveredAt <= cancelled ? deliveredAt : undefined, endedAt: cancelled}
  if (now < endsAt)
    return now < deliveredAt ? {...base, Status: 'Pending', StatusDetails: 'Pending'} : {...base, Status: 'InProgress', StatusDetails: 'InProgress'}
  switch (outcome.ends) {
    case 'Success':
      return {...base, Status: 'Success', StatusDetails: 'Success', ResponseCode: 0, StandardOutputContent: outcome.stdout ?? '', endedAt: endsAt}
    case 'Failed':
      return {
        ...base,
        Status: 'Failed',
        StatusDetails: 'Failed',
        ResponseCode: outcome.responseCode ?? 1,
        StandardOutputContent: outcome.stdout ?? '',
        StandardErrorContent: outcome.stderr ?? 'failed to run commands: exit status 1',
        endedAt: endsAt,
      }
    case 'Hang':
      return {...base, Status: 'TimedOut', StatusDetails: 'ExecutionTimedOut', endedAt: endsAt}
    case 'Undelivered':
      return {...base, Status: 'TimedOut', StatusDetails: 'DeliveryTimedOut', startedAt: undefined, endedAt: endsAt}
  }
}

/** A command's overall status from its invocations', as ListCommands gives it. */
function commandAt(command: SentCommand, now: number) {
  const states = command.invocations.map((i) => invocationAt(command, i, now))
  const done = states.filter((s) => s.endedAt !== undefined)
  const count = (status: string) => states.filter((s) => s.Status === status).length
  let Status: string
  let StatusDetails: string
  if (done.length < states.length) {
    Status = states.every((s) => s.Status === 'Pending') ? 'Pending' : 'InProgress'
    StatusDetails = Status
  } else if (count('Success') === states.length) {
    Status = StatusDetails = 'Success'
  } else if (count('Cancelled') > 0) {
    Status = StatusDetails = 'Cancelled'
  } else if (count('Failed') > 0) {
    Status = StatusDetails = 'Failed'
  } else {
    Status = 'TimedOut'
    StatusDetails = states.some((s) => s.StatusDetails === 'ExecutionTimedOut') ? 'ExecutionTimedOut' : 'DeliveryTimedOut'
  }
  return {
    Status,
    StatusDetails,
    TargetCount: states.length,
    CompletedCount: done.length,
    ErrorCount: states.filter((s) => s.Status === 'Failed' || s.StatusDetails === 'ExecutionTimedOut').length,
    DeliveryTimedOutCount: states.filter((s) => s.StatusDetails === 'DeliveryTimedOut').length,
  }
}

/** `InstanceId.1=...&InstanceId.2=...` of an EC2 query body. */
function instanceIdsOf(body: string): string[] {
  const params = new URLSearchParams(body)
  const out: string[] = []
  for (let n = 1; params.has(`InstanceId.${n}`); n++) out.push(params.get(`InstanceId.${n}`)!)
  return out
}

function statusChecks(status: 'initializing' | 'ok' | 'impaired', since?: number): string {
  const reachability = status === 'ok' ? 'passed' : status === 'impaired' ? 'failed' : 'initializing'
  const impaired = status === 'impaired' && since !== undefined ? `<impairedSince>${iso(since)}</impairedSince>` : ''
  return `<details><item><name>reachability</name><status>${reachability}</status>${impaired}</item></details><status>${status}</status>`
}

interface Reboot {
  at: number
  ends: 'ok' | 'impaired'
}

export class AwsOverTime {
  readonly settings: OverTimeSettings
  /** Commands sent through the proxy, in order. */
  readonly commands: SentCommand[] = []
  /** What went wrong in the emulation's own work (a replacement it could not start): a test can expect it empty. */
  readonly errors: unknown[] = []
  private readonly outcomes = new Map<string, SsmOutcome>()
  private readonly sends = new Map<string, number>()
  private readonly rebootEndings = new Map<string, 'ok' | 'impaired'>()
  private readonly rebootsOf = new Map<string, Reboot[]>()
  private readonly services: EcsServiceEmulation[] = []
  private readonly stopsOf = new Map<string, number>()
  /** When each task was created and each stopped task began stopping (Date.now()), which ECS reports and moto does not. */
  private readonly createdAt = new Map<string, number>()
  private readonly stoppingAt = new Map<string, number>()
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly inflight = new Set<Promise<void>>()
  private readonly ecs: ECSClient
  private readonly elb: ElasticLoadBalancingV2Client
  private readonly remove: () => void

  private constructor(
    readonly proxy: RecordingProxy,
    readonly motoEndpoint: string,
    settings: Partial<OverTimeSettings>,
  ) {
    this.settings = {invocationSeconds: 1, pendingSeconds: 0.2, invisibleSeconds: 0, rebootSeconds: 1, ...settings}
    this.ecs = new ECSClient(clientConfig(motoEndpoint))
    this.elb = new ElasticLoadBalancingV2Client(clientConfig(motoEndpoint))
    this.remove = proxy.intercept(async (call) => {
      const found = await this.intercept(call)
      if (!found || !('rewrite' in found) || !found.rewrite) return found
      const rewrite = found.rewrite
      // A rewrite that fails is the emulation's own failure: kept for the test to see, besides the proxy's 500.
      return {
        ...found,
        rewrite: async (answer: Answer) => {
          try {
            return await rewrite(answer)
          } catch (error) {
            this.errors.push(error)
            throw error
          }
        },
      }
    })
  }

  /** Installs the emulation on `proxy` (in front of moto at `motoEndpoint`) until stop(); pins moto's ECS task states. */
  static async install(proxy: RecordingProxy, motoEndpoint: string, settings: Partial<OverTimeSettings> = {}): Promise<AwsOverTime> {
    await pinEcsTasks(motoEndpoint)
    return new AwsOverTime(proxy, motoEndpoint, settings)
  }

  /** From now on, commands sent to `instanceId` end this way (Success by default). */
  ssmEnds(instanceId: string, outcome: SsmOutcome): void {
    this.outcomes.set(instanceId, outcome)
  }

  /** How many SendCommands named `instanceId` (answered 200). */
  sendCommands(instanceId: string): number {
    return this.sends.get(instanceId) ?? 0
  }

  /** The current state of an invocation, as GetCommandInvocation would answer it. */
  invocation(commandId: string, instanceId: string, now = Date.now()): InvocationState | undefined {
    const command = this.commands.find((c) => c.commandId === commandId)
    const invocation = command?.invocations.find((i) => i.instanceId === instanceId)
    return command && invocation ? invocationAt(command, invocation, now) : undefined
  }

  /** From now on, reboots of `instanceId` end with its status checks `ok` (the default) or `impaired`. */
  rebootEnds(instanceId: string, checks: 'ok' | 'impaired'): void {
    this.rebootEndings.set(instanceId, checks)
  }

  /** How many RebootInstances named `instanceId` (answered 200). */
  reboots(instanceId: string): number {
    return this.rebootsOf.get(instanceId)?.length ?? 0
  }

  /** Plays ECS's service scheduler for this service until stop(). */
  ecsService(opts: EcsServiceOptions): EcsServiceEmulation {
    const emulation = new EcsServiceEmulation(opts)
    this.services.push(emulation)
    return emulation
  }

  /** How many times a task with this ENI address was stopped through the proxy. */
  stops(ip: string): number {
    return this.stopsOf.get(ip) ?? 0
  }

  /** Ends the emulation: no more replacements; waits for the ones under way; the proxy forwards as before. */
  async stop(): Promise<void> {
    this.remove()
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    await Promise.allSettled([...this.inflight])
    this.ecs.destroy()
    this.elb.destroy()
  }

  private intercept(call: RecordedCall): Interception | undefined | Promise<Interception | undefined> {
    switch (`${call.service}.${call.operation}`) {
      case 'ssm.SendCommand':
        return this.sendCommand(call)
      case 'ssm.GetCommandInvocation':
        return this.getCommandInvocation(call)
      case 'ssm.CancelCommand':
        return this.cancelCommand(call)
      case 'ssm.ListCommands':
        return {rewrite: (answer) => this.listCommands(call, answer)}
      case 'EC2.RebootInstances':
        return {rewrite: (answer) => this.rebooted(call, answer)}
      case 'EC2.DescribeInstanceStatus':
        return {rewrite: (answer) => this.instanceStatus(answer)}
      case 'ecs.StopTask':
        return {rewrite: (answer) => this.stopTask(answer)}
      case 'ecs.DescribeTasks':
        return {rewrite: (answer) => this.taskTimes(answer)}
      case 'ecs.ListTasks':
        return parse(call.body).serviceName ? {rewrite: (answer) => this.listTasks(call, answer)} : undefined
      case 'ecs.DescribeServices':
        return this.services.length > 0 ? {rewrite: (answer) => this.describeServices(answer)} : undefined
      case 'ELBv2.DescribeTargetHealth':
        return this.services.length > 0 ? {rewrite: (answer) => this.targetHealth(call, answer)} : undefined
      default:
        return undefined
    }
  }

  // SSM ----------------------------------------------------------------------------------------

  private sendCommand(call: RecordedCall): Interception {
    const request = parse(call.body)
    const timeout = request.TimeoutSeconds as number | undefined
    if (timeout !== undefined && (timeout < 30 || timeout > 2_592_000))
      return awsError(
        'ValidationException',
        `1 validation error detected: Value '${timeout}' at 'timeoutSeconds' failed to satisfy constraint: Member must have value ${timeout < 30 ? 'greater than or equal to 30' : 'less than or equal to 2592000'}`,
      )
    const instanceIds = (request.InstanceIds as string[] | undefined) ?? []
    // moto adds every instance of the account to a command without Targets; an instance-id
    // target names the same instances, so moto's own record (ListCommands) is right.
    const body = instanceIds.length > 0 && !request.Targets ? JSON.stringify({...request, Targets: [{Key: 'instance-id', Values: instanceIds}]}) : undefined
    return {
      body,
      rewrite: (answer) => {
        if (answer.status !== 200) return answer
        const out = parse(answer.body)
        const command = out.Command as Record<string, any>
        const ids = instanceIds.length > 0 ? instanceIds : (command.InstanceIds as string[])
        const sent: SentCommand = {
          commandId: command.CommandId as string,
          instanceIds: ids,
          documentName: (request.DocumentName as string | undefined) ?? '',
          comment: (request.Comment as string | undefined) ?? '',
          parameters: (request.Parameters as Record<string, string[]> | undefined) ?? {},
          timeoutSeconds: timeout ?? 3600,
          // The command exists from AWS's answer on: moto's own time to answer is no part of it.
          sentAt: Date.now(),
          invocationSeconds: this.settings.invocationSeconds,
          pendingSeconds: this.settings.pendingSeconds,
          invocations: ids.map((instanceId) => ({instanceId, outcome: this.outcomes.get(instanceId) ?? {ends: 'Success'}})),
        }
        this.commands.push(sent)
        for (const id of ids) this.sends.set(id, this.sendCommands(id) + 1)
        // AWS answers every SendCommand Pending, before any invocation is delivered.
        out.Command = {
          ...command,
          InstanceIds: ids,
          Targets: request.Targets ?? [],
          ...commandAt(sent, call.at),
          Status: 'Pending',
          StatusDetails: 'Pending',
          CompletedCount: 0,
          TimeoutSeconds: sent.timeoutSeconds,
        }
        return {status: 200, body: JSON.stringify(out)}
      },
    }
  }

  private getCommandInvocation(call: RecordedCall): Interception | undefined {
    const request = parse(call.body)
    const command = this.commands.find((c) => c.commandId === request.CommandId)
    const invocation = command?.invocations.find((i) => i.instanceId === request.InstanceId)
    // Unknown to the emulation: moto answers (InvocationDoesNotExist, or its own Success).
    if (!command || !invocation) return undefined
    const now = Date.now()
    if (now < command.sentAt + this.settings.invisibleSeconds * 1000) return awsError('InvocationDoesNotExist')
    const state = invocationAt(command, invocation, now)
    const elapsed = state.startedAt === undefined ? 0 : ((state.endedAt ?? now) - state.startedAt) / 1000
    return reply(200, {
      CommandId: command.commandId,
      InstanceId: invocation.instanceId,
      Comment: command.comment,
      DocumentName: command.documentName,
      DocumentVersion: '$DEFAULT',
      PluginName: (request.PluginName as string | undefined) ?? 'aws:runShellScript',
      ResponseCode: state.ResponseCode,
      ExecutionStartDateTime: state.startedAt === undefined ? '' : iso(state.startedAt),
      ExecutionElapsedTime: `PT${elapsed.toFixed(3)}S`,
      ExecutionEndDateTime: state.endedAt === undefined ? '' : iso(state.endedAt),
      Status: state.Status,
      StatusDetails: state.StatusDetails,
      StandardOutputContent: state.StandardOutputContent,
      StandardOutputUrl: '',
      StandardErrorContent: state.StandardErrorContent,
      StandardErrorUrl: '',
      CloudWatchOutputConfig: {CloudWatchLogGroupName: '', CloudWatchOutputEnabled: false},
    })
  }

  /** moto has no CancelCommand (it answers 500). AWS cancels the named invocations not yet ended. */
  private cancelCommand(call: RecordedCall): Interception {
    const request = parse(call.body)
    const command = this.commands.find((c) => c.commandId === request.CommandId)
    if (!command) return awsError('InvalidCommandId')
    const named = (request.InstanceIds as string[] | undefined) ?? command.instanceIds
    if (named.some((id) => !command.instanceIds.includes(id)))
      return awsError('InvalidInstanceId', 'Instances must be a subset of the instances the command was sent to')
    for (const invocation of command.invocations)
      if (named.includes(invocation.instanceId) && invocation.cancelledAt === undefined && invocationAt(command, invocation, call.at).endedAt === undefined)
        invocation.cancelledAt = call.at
    return reply(200, {})
  }

  private listCommands(call: RecordedCall, answer: Answer): Answer {
    if (answer.status !== 200) return answer
    const request = parse(call.body)
    const filters = (request.Filters as Array<{key: string; value: string}> | undefined) ?? []
    const out = parse(answer.body)
    const now = Date.now()
    const commands = ((out.Commands as Array<Record<string, any>> | undefined) ?? []).map((c) => {
      const known = this.commands.find((k) => k.commandId === c.CommandId)
      if (!known) return c
      return {...c, InstanceIds: known.instanceIds, Targets: [], TimeoutSeconds: known.timeoutSeconds, ...commandAt(known, now)}
    })
    // moto ignores Filters. Its RequestedDateTime is epoch seconds.
    const requested = (c: Record<string, any>) =>
      typeof c.RequestedDateTime === 'number' ? c.RequestedDateTime * 1000 : Date.parse(String(c.RequestedDateTime))
    out.Commands = commands.filter((c) =>
      filters.every((f) => {
        switch (f.key) {
          case 'InvokedAfter':
            return requested(c) >= Date.parse(f.value)
          case 'InvokedBefore':
            return requested(c) <= Date.parse(f.value)
          case 'Status':
            return c.Status === f.value
          case 'DocumentName':
            return c.DocumentName === f.value
          default:
            return true
        }
      }),
    )
    return {status: 200, body: JSON.stringify(out)}
  }

  // EC2 ----------------------------------------------------------------------------------------

  private rebooted(call: RecordedCall, answer: Answer): Answer {
    const at = Date.now()
    if (answer.status === 200)
      for (const id of instanceIdsOf(call.body)) {
        const list = this.rebootsOf.get(id) ?? []
        list.push({at, ends: this.rebootEndings.get(id) ?? 'ok'})
        this.rebootsOf.set(id, list)
      }
    return answer
  }

  private instanceStatus(answer: Answer): Answer {
    if (answer.status !== 200) return answer
    const now = Date.now()
    let body = answer.body
    for (const [id, reboots] of this.rebootsOf) {
      const last = reboots.at(-1)!
      const until = last.at + this.settings.rebootSeconds * 1000
      const [instance, system] =
        now < until ? [statusChecks('initializing'), statusChecks('initializing')] : [statusChecks(last.ends, until), statusChecks('ok')]
      body = body.replace(
        new RegExp(`(<instanceId>${id}</instanceId>[\\s\\S]*?<instanceStatus>)[\\s\\S]*?(</instanceStatus>\\s*<systemStatus>)[\\s\\S]*?(</systemStatus>)`),
        (_m, open: string, between: string, close: string) => `${open}${instance}${between}${system}${close}`,
      )
    }
    return {status: 200, body}
  }

  // ECS ----------------------------------------------------------------------------------------

  private serviceOf(task: Pick<Task, 'clusterArn' | 'group'>): EcsServiceEmulation | undefined {
    const cluster = lastSegment(task.clusterArn ?? '')
    return this.services.find((s) => s.cluster === cluster && s.group === task.group)
  }

  /** Fills in the group and port the scheduler registers tasks with, from the service when not given. */
  private async target(s: EcsServiceEmulation): Promise<{targetGroupArn: string; port: number}> {
    if (!s.targetGroupArn || s.port === undefined) {
      const lb = (await this.describeService(s)).loadBalancers?.[0]
      s.targetGroupArn ??= lb?.targetGroupArn
      s.port ??= lb?.containerPort
      if (!s.targetGroupArn || s.port === undefined) throw new Error(`service ${s.service} has no load balancer to register its tasks in`)
    }
    return {targetGroupArn: s.targetGroupArn, port: s.port}
  }

  private async describeService(s: EcsServiceEmulation): Promise<Service> {
    const out = await this.ecs.send(new DescribeServicesCommand({cluster: s.cluster, services: [s.service]}))
    const service = out.services?.[0]
    if (!service) throw new Error(`no service ${s.service} in cluster ${s.cluster}`)
    return service
  }

  /** The tasks of `group` in `cluster` whose desired status is `desiredStatus`, read from moto. */
  private async tasksOf(cluster: string, group: string, desiredStatus: 'RUNNING' | 'STOPPED' = 'RUNNING'): Promise<Task[]> {
    const arns = (await this.ecs.send(new ListTasksCommand({cluster, desiredStatus}))).taskArns ?? []
    // moto lists stopped tasks whatever desiredStatus asks.
    return (await this.describeTasks(cluster, arns)).filter((t) => t.group === group && t.desiredStatus === desiredStatus)
  }

  private async describeTasks(cluster: string, arns: string[]): Promise<Task[]> {
    const tasks: Task[] = []
    for (let i = 0; i < arns.length; i += 100)
      tasks.push(...((await this.ecs.send(new DescribeTasksCommand({cluster, tasks: arns.slice(i, i + 100)}))).tasks ?? []))
    return tasks
  }

  /** As ECS does when a service's task stops: deregister it now, start its replacement after replaceAfterSeconds. */
  private async stopTask(answer: Answer): Promise<Answer> {
    if (answer.status !== 200) return answer
    const task = parse(answer.body).task as Task | undefined
    const s = task && this.serviceOf(task)
    if (!task?.taskArn || !s || s.stopped.includes(task.taskArn)) return answer
    s.stopped.push(task.taskArn)
    this.stoppingAt.set(task.taskArn, Date.now())
    const ip = taskIp(task)
    if (ip) this.stopsOf.set(ip, this.stops(ip) + 1)
    const {targetGroupArn, port} = await this.target(s)
    // ECS deregisters a stopping task; one its client took out already (as sluice drains a batch) is
    // no longer registered, and moto refuses to deregister what is not there, where ELBv2 does not.
    if (ip && (await this.registered(targetGroupArn, `${ip}:${port}`))) {
      await this.elb.send(new DeregisterTargetsCommand({TargetGroupArn: targetGroupArn, Targets: [{Id: ip, Port: port}]}))
      this.proxy.noteDeregistered(targetGroupArn, [`${ip}:${port}`])
    }
    s.pending++
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      const work = this.replace(s, task.taskArn!)
        .catch((error: unknown) => {
          this.errors.push(error)
          console.error(`the emulated ECS scheduler could not replace ${task.taskArn}:`, error)
        })
        .finally(() => {
          s.pending--
          this.inflight.delete(work)
        })
      this.inflight.add(work)
    }, s.replaceAfterSeconds * 1000)
    this.timers.add(timer)
    return answer
  }

  private async registered(targetGroupArn: string, target: string): Promise<boolean> {
    const health = await this.elb.send(new DescribeTargetHealthCommand({TargetGroupArn: targetGroupArn}))
    return (health.TargetHealthDescriptions ?? []).some((d) => `${d.Target?.Id}:${d.Target?.Port}` === target)
  }

  /** Starts one task in place of `stopped` if the service runs fewer than its desiredCount, and registers it. */
  private async replace(s: EcsServiceEmulation, stopped: string): Promise<void> {
    const service = await this.describeService(s)
    const running = await this.tasksOf(s.cluster, s.group)
    if (running.length >= (service.desiredCount ?? 0)) return
    const {targetGroupArn, port} = await this.target(s)
    const run = await this.ecs.send(
      new RunTaskCommand({
        cluster: s.cluster,
        taskDefinition: service.taskDefinition,
        count: 1,
        launchType: service.launchType,
        group: s.group,
        startedBy: service.deployments?.[0]?.id ?? 'ecs-svc',
        networkConfiguration: service.networkConfiguration,
      }),
    )
    const task = run.tasks?.[0]
    if (task?.taskArn) this.createdAt.set(task.taskArn, Date.now())
    const ip = task && taskIp(task)
    if (!task?.taskArn || !ip) throw new Error(`moto started no task with an address for ${s.service}: ${JSON.stringify(run.failures ?? run.tasks)}`)
    await this.elb.send(new RegisterTargetsCommand({TargetGroupArn: targetGroupArn, Targets: [{Id: ip, Port: port}]}))
    const registeredAt = Date.now()
    s.replacements.push({
      taskArn: task.taskArn,
      ip,
      target: `${ip}:${port}`,
      replaces: stopped,
      registeredAt,
      healthyAt: registeredAt + s.healthyAfterSeconds * 1000,
    })
  }

  /**
   * moto gives a task no createdAt and no stoppingAt, which ECS does: a task the emulation has not
   * started is taken as created when first seen (before any stop of the test's), one it stopped as
   * stopping from then.
   */
  private taskTimes(answer: Answer): Answer {
    if (answer.status !== 200) return answer
    const out = parse(answer.body)
    for (const task of (out.tasks as Array<Record<string, any>> | undefined) ?? []) {
      const arn = String(task.taskArn)
      if (!this.createdAt.has(arn)) this.createdAt.set(arn, Date.now())
      task.createdAt ??= this.createdAt.get(arn)! / 1000
      const stopping = this.stoppingAt.get(arn)
      if (stopping !== undefined) task.stoppingAt ??= stopping / 1000
    }
    return {status: 200, body: JSON.stringify(out)}
  }

  /** moto ignores ListTasks' serviceName: keep the tasks of the service's group. */
  private async listTasks(call: RecordedCall, answer: Answer): Promise<Answer> {
    if (answer.status !== 200) return answer
    const request = parse(call.body)
    const out = parse(answer.body)
    const arns = (out.taskArns as string[] | undefined) ?? []
    if (arns.length === 0) return answer
    const group = `service:${lastSegment(String(request.serviceName))}`
    const tasks = await this.describeTasks(String(request.cluster ?? 'default'), arns)
    // AWS lists only the tasks of the desired status asked for, RUNNING when none is; moto lists every one.
    const desired = String(request.desiredStatus ?? 'RUNNING')
    const keep = new Set(tasks.filter((t) => t.group === group && t.desiredStatus === desired).map((t) => t.taskArn))
    out.taskArns = arns.filter((a) => keep.has(a))
    return {status: 200, body: JSON.stringify(out)}
  }

  /** moto counts no task of a service (it starts none): count the emulated ones. */
  private async describeServices(answer: Answer): Promise<Answer> {
    if (answer.status !== 200) return answer
    const out = parse(answer.body)
    for (const service of (out.services as Array<Record<string, any>> | undefined) ?? []) {
      const s = this.services.find((e) => e.cluster === lastSegment(String(service.clusterArn)) && e.service === service.serviceName)
      if (!s) continue
      const runningCount = (await this.tasksOf(s.cluster, s.group)).length
      const counts = {runningCount, pendingCount: s.pending}
      Object.assign(service, counts)
      for (const deployment of (service.deployments as Array<Record<string, any>> | undefined) ?? [])
        if (deployment.status === 'PRIMARY') {
          Object.assign(deployment, counts)
          if (runningCount >= (service.desiredCount as number) && s.pending === 0) {
            deployment.rolloutState = 'COMPLETED'
            deployment.rolloutStateReason = `ECS deployment ${deployment.id} completed.`
          }
        }
    }
    return {status: 200, body: JSON.stringify(out)}
  }

  /** A replacement's target reads `initial` until its health checks pass, as ELBv2 lists a new target. */
  private targetHealth(call: RecordedCall, answer: Answer): Answer {
    if (answer.status !== 200) return answer
    const arn = new URLSearchParams(call.body).get('TargetGroupArn')
    const now = Date.now()
    const initial = new Set(
      this.services
        .filter((s) => s.targetGroupArn === arn)
        .flatMap((s) => s.replacements)
        .filter((r) => now < r.healthyAt)
        .map((r) => r.target),
    )
    if (initial.size === 0) return answer
    const body = answer.body.replace(/<member>([\s\S]*?)<\/member>/g, (member: string) => {
      const id = /<Target>[\s\S]*?<Id>([^<]+)<\/Id>/.exec(member)?.[1]
      const port = /<Target>[\s\S]*?<Port>([^<]+)<\/Port>/.exec(member)?.[1]
      return id && initial.has(`${id}:${port ?? ''}`)
        ? member.replace(
            /<TargetHealth>[\s\S]*?<\/TargetHealth>/,
            '<TargetHealth><State>initial</State><Reason>Elb.RegistrationInProgress</Reason><Description>Target registration is in progress</Description></TargetHealth>',
          )
        : member
    })
    return {status: 200, body}
  }
}
