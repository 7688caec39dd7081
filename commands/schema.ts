import {SluiceCommand} from '../src/cli/base.js'
import {runbookJsonSchema} from '../src/loader/json-schema.js'

export default class Schema extends SluiceCommand {
  static override summary = 'Print the JSON Schema of a runbook file.'

  static override description = `Prints the JSON Schema (draft 2020-12) that runbook YAML files follow, for editor completion and for linting runbooks in CI. It describes the file as written: durations as seconds or strings such as 5m, batch sizes as a count or a percentage. Loading a runbook still applies sluice's own checks, which go further than the schema can.

With --json the output is the same schema.`

  static override examples = [
    {
      description: 'Save the schema, then point an editor at it with a first line of "# yaml-language-server: $schema=./runbook.schema.json" in a runbook.',
      command: '<%= config.bin %> <%= command.id %> > runbook.schema.json',
    },
  ]

  async run(): Promise<object> {
    await this.parse(Schema)
    const schema = runbookJsonSchema()
    // Under --json oclif prints the returned object itself; printing here too would emit it twice.
    if (!this.jsonEnabled()) this.log(JSON.stringify(schema, null, 2))
    return schema
  }
}
