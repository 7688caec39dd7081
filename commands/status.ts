import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {openStateStore} from '../src/cli/state-store.js'
import {InputError} from '../src/errors.js'
import type {LiveStatus} from '../src/live/status.js'
import {loadRunbook} from '../src/loader/shipped.js'

export default class Status extends SluiceCommand {
  static override summary = "Show the live state of a runbook's targets, or what a run left and whether it drifted."

  static override description = `Reads, and changes nothing: the weights of the record's sets, target health counts per target group, the restriction rules sluice has on the listener (found by their tags, from any machine), and the change freeze.

With --run RUN (and no runbook: the run's own is used), it also reads back what every change of that run left and says where the world has drifted from its journal, the same check \`sluice resume\` makes before it goes on. Drift found exits 4 (as \`sluice resume\` refuses, without --reapply), after printing it all (with --json, the same object); none, 0.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --region eu-west-1',
    '<%= config.bin %> <%= command.id %> --run 20261130-054012-a1b2',
  ]

  static override args = {
    runbook: Args.string({description: 'A runbook YAML file, or the name of a shipped runbook (`sluice runbooks` lists them); not with --run.'}),
  }

  static override flags = {
    ...awsFlags,
    run: Flags.string({description: "A run id: show that run's targets and its drift (what it left, against what is there now).", helpValue: 'RUN'}),
    ...stateFlags,
  }

  async run(): Promise<LiveStatus> {
    const {args, flags} = await this.parse(Status)
    // Not declared with oclif, which relates flags to flags only: RUNBOOK is an argument.
    if (Boolean(args.runbook) === Boolean(flags.run))
      throw new InputError(
        args.runbook ? '--run: give a runbook or --run RUN, not both (a run names its own runbook)' : 'missing the RUNBOOK argument, or --run RUN; see --help',
      )
    const {liveStatus, renderStatus, runStatusOf} = await import('../src/live/status.js')
    const aws = awsOptionsOf(flags)
    const store = await openStateStore(flags.state, aws)
    const status = flags.run ? await runStatusOf(store, flags.run, aws) : await liveStatus(loadRunbook(args.runbook!), aws, store)
    this.log(renderStatus(status))
    // What the run left is no longer so: a script (or a resume about to be run) learns it from the exit, as resume's own refusal.
    if (status.drift && status.drift.found.length > 0) this.endWith('refused')
    return status
  }
}
