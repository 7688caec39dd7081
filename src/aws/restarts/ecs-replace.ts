import {FailedError} from '../../errors.js'
import type {Clock, EcsReplaceSpec, HookResult, Target} from '../../ports/control-plane.js'
import {awsCall} from '../errors.js'
import type {EcsCalls, Elbv2Calls} from '../sdk.js'

/** Seconds between looks at the service while its replacement starts. */
const pollSeconds = 3

/** Task ARNs per DescribeTasks call: the API's most. */
const perDescribe = 100

interface ServiceTask {
  arn: string
  ip: string | undefined
  lastStatus: string
  desiredStatus: string
  createdAt: Date | undefined
  /** When ECS began stopping it (AWS's clock, as createdAt). */
  stoppingAt: Date | undefined
}

interface Service {
  desiredCount: number
  /** The target groups the service registers its tasks in, with the container port it registers. */
  targetGroups: Array<{arn: string; port: number | undefined}>
}

const shortTask = (arn: string): string => arn.split('/').at(-1) ?? arn

/**
 * An ECS service's task replaced, as the service scheduler does it for a deployment: the task the
 * target is (matched by its awsvpc address) is stopped, and the service starts another and
 * registers it in its target groups. Done when the service again has its desired count of running
 * tasks, each registered and healthy in every target group it uses, within the hook's timeout.
 *
 * The new task has an address of its own: the stopped target is gone for good, so the cycle does
 * not register it again (`rejoined`). Whether a task was stopped is read from ECS, so the same
 * call finishes a replacement a killed run had begun: it stops the task only if it is still
 * running and meant to be.
 */
export class EcsReplace {
  constructor(
    private readonly ecs: EcsCalls,
    private readonly elbv2: Elbv2Calls,
    private readonly clock: Clock,
  ) {}

  async run(spec: EcsReplaceSpec, target: Target, signal?: AbortSignal): Promise<HookResult> {
    return this.replace(spec, target, undefined, signal)
  }

  async finish(spec: EcsReplaceSpec, target: Target, since: Date, signal?: AbortSignal): Promise<HookResult> {
    return this.replace(spec, target, since, signal)
  }

  /** Why the service cannot replace these targets, before anything changes: a service not there, a target no task of it has. */
  async refusals(spec: EcsReplaceSpec, targets: Target[], signal?: AbortSignal): Promise<string[]> {
    const service = await this.service(spec, signal)
    if (typeof service === 'string') return [service]
    const tasks = await this.tasks(spec, signal)
    const addresses = new Set(tasks.map((t) => t.ip))
    const strangers = targets.filter((t) => !addresses.has(t.ip ?? t.targetId))
    if (strangers.length === 0) return []
    const named = strangers.slice(0, 3).map((t) => t.id)
    return [
      `ecs-replace: ${strangers.length} of ${targets.length} targets are not the address of a running task of ECS service ${spec.service} in cluster ${spec.cluster} (${named.join(', ')}${strangers.length > 3 ? ', …' : ''}); ecs-replace replaces the tasks of an awsvpc service whose target group is this pool's`,
    ]
  }

  /**
   * Whether a replacement of this target was begun: no task of the service at its address is
   * still meant to run (its stop was sent). Read on resume, for a replacement journalled without
   * its outcome.
   */
  async begun(spec: EcsReplaceSpec, target: Target, signal?: AbortSignal): Promise<boolean> {
    const ip = target.ip ?? target.targetId
    return !(await this.tasks(spec, signal)).some((t) => t.ip === ip)
  }

  /** `resumedSince`: finishing a replacement a killed run began then (its intent's time). */
  private async replace(spec: EcsReplaceSpec, target: Target, resumedSince: Date | undefined, signal?: AbortSignal): Promise<HookResult> {
    const resumed = resumedSince !== undefined
    const started = this.clock.now()
    const ip = target.ip ?? target.targetId
    const service = await this.service(spec, signal)
    if (typeof service === 'string') throw new FailedError(service)
    const before = await this.tasks(spec, signal)
    const task = before.find((t) => t.ip === ip)
    let stopped: string
    if (task && task.desiredStatus === 'RUNNING') {
      await awsCall(
        'ECS',
        'StopTask',
        `task ${task.arn}`,
        (abortSignal) => this.ecs.stopTask({cluster: spec.cluster, task: task.arn, reason: spec.reason}, abortSignal),
        signal,
      )
      stopped = `stopped task ${shortTask(task.arn)} (${ip})`
    } else if (resumed || task) {
      // Stopped already, by the run this one resumes: its replacement is waited for, not a second one made.
      stopped = `task at ${ip} already stopped${resumed ? ' by the run this one resumes' : ''}`
    } else throw new FailedError(`no running task of ECS service ${spec.service} in cluster ${spec.cluster} has address ${ip}`)
    // The new tasks: those not running when the stop was sent; finishing a killed run's
    // replacement, those ECS created after it began stopping the old one (both on ECS's clock).
    // A stopped task ECS no longer lists (about an hour on) leaves none known to be new: the
    // cycle would rather restart a new task than leave an old one unrestarted.
    const known = new Set(before.map((t) => t.arn))
    const stoppedAt = resumed ? (await this.tasks(spec, signal, 'STOPPED')).find((t) => t.ip === ip)?.stoppingAt : undefined
    const isNew = (t: ServiceTask): boolean =>
      resumed ? stoppedAt !== undefined && t.createdAt !== undefined && t.createdAt.getTime() >= stoppedAt.getTime() : !known.has(t.arn)
    const port = service.targetGroups[0].port
    const deadline = started + spec.timeoutSeconds
    let serving = 0
    for (;;) {
      const tasks = (await this.tasks(spec, signal)).filter((t) => t.lastStatus === 'RUNNING' && t.desiredStatus === 'RUNNING' && t.ip !== ip)
      const healthy = await this.healthyAddresses(service, signal)
      const up = tasks.filter((t) => t.ip !== undefined && healthy.has(t.ip))
      serving = up.length
      if (serving >= service.desiredCount) {
        const fresh = up.filter(isNew).map((t) => t.ip)
        return {
          replacements: fresh.map((ip) => (port === undefined ? ip! : `${ip}:${port}`)),
          note: `ECS service ${spec.service}: ${stopped}; ${serving} of ${service.desiredCount} tasks running and healthy in its target group${service.targetGroups.length === 1 ? '' : 's'} after ${Math.round(this.clock.now() - started)} s${fresh.length ? ` (new: ${fresh.join(', ')})` : ''}`,
          rejoined: true,
        }
      }
      if (this.clock.now() >= deadline) break
      await this.clock.sleep(Math.min(pollSeconds, Math.max(0.1, deadline - this.clock.now())), signal)
    }
    throw new FailedError(
      `ECS service ${spec.service}: ${stopped}, but only ${serving} of its ${service.desiredCount} tasks were running and healthy in its target group${service.targetGroups.length === 1 ? '' : 's'} after ${Math.round(spec.timeoutSeconds)} s, the hook's timeout`,
    )
  }

  private async service(spec: EcsReplaceSpec, signal?: AbortSignal): Promise<Service | string> {
    const answer = await awsCall(
      'ECS',
      'DescribeServices',
      `service ${spec.service} in cluster ${spec.cluster}`,
      (abortSignal) => this.ecs.describeServices({cluster: spec.cluster, services: [spec.service]}, abortSignal),
      signal,
    )
    const found = answer.services?.find((s) => s.serviceName === spec.service || s.serviceArn === spec.service)
    if (!found || found.status === 'INACTIVE') return `ECS has no active service ${spec.service} in cluster ${spec.cluster}`
    const groups = (found.loadBalancers ?? []).filter((lb) => lb.targetGroupArn)
    if (groups.length === 0)
      return `ECS service ${spec.service} in cluster ${spec.cluster} registers its tasks in no target group, so its replacements could never be seen to serve`
    return {desiredCount: found.desiredCount ?? 0, targetGroups: groups.map((lb) => ({arn: lb.targetGroupArn!, port: lb.containerPort}))}
  }

  /** The service's tasks ECS means to run (or, asked, those it has stopped), with each one's awsvpc address. */
  private async tasks(spec: EcsReplaceSpec, signal?: AbortSignal, desiredStatus: 'RUNNING' | 'STOPPED' = 'RUNNING'): Promise<ServiceTask[]> {
    const arns: string[] = []
    let token: string | undefined
    do {
      const page = await awsCall(
        'ECS',
        'ListTasks',
        `service ${spec.service} in cluster ${spec.cluster}`,
        (abortSignal) =>
          this.ecs.listTasks({cluster: spec.cluster, serviceName: spec.service, desiredStatus, ...(token ? {nextToken: token} : {})}, abortSignal),
        signal,
      )
      arns.push(...(page.taskArns ?? []))
      token = page.nextToken
    } while (token)
    const out: ServiceTask[] = []
    for (let k = 0; k < arns.length; k += perDescribe) {
      const answer = await awsCall(
        'ECS',
        'DescribeTasks',
        `tasks of service ${spec.service} in cluster ${spec.cluster}`,
        (abortSignal) => this.ecs.describeTasks({cluster: spec.cluster, tasks: arns.slice(k, k + perDescribe)}, abortSignal),
        signal,
      )
      for (const task of answer.tasks ?? []) {
        // A task's group names its service; ListTasks by service name is not relied on alone.
        if (task.group !== undefined && task.group !== `service:${spec.service}` && !spec.service.endsWith(`/${task.group.replace(/^service:/, '')}`)) continue
        const eni = (task.attachments ?? []).find((a) => a.type === 'ElasticNetworkInterface')
        const ip = eni?.details?.find((d) => d.name === 'privateIPv4Address')?.value
        out.push({
          arn: task.taskArn!,
          ip,
          lastStatus: task.lastStatus ?? 'UNKNOWN',
          desiredStatus: task.desiredStatus ?? 'UNKNOWN',
          createdAt: task.createdAt,
          stoppingAt: task.stoppingAt ?? task.stoppedAt,
        })
      }
    }
    return out
  }

  /** The addresses healthy in every target group the service uses, on the port it registers. */
  private async healthyAddresses(service: Service, signal?: AbortSignal): Promise<Set<string>> {
    let common: Set<string> | undefined
    for (const group of service.targetGroups) {
      const answer = await awsCall(
        'ELBv2',
        'DescribeTargetHealth',
        group.arn,
        (abortSignal) => this.elbv2.describeTargetHealth({TargetGroupArn: group.arn}, abortSignal),
        signal,
      )
      const healthy = new Set(
        (answer.TargetHealthDescriptions ?? [])
          .filter((d) => d.TargetHealth?.State === 'healthy' && (group.port === undefined || d.Target?.Port === group.port))
          .map((d) => d.Target!.Id!),
      )
      common = common ? new Set([...common].filter((ip) => healthy.has(ip))) : healthy
    }
    return common ?? new Set()
  }
}
