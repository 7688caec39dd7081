import {SluiceCommand} from '../src/cli/base.js'
import {formatTable} from '../src/report/table.js'
import {listShippedRunbooks, type ShippedRunbook} from '../src/loader/shipped.js'

export default class Runbooks extends SluiceCommand {
  static override summary = 'List the runbooks that ship with sluice.'

  static override description = `Each shipped runbook can be given by name wherever a runbook file is taken (run, validate, plan, status, iam-policy), and rehearsed against the scenario listed here with run NAME --dry-run.`

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> run outlook-staged-return --dry-run']

  async run(): Promise<{runbooks: ShippedRunbook[]}> {
    await this.parse(Runbooks)
    const runbooks = listShippedRunbooks()
    this.log(
      formatTable(
        ['runbook', 'rehearses against', 'description'],
        runbooks.map((r) => [r.name, r.scenario ?? '-', r.description]),
        {width: this.width, free: [2], wrap: true},
      ),
    )
    return {runbooks}
  }
}
