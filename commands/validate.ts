import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {InputError} from '../src/errors.js'
import {rehearsalWarnings} from '../src/wiring/rehearsal.js'
import {loadRunbook} from '../src/loader/shipped.js'

interface ValidateJson {
  /**
   * One entry per file. `error` is every problem's line joined by newlines; `problems` holds the
   * same lines apart. `warnings`: what keeps the runbook's rehearsal scenario from rehearsing it,
   * each naming the scenario (a valid runbook may have some; an invalid one is not rehearsed).
   */
  runbooks: Array<{file: string; valid: boolean; name?: string; steps?: number; error?: string; problems?: readonly string[]; warnings: string[]}>
}

export default class Validate extends SluiceCommand {
  static override summary = 'Check runbooks without running them.'

  static override description = `Loads each runbook and applies every check sluice makes before a live run: the schema, the references between steps and targets, disruption budgets, bakes against the record's TTL, gate thresholds. Every problem in a file is reported, one line each with file:line:column, in file order (the schema's problems first; the checks beyond the schema once it passes). Exits 2 if any runbook is invalid.

Whether the runbook's rehearsal scenario can rehearse it (has every pool and traffic type the runbook names, servers in the pools it cycles, batches that fit) is a separate question: a runbook its scenario cannot rehearse is still valid, and each thing the scenario lacks is a warning naming the scenario (on stderr, file:line:column; the file's line on stdout says how many), with exit 0 when every runbook is valid.`

  static override examples = ['<%= config.bin %> <%= command.id %> runbooks/*.yaml']

  static override strict = false

  static override args = {
    runbook: Args.string({description: 'Runbook YAML files, or names of shipped runbooks (`sluice runbooks` lists them).', required: true}),
  }

  async run(): Promise<ValidateJson> {
    const {argv} = await this.parse(Validate)
    const results: ValidateJson['runbooks'] = []
    for (const file of argv as string[]) {
      let runbook
      try {
        runbook = loadRunbook(file)
      } catch (error) {
        if (!(error instanceof InputError)) throw error
        results.push({file, valid: false, error: error.message, problems: error.problems, warnings: []})
        if (!this.jsonEnabled()) for (const line of error.problems) process.stderr.write(`${line}\n`)
        continue
      }
      // One answer per file: valid or not, then what its rehearsal scenario lacks, as warnings.
      const warnings = rehearsalWarnings(runbook)
      const steps = runbook.steps.length
      results.push({file, valid: true, name: runbook.name, steps, warnings})
      const warned =
        warnings.length === 0
          ? ''
          : `, ${warnings.length} warning${warnings.length === 1 ? '' : 's'}: its rehearsal scenario ${runbook.rehearsal?.scenario} cannot rehearse it`
      this.log(`${file}: ok (${runbook.name}, ${steps} step${steps === 1 ? '' : 's'})${warned}`)
      if (!this.jsonEnabled()) for (const line of warnings) process.stderr.write(`warning: ${line}\n`)
    }
    const invalid = results.filter((r) => !r.valid).length
    if (invalid > 0) {
      this.endWith('bad-input')
      this.note(`${invalid} of ${results.length} runbooks are invalid`)
    }
    return {runbooks: results}
  }
}
