import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {numberFlag} from '../src/cli/flags.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {gateFlagPaths, gateFlags, gateFromFlags, hookArgv, runSingleStep, stepCommandFlags} from '../src/cli/step-command.js'

const countOrPercent = (value: string | undefined): number | string | undefined =>
  value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value

export default class Cycle extends SluiceCommand {
  static override summary = 'Cycle a target group: drain, restart, remediate and return, a batch at a time.'

  static override description = `Takes a batch out of rotation, runs the restart and remediation hooks for each target (as argv, never through a shell; {id}, {ip} and {port} are replaced), returns the batch with slow start, checks the gate, then moves to the next batch. Never more than the disruption budget out of rotation, counting targets already unhealthy, and never below the capacity headroom. Targets already out of rotation go first.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --pool east --batch 2 --restart "/usr/local/bin/restart-api {id}" --gate-metric error-rate --gate-threshold 1 --gate-pool east --scenario two-regions --dry-run',
    '<%= config.bin %> <%= command.id %> --pool mailbox --target-group mailbox=arn:aws:elasticloadbalancing:... --batch 25% --restart "/usr/local/bin/restart-mailbox {ip}" --yes',
  ]

  static override flags = {
    ...stepCommandFlags,
    ...gateFlags,
    bake: numberFlag({description: 'Seconds to watch each batch after it returns.'}),
    batch: Flags.string({description: 'Targets per batch: a count (3) or a share of the group (25%).', required: true}),
    budget: Flags.string({description: 'Most targets out of rotation at once, counting unhealthy ones: a count or a share (default: the batch).'}),
    'capacity-per-target': numberFlag({description: 'Requests per second one target serves, for --headroom.'}),
    'failover-percent': numberFlag({description: 'Set routing failover first: below this % of healthy targets, route to all of them.', integer: true}),
    headroom: numberFlag({description: 'Refuse a batch unless the targets left can carry demand with this much spare, in %.'}),
    pool: Flags.string({description: 'The pool (target group) to cycle.', required: true}),
    remediate: Flags.string({description: 'Remediation command per target, e.g. "/opt/fix --host {ip}".'}),
    restart: Flags.string({description: 'Restart command per target, e.g. "/opt/restart {id}".'}),
    'slow-start': numberFlag({description: 'Set the group\'s slow start (seconds) before returning targets.'}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Cycle)
    const restart = hookArgv('restart', flags.restart)
    const remediate = hookArgv('remediate', flags.remediate)
    const gate = gateFromFlags(flags)
    const step = {
      action: 'cycle', pool: flags.pool, batch: countOrPercent(flags.batch),
      ...(flags.budget === undefined ? {} : {budget: countOrPercent(flags.budget)}),
      ...(flags.headroom === undefined ? {} : {headroom: flags.headroom}),
      ...(flags['capacity-per-target'] === undefined ? {} : {capacityPerTarget: flags['capacity-per-target']}),
      ...(restart ? {restart: {command: restart}} : {}),
      ...(remediate ? {remediate: {command: remediate}} : {}),
      ...(flags['slow-start'] === undefined ? {} : {slowStart: flags['slow-start']}),
      ...(flags['failover-percent'] === undefined ? {} : {failoverPercent: flags['failover-percent']}),
      ...(flags.bake === undefined ? {} : {bake: flags.bake}),
      ...(gate ? {gate} : {}),
    }
    const paths = {
      'steps[0].pool': '--pool', 'steps[0].batch': '--batch', 'steps[0].budget': '--budget', 'steps[0].headroom': '--headroom',
      'steps[0].capacityPerTarget': '--capacity-per-target', 'steps[0].slowStart': '--slow-start', 'steps[0].failoverPercent': '--failover-percent', 'steps[0].bake': '--bake', ...gateFlagPaths,
    }
    return runSingleStep(step, flags, paths, this.jsonEnabled(), this.printer())
  }
}
