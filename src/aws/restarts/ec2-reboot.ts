import {FailedError} from '../../errors.js'
import type {Clock, Ec2RebootSpec, HookResult} from '../../ports/control-plane.js'
import {awsCall} from '../errors.js'
import type {Ec2Calls} from '../sdk.js'

/** Seconds between looks at the status checks, which EC2 itself updates about once a minute. */
const pollSeconds = 5

/** The two status checks of an instance, in words: `instance ok, system ok`. */
interface Checks {
  state: string
  instance: string
  system: string
}

const words = (c: Checks): string => `${c.state}, instance status ${c.instance}, system status ${c.system}`

/**
 * An EC2 reboot, as SSM Automation's AWS-RestartEC2Instance does it in spirit: RebootInstances,
 * then wait until the instance is running with both status checks `ok`. EC2 goes on reporting the
 * checks as they were for a while after a reboot, so they are believed only after `settleSeconds`;
 * the target's own health check, when the cycle returns it to rotation, says whether its service
 * came back. A reboot is never repeated by a resumed run (`finish` only waits): a run that died
 * with the reboot's intent journalled may have sent it, and an instance rebooted twice is a defect.
 */
export class Ec2Reboot {
  constructor(
    private readonly ec2: Ec2Calls,
    private readonly clock: Clock,
  ) {}

  async run(spec: Ec2RebootSpec, instanceId: string, signal?: AbortSignal): Promise<HookResult> {
    const started = this.clock.now()
    await awsCall(
      'EC2',
      'RebootInstances',
      `instance ${instanceId}`,
      (abortSignal) => this.ec2.rebootInstances({InstanceIds: [instanceId]}, abortSignal),
      signal,
    )
    return this.awaitChecks(spec, instanceId, started, 'rebooted', signal)
  }

  async finish(spec: Ec2RebootSpec, instanceId: string, _since: Date, signal?: AbortSignal): Promise<HookResult> {
    return this.awaitChecks(spec, instanceId, this.clock.now(), 'reboot begun before the resume (not sent again)', signal)
  }

  private async awaitChecks(spec: Ec2RebootSpec, instanceId: string, started: number, what: string, signal?: AbortSignal): Promise<HookResult> {
    const deadline = started + spec.timeoutSeconds
    const settled = started + Math.min(spec.settleSeconds, spec.timeoutSeconds)
    if (settled > this.clock.now()) await this.clock.sleep(settled - this.clock.now(), signal)
    let last: Checks = {state: 'unknown', instance: 'unknown', system: 'unknown'}
    for (;;) {
      last = await this.checks(instanceId, signal)
      if (last.state === 'running' && last.instance === 'ok' && last.system === 'ok')
        return {note: `EC2 instance ${instanceId} ${what}: status checks ok after ${Math.round(this.clock.now() - started)} s`}
      if (this.clock.now() >= deadline) break
      await this.clock.sleep(Math.min(pollSeconds, Math.max(0.1, deadline - this.clock.now())), signal)
    }
    throw new FailedError(
      `EC2 instance ${instanceId} ${what}: its status checks did not pass within ${Math.round(spec.timeoutSeconds)} s, the hook's timeout (last: ${words(last)})`,
    )
  }

  private async checks(instanceId: string, signal?: AbortSignal): Promise<Checks> {
    const answer = await awsCall(
      'EC2',
      'DescribeInstanceStatus',
      `instance ${instanceId}`,
      (abortSignal) => this.ec2.describeInstanceStatus({InstanceIds: [instanceId], IncludeAllInstances: true}, abortSignal),
      signal,
    )
    const status = answer.InstanceStatuses?.find((s) => s.InstanceId === instanceId)
    return {
      state: status?.InstanceState?.Name ?? 'not listed',
      instance: status?.InstanceStatus?.Status ?? 'not reported',
      system: status?.SystemStatus?.Status ?? 'not reported',
    }
  }
}
