import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, runbookArg, stateFlags} from '../src/cli/flags.js'
import type {PlannedStep} from '../src/ports/io.js'
import {planRunbook} from '../src/engine/plan.js'
import {livePlanVerdict, shortenArns} from '../src/format.js'
import {loadRunbook} from '../src/loader/shipped.js'

interface PlanJson {
  runbook: string
  description: string
  steps: PlannedStep[]
  /** With --live: what was read, where and as whom (the AWS account; null on HAProxy), how many steps find the world other than they expect, and how many it read nothing for. */
  live?: {on: string; identity: {account: string; arn: string} | null; now: string[]; drift: number; unread: number}
}

export default class Plan extends SluiceCommand {
  static override summary = 'Show what a runbook would do, step by step, without doing it.'

  static override description = `Prints the plan a run shows before it starts: each step, the resources it touches, its gates and what happens when a gate fails.

With --live, it first reads the real resources, as a live run does before it asks (read-only calls only: \`sluice iam-policy RUNBOOK --read-only\` is the policy it needs), and tells each step in live numbers, chained from what the steps before will leave, with a line marked ! wherever what is there now is not what the step expects (a ramp's set already past its first step, a lift of a type nothing restricts, a freeze someone else set). It changes nothing and takes no lock.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml',
    '<%= config.bin %> <%= command.id %> outlook-staged-return --wide',
    '<%= config.bin %> <%= command.id %> my-runbook.yaml --live --region eu-west-1',
  ]

  static override flags = {
    wide: Flags.boolean({
      description: 'Print every ARN whole (by default a plan names a resource by its name: targetgroup/mailbox; --json always has them whole).',
    }),
    live: Flags.boolean({
      description: 'Read the live resources first (read-only) and plan from what is there now, with where it differs from what the runbook expects.',
    }),
    ...awsFlags,
    ...stateFlags,
  }

  static override args = {
    runbook: runbookArg,
  }

  async run(): Promise<PlanJson> {
    const {args, flags} = await this.parse(Plan)
    const runbook = loadRunbook(args.runbook)
    const text = (line: string) => (flags.wide ? line : shortenArns(line))
    let steps = planRunbook(runbook)
    let live: PlanJson['live']
    if (flags.live) {
      const [{openStateStore}, {planLive}] = await Promise.all([import('../src/cli/state-store.js'), import('../src/live/preflight.js')])
      const aws = awsOptionsOf(flags)
      const read = await planLive(runbook, aws, await openStateStore(flags.state, aws))
      steps = read.plan
      live = {on: read.on, identity: read.identity, now: read.now, drift: steps.filter((s) => s.drift).length, unread: steps.filter((s) => s.unread).length}
    }
    this.log(`${runbook.name}: ${runbook.description}`)
    if (live) {
      this.log(`\nRead from ${live.on} (nothing was changed):`)
      for (const line of live.now) this.log(`  ${text(line)}`)
    }
    for (const step of steps) {
      this.log(`\n${step.index + 1}. ${step.title}  [${step.action}]`)
      for (const line of step.details) this.log(`   ${text(line)}`)
      for (const line of step.drift ?? []) this.log(`   ! ${text(line)}`)
      for (const line of step.unread ?? []) this.log(`   ? ${text(line)}`)
    }
    if (live) this.log(`\n${livePlanVerdict(steps)}`)
    return {runbook: runbook.name, description: runbook.description, steps, ...(live ? {live} : {})}
  }
}
