import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {freezeCommandFlags, runSingleStep} from '../src/cli/step-command.js'

export default class Unfreeze extends SluiceCommand {
  static override summary = 'Lift the change freeze.'

  static override description = `Clears the change freeze so deployments and configuration changes may go ahead again. A freeze belongs to the run that set it, and \`sluice freeze\` is a run of its own: lifting it from here takes --force, which the journal records with whose freeze it was. --force also clears a damaged freeze record.`

  static override examples = ['<%= config.bin %> <%= command.id %> --force', '<%= config.bin %> <%= command.id %> --dry-run']

  static override flags = {
    ...freezeCommandFlags,
    force: Flags.boolean({description: 'Lift a freeze this command did not set (any freeze set by another run or by hand), or a damaged one.', default: false}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Unfreeze)
    return runSingleStep({action: 'unfreeze', force: flags.force}, flags, {'steps[0].force': '--force'}, this.jsonEnabled(), this.printer())
  }
}
