import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {InputError} from '../src/errors.js'
import {checkRehearsalScenario} from '../src/wiring/rehearsal.js'
import {loadRunbook} from '../src/loader/shipped.js'

interface ValidateJson {
  /** `error` is every problem's line joined by newlines; `problems` holds the same lines apart. */
  runbooks: Array<{file: string; valid: boolean; name?: string; steps?: number; error?: string; problems?: readonly string[]}>
}

export default class Validate extends SluiceCommand {
  static override summary = 'Check runbooks without running them.'

  static override description = `Loads each runbook and applies every check sluice makes before a run: the schema, the references between steps and targets, disruption budgets, bakes against the record's TTL, gate thresholds, and that the rehearsal scenario has every pool and traffic type the runbook names. Every problem in a file is reported, one line each with file:line:column, in file order (the schema's problems first; the checks beyond the schema once it passes). Exits 2 if any runbook is invalid.`

  static override examples = ['<%= config.bin %> <%= command.id %> runbooks/*.yaml']

  static override strict = false

  static override args = {
    runbook: Args.string({description: 'Runbook YAML files, or names of shipped runbooks (`sluice runbooks` lists them).', required: true}),
  }

  async run(): Promise<ValidateJson> {
    const {argv} = await this.parse(Validate)
    const results: ValidateJson['runbooks'] = []
    for (const file of argv as string[]) {
      try {
        const runbook = loadRunbook(file)
        results.push({file, valid: true, name: runbook.name, steps: runbook.steps.length})
        if (runbook.rehearsal) checkRehearsalScenario(runbook)
        this.log(`${file}: ok (${runbook.name}, ${runbook.steps.length} step${runbook.steps.length === 1 ? '' : 's'})`)
      } catch (error) {
        if (!(error instanceof InputError)) throw error
        results.push({file, valid: false, error: error.message, problems: error.problems})
        if (!this.jsonEnabled()) for (const line of error.problems) process.stderr.write(`${line}\n`)
      }
    }
    const invalid = results.filter((r) => !r.valid).length
    if (invalid > 0) {
      this.endWith('bad-input')
      this.note(`${invalid} of ${results.length} runbooks are invalid`)
    }
    return {runbooks: results}
  }
}
