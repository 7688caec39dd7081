import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {seconds} from '../src/cli/flags.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {freezeCommandFlags, runSingleStep} from '../src/cli/step-command.js'

export default class Freeze extends SluiceCommand {
  static override summary = 'Freeze deployments and configuration changes.'

  static override description = `Records a change freeze (who, why, since, optional expiry) so nobody changes a second thing while the first is unexplained. Deploy pipelines ask \`sluice freeze check\` before they deploy.`

  static override examples = ['<%= config.bin %> <%= command.id %> --reason "mailbox pool recovery" --dry-run']

  static override flags = {
    ...freezeCommandFlags,
    expires: seconds({description: 'How long until the freeze lapses on its own.'}),
    reason: Flags.string({description: 'Why changes are frozen (shown to whoever is refused).', required: true}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Freeze)
    const step = {action: 'freeze', reason: flags.reason, ...(flags.expires === undefined ? {} : {expires: flags.expires})}
    return runSingleStep(step, flags, {'steps[0].reason': '--reason', 'steps[0].expires': '--expires'}, this.jsonEnabled(), this.printer())
  }
}
