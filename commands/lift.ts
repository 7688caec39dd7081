import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {gateFlagPaths, gateFlags, gateFromFlags, seconds, targetFlags} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import {InputError} from '../src/errors.js'
import {runSingleStep, trafficCommandFlags} from '../src/cli/step-command.js'

/** Why a gate and a bake need a schedule: a lift at once has no steps to hold or judge. */
const byDegrees = 'a gate and a bake judge each step of a lift by degrees, and a lift without --schedule is one step at once'

export default class Lift extends SluiceCommand {
  static override summary = 'Remove a restriction sluice put on a traffic type.'

  static override description = `Removes the listener rule \`sluice restrict\` added for a traffic type. Lifting is a traffic event of its own: every client of that type comes back at once, not spread over a DNS TTL, so rehearse it. With --schedule it lets the type back by degrees (HAProxy): each step turns away less of it, is baked and judged by the gate, and a failed gate puts back the last share that passed.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --type background-sync --scenario outlook-recovery --dry-run',
    '<%= config.bin %> <%= command.id %> --type background-sync --schedule 10,25,50,100 --bake 60 --gate-metric error-rate --gate-threshold 2 --haproxy-socket /run/haproxy/admin.sock --restrict-map /etc/haproxy/sluice-restricted.map --backend web=be_web',
  ]

  static override flags = {
    ...trafficCommandFlags,
    ...targetFlags.listener,
    ...targetFlags.haproxy,
    ...gateFlags,
    'gate-metric': related(gateFlags['gate-metric'], {dependsOn: {flags: ['schedule'], why: byDegrees}}),
    bake: related(seconds({description: 'How long each step of the schedule is held and judged.'}), {dependsOn: {flags: ['schedule'], why: byDegrees}}),
    schedule: Flags.string({
      description:
        "Let the type back by degrees: the percent let through at each step, comma-separated, ending at 100: 10,25,50,100; or auto, which probes the gate's pool (needs --gate-pool).",
    }),
    type: Flags.string({description: 'The traffic type whose restriction to remove.', required: true}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Lift)
    const schedule = flags.schedule?.trim() === 'auto' ? 'auto' : flags.schedule?.split(',').map((p) => Number(p.trim().replace(/%$/, '')))
    if (schedule !== 'auto' && schedule?.some((p) => !Number.isFinite(p)))
      throw new InputError(`--schedule: expected comma-separated percentages such as 10,25,50,100, or auto, got "${flags.schedule}"`)
    const gate = gateFromFlags(flags)
    const step = {
      action: 'lift',
      type: flags.type,
      ...(schedule ? {schedule} : {}),
      ...(flags.bake === undefined ? {} : {bake: flags.bake}),
      ...(gate ? {gate} : {}),
    }
    const paths = {'steps[0].type': '--type', 'steps[0].schedule': '--schedule', 'steps[0].bake': '--bake', ...gateFlagPaths}
    return runSingleStep(step, flags, paths, this.jsonEnabled(), this.printer())
  }
}
