import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {gateFlagPaths, gateFlags, gateFromFlags, seconds, targetFlags} from '../src/cli/flags.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {runSingleStep, trafficCommandFlags} from '../src/cli/step-command.js'
import {InputError} from '../src/errors.js'

export default class Ramp extends SluiceCommand {
  static override summary = 'Ramp traffic onto a weighted DNS set, step by step, behind a gate.'

  static override description = `Moves traffic with weighted DNS: one atomic change per step, each baked for at least the record's TTL and admitted only if its gate passes. A failed gate puts the weights back to the last step that passed and exits 3.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --set west --schedule 1,5,25,50 --bake 120 --gate-metric error-rate --gate-threshold 1 --gate-pool west --scenario two-regions --dry-run',
  ]

  static override flags = {
    ...trafficCommandFlags,
    ...targetFlags.dns,
    ...targetFlags.metrics,
    ...gateFlags,
    'allow-short-bake': Flags.boolean({description: "Allow a bake shorter than the record's TTL.", default: false}),
    bake: seconds({description: 'How long each step is held and judged (at least the TTL).'}),
    schedule: Flags.string({
      description:
        "Percentages of traffic for the set, comma-separated: 1,5,25,50,100; or auto, which probes the set's pool (steps from 5 points, doubling while the gate pool's latency and errors stay in their band).",
      required: true,
    }),
    set: Flags.string({description: 'The weighted set identifier that gains traffic.', required: true}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Ramp)
    const schedule = flags.schedule.trim() === 'auto' ? 'auto' : flags.schedule.split(',').map((p) => Number(p.trim().replace(/%$/, '')))
    if (schedule !== 'auto' && schedule.some((p) => !Number.isFinite(p)))
      throw new InputError(`--schedule: expected comma-separated percentages such as 1,5,25,50,100, or auto, got "${flags.schedule}"`)
    const gate = gateFromFlags(flags)
    const step = {
      action: 'ramp',
      set: flags.set,
      schedule,
      allowShortBake: flags['allow-short-bake'],
      ...(flags.bake === undefined ? {} : {bake: flags.bake}),
      ...(gate ? {gate} : {}),
    }
    const paths = {'steps[0].set': '--set', 'steps[0].schedule': '--schedule', 'steps[0].bake': '--bake', 'steps[0].action': '--bake', ...gateFlagPaths}
    return runSingleStep(step, flags, paths, this.jsonEnabled(), this.printer())
  }
}
