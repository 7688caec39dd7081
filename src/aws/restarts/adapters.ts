import {FailedError} from '../../errors.js'
import type {Clock, RestartAdapters, Target} from '../../ports/control-plane.js'
import type {AwsCalls} from '../sdk.js'
import {Ec2Reboot} from './ec2-reboot.js'
import {EcsReplace} from './ecs-replace.js'
import {SsmRunCommand} from './ssm-command.js'

const instanceId = /^i-[0-9a-f]{8,17}$/

/** Targets that are not EC2 instances (an IP target group's addresses, a Lambda), which SSM and a reboot cannot reach by id. */
function notInstances(adapter: string, targets: Target[]): string[] {
  const others = targets.filter((t) => !instanceId.test(t.targetId))
  if (others.length === 0) return []
  const named = others.slice(0, 3).map((t) => t.targetId)
  return [
    `${adapter} acts on EC2 instances by id, and ${others.length} of the ${targets.length} targets ${others.length === 1 ? 'is' : 'are'} not one (${named.join(', ')}${others.length > 3 ? ', …' : ''}): cycle an instance target group, or restart with a command`,
  ]
}

function instanceOf(adapter: string, target: Target): string {
  if (!instanceId.test(target.targetId)) throw new FailedError(notInstances(adapter, [target])[0])
  return target.targetId
}

/** AWS's restart adapters over one run's calls: SSM Run Command and an EC2 reboot on instance targets, an ECS replacement on a service's task targets. */
export function awsRestarts(calls: AwsCalls, clock: Clock): RestartAdapters {
  const ssm = new SsmRunCommand(calls.ssm, clock)
  const ec2 = new Ec2Reboot(calls.ec2, clock)
  const ecs = new EcsReplace(calls.ecs, calls.elbv2, clock)
  return {
    ssm: {
      run: (spec, target, signal) => ssm.run(spec, instanceOf('ssm', target), signal),
      finish: (spec, target, since, signal) => ssm.finish(spec, instanceOf('ssm', target), since, signal),
      refusals: async (_spec, targets) => notInstances('ssm', targets),
    },
    'ec2-reboot': {
      run: (spec, target, signal) => ec2.run(spec, instanceOf('ec2-reboot', target), signal),
      finish: (spec, target, since, signal) => ec2.finish(spec, instanceOf('ec2-reboot', target), since, signal),
      refusals: async (_spec, targets) => notInstances('ec2-reboot', targets),
    },
    'ecs-replace': {
      run: (spec, target, signal) => ecs.run(spec, target, signal),
      finish: (spec, target, since, signal) => ecs.finish(spec, target, since, signal),
      refusals: (spec, targets, signal) => ecs.refusals(spec, targets, signal),
      begun: (spec, target, signal) => ecs.begun(spec, target, signal),
    },
  }
}
