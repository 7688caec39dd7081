import {SluiceCommand} from '../src/cli/base.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {freezeCommandFlags, runSingleStep} from '../src/cli/step-command.js'

export default class Unfreeze extends SluiceCommand {
  static override summary = 'Lift the change freeze.'

  static override description = `Clears the change freeze so deployments and configuration changes may go ahead again.`

  static override examples = ['<%= config.bin %> <%= command.id %> --dry-run']

  static override flags = freezeCommandFlags

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Unfreeze)
    return runSingleStep({action: 'unfreeze'}, flags, {}, this.jsonEnabled(), this.printer())
  }
}
