import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags, runbookArg} from '../src/cli/flags.js'
import {loadRunbook} from '../src/runbook/shipped.js'
import {openStateStore} from '../src/cli/state-store.js'
import type {LiveStatus} from '../src/live/status.js'

export default class Status extends SluiceCommand {
  static override summary = 'Show the live state of a runbook\'s targets.'

  static override description = `Reads, and changes nothing: the weights of the record's sets, target health counts per target group, the restriction rules sluice has on the listener (found by their tags, from any machine), and the change freeze.`

  static override examples = ['<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --region eu-west-1']

  static override args = {
    runbook: runbookArg,
  }

  static override flags = {...awsFlags, ...stateFlags}

  async run(): Promise<LiveStatus> {
    const {args, flags} = await this.parse(Status)
    const runbook = loadRunbook(args.runbook)
    const {liveStatus, renderStatus} = await import('../src/live/status.js')
    const aws = awsOptionsOf(flags)
    const status = await liveStatus(runbook, aws, await openStateStore(flags.state, aws))
    this.log(renderStatus(status))
    return status
  }
}
