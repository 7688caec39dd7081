import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {targetFlags} from '../src/cli/flags.js'
import {runSingleStep, trafficCommandFlags} from '../src/cli/step-command.js'

export default class Lift extends SluiceCommand {
  static override summary = 'Remove a restriction sluice put on a traffic type.'

  static override description = `Removes the listener rule \`sluice restrict\` added for a traffic type. Lifting is a traffic event of its own: every client of that type comes back at once, not spread over a DNS TTL, so rehearse it.`

  static override examples = ['<%= config.bin %> <%= command.id %> --type background-sync --scenario outlook-recovery --dry-run']

  static override flags = {
    ...trafficCommandFlags,
    ...targetFlags.listener,
    type: Flags.string({description: 'The traffic type whose restriction to remove.', required: true}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Lift)
    return runSingleStep({action: 'lift', type: flags.type}, flags, {'steps[0].type': '--type'}, this.jsonEnabled(), this.printer())
  }
}
