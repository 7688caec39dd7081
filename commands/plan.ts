import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {runbookArg} from '../src/cli/flags.js'
import type {PlannedStep} from '../src/ports/io.js'
import {planRunbook} from '../src/engine/plan.js'
import {shortenArns} from '../src/format.js'
import {loadRunbook} from '../src/loader/shipped.js'

export default class Plan extends SluiceCommand {
  static override summary = 'Show what a runbook would do, step by step, without doing it.'

  static override description = `Prints the plan a run shows before it starts: each step, the resources it touches, its gates and what happens when a gate fails.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml',
    '<%= config.bin %> <%= command.id %> outlook-staged-return --wide',
  ]

  static override flags = {
    wide: Flags.boolean({
      description: 'Print every ARN whole (by default a plan names a resource by its name: targetgroup/mailbox; --json always has them whole).',
    }),
  }

  static override args = {
    runbook: runbookArg,
  }

  async run(): Promise<{runbook: string; description: string; steps: PlannedStep[]}> {
    const {args, flags} = await this.parse(Plan)
    const runbook = loadRunbook(args.runbook)
    const steps = planRunbook(runbook)
    this.log(`${runbook.name}: ${runbook.description}`)
    for (const step of steps) {
      this.log(`\n${step.index + 1}. ${step.title}  [${step.action}]`)
      for (const line of step.details) this.log(`   ${flags.wide ? line : shortenArns(line)}`)
    }
    return {runbook: runbook.name, description: runbook.description, steps}
  }
}
