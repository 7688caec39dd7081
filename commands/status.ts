import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {loadRunbookFile} from '../src/runbook/load.js'
import {openStore} from '../src/state/open.js'
import type {LiveStatus} from '../src/live/status.js'

export default class Status extends SluiceCommand {
  static override summary = 'Show the live state of a runbook\'s targets.'

  static override description = `Reads, and changes nothing: the weights of the record's sets, target health counts per target group, the restriction rules sluice has on the listener (found by their tags, from any machine), and the change freeze.`

  static override examples = ['<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --region eu-west-1']

  static override args = {
    runbook: Args.string({description: 'The runbook whose targets to read.', required: true}),
  }

  static override flags = {
    'endpoint-url': Flags.string({description: 'Send AWS calls to this endpoint (also AWS_ENDPOINT_URL).', helpValue: 'URL'}),
    profile: Flags.string({description: 'AWS profile from the shared config files.', env: 'AWS_PROFILE'}),
    region: Flags.string({description: 'AWS region (also AWS_REGION).'}),
    state: Flags.string({description: 'State directory (default $SLUICE_STATE or ./.sluice).', helpValue: 'DIR'}),
  }

  async run(): Promise<LiveStatus> {
    const {args, flags} = await this.parse(Status)
    const runbook = loadRunbookFile(args.runbook)
    const {liveStatus, renderStatus} = await import('../src/live/status.js')
    const aws = {region: flags.region, profile: flags.profile, endpoint: flags['endpoint-url']}
    const status = await liveStatus(runbook, aws, await openStore(flags.state, aws))
    this.log(renderStatus(status))
    return status
  }
}
