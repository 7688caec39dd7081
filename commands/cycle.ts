import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {argv, decimal, gateFlagPaths, gateFlags, gateFromFlags, seconds, targetFlags} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {restartFromFlags, ssmParameter} from '../src/cli/restart-flags.js'
import {runSingleStep, trafficCommandFlags} from '../src/cli/step-command.js'

const countOrPercent = (value: string | undefined): number | string | undefined =>
  value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value

export default class Cycle extends SluiceCommand {
  static override summary = 'Cycle a target group: drain, restart, remediate and return, a batch at a time.'

  static override description = `Takes a batch out of rotation, runs the restart and remediation hooks for each target (as argv, never through a shell; {id}, {ip} and {port} are replaced), returns the batch with slow start, checks the gate, then moves to the next batch. Never more than the disruption budget out of rotation, counting targets already unhealthy, and never below the capacity headroom. Targets already out of rotation go first.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --pool east --batch 2 --restart "/usr/local/bin/restart-api {id}" --gate-metric error-rate --gate-threshold 1 --gate-pool east --scenario two-regions --dry-run',
    '<%= config.bin %> <%= command.id %> --pool mailbox --target-group mailbox=arn:aws:elasticloadbalancing:... --batch 25% --restart "/usr/local/bin/restart-mailbox {ip}" --yes',
    '<%= config.bin %> <%= command.id %> --pool mailbox --target-group mailbox=arn:aws:elasticloadbalancing:... --batch 2 --restart-ssm AWS-RunShellScript --restart-ssm-parameter "commands=systemctl restart mailbox" --yes',
    '<%= config.bin %> <%= command.id %> --pool api --target-group api=arn:aws:elasticloadbalancing:... --batch 1 --restart-ecs-replace prod/api --yes',
  ]

  static override flags = {
    ...trafficCommandFlags,
    ...targetFlags.targetGroup,
    ...targetFlags.metrics,
    ...gateFlags,
    bake: seconds({description: 'How long to watch each batch after it returns.'}),
    batch: Flags.string({
      description: 'Targets per batch: a count (3), a share of the group (25%), or auto (the most the targets left can spare with the headroom kept).',
      required: true,
    }),
    budget: Flags.string({description: 'Most targets out of rotation at once, counting unhealthy ones: a count or a share (default: the batch).'}),
    'capacity-per-target': decimal({description: 'Requests per second one target serves, for --headroom and --batch auto.', min: 0.001}),
    'failover-percent': Flags.integer({description: 'Set routing failover first: below this % of healthy targets, route to all of them.', min: 1, max: 100}),
    headroom: decimal({description: 'Refuse a batch unless the targets left can carry demand with this much spare, in %.', min: 0, max: 100}),
    pool: Flags.string({description: 'The pool (target group) to cycle.', required: true}),
    remediate: related(argv('Remediation command per target, e.g. "/opt/fix --host {ip}".'), {
      exclusive: {flags: ['remediate-ssm'], why: 'a target is remediated one way'},
    }),
    'remediate-ssm': Flags.string({description: "Remediate through SSM Run Command: this document on each target's instance.", helpValue: 'DOCUMENT'}),
    'remediate-ssm-parameter': related(ssmParameter('A parameter of the --remediate-ssm document'), {
      dependsOn: {flags: ['remediate-ssm'], why: 'it is a parameter of that document'},
    }),
    'remediate-timeout': related(seconds({description: 'How long each remediation may take (default 300 s).'}), {
      some: {flags: ['remediate', 'remediate-ssm'], why: 'it is the timeout of a remediation'},
    }),
    restart: related(argv('Restart command per target, e.g. "/opt/restart {id}".'), {
      exclusive: {flags: ['restart-ssm', 'restart-ec2-reboot', 'restart-ecs-replace'], why: 'a target is restarted one way'},
    }),
    'restart-ssm': related(Flags.string({description: "Restart through SSM Run Command: this document on each target's instance.", helpValue: 'DOCUMENT'}), {
      exclusive: {flags: ['restart-ec2-reboot', 'restart-ecs-replace'], why: 'a target is restarted one way'},
    }),
    'restart-ssm-parameter': related(ssmParameter('A parameter of the --restart-ssm document'), {
      dependsOn: {flags: ['restart-ssm'], why: 'it is a parameter of that document'},
    }),
    'restart-ec2-reboot': related(Flags.boolean({description: "Restart by rebooting each target's EC2 instance, waiting for its status checks."}), {
      exclusive: {flags: ['restart-ecs-replace'], why: 'a target is restarted one way'},
    }),
    'restart-ecs-replace': Flags.string({
      description: "Restart by replacing each target's ECS task: the service's new task is waited for, healthy in its target group.",
      helpValue: 'CLUSTER/SERVICE',
    }),
    'restart-timeout': related(seconds({description: 'How long each restart may take (default 300 s; ecs-replace 600 s).'}), {
      some: {flags: ['restart', 'restart-ssm', 'restart-ec2-reboot', 'restart-ecs-replace'], why: 'it is the timeout of a restart'},
    }),
    'slow-start': seconds({description: "Set the group's slow start before returning targets."}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Cycle)
    const gate = gateFromFlags(flags)
    const step = {
      action: 'cycle',
      pool: flags.pool,
      batch: countOrPercent(flags.batch),
      ...(flags.budget === undefined ? {} : {budget: countOrPercent(flags.budget)}),
      ...(flags.headroom === undefined ? {} : {headroom: flags.headroom}),
      ...(flags['capacity-per-target'] === undefined ? {} : {capacityPerTarget: flags['capacity-per-target']}),
      ...restartFromFlags(flags),
      ...(flags['slow-start'] === undefined ? {} : {slowStart: flags['slow-start']}),
      ...(flags['failover-percent'] === undefined ? {} : {failoverPercent: flags['failover-percent']}),
      ...(flags.bake === undefined ? {} : {bake: flags.bake}),
      ...(gate ? {gate} : {}),
    }
    const paths = {
      'steps[0].pool': '--pool',
      'steps[0].batch': '--batch',
      'steps[0].budget': '--budget',
      'steps[0].headroom': '--headroom',
      'steps[0].capacityPerTarget': '--capacity-per-target',
      'steps[0].slowStart': '--slow-start',
      'steps[0].failoverPercent': '--failover-percent',
      'steps[0].bake': '--bake',
      'steps[0].restart': '--restart',
      'steps[0].restart.ssm': '--restart-ssm',
      'steps[0].restart.ecs-replace': '--restart-ecs-replace',
      'steps[0].restart.ec2-reboot': '--restart-ec2-reboot',
      'steps[0].restart.timeout': '--restart-timeout',
      'steps[0].remediate': '--remediate',
      'steps[0].remediate.ssm': '--remediate-ssm',
      'steps[0].remediate.timeout': '--remediate-timeout',
      ...gateFlagPaths,
    }
    return runSingleStep(step, flags, paths, this.jsonEnabled(), this.printer())
  }
}
