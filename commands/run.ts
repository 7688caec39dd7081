import {SluiceCommand} from '../src/cli/base.js'
import {approveFlags, awsFlags, lockFlags, rehearsalFlags, rehearsalOnly, reportFlags, runbookArg, runFlags, stateFlags} from '../src/cli/flags.js'
import {executeRunbook, modeOf, type RunJson} from '../src/cli/run-runbook.js'
import {loadRunbook} from '../src/loader/shipped.js'

export default class Run extends SluiceCommand {
  static override summary = 'Run a runbook, or rehearse it with --dry-run against the simulated fleet.'

  static override description = `Shows the plan, then runs the steps in order: freeze, restrict, cycle, ramp, approve, wait, check. Every gate verdict is printed with the measured value and the threshold. A failed gate puts back the last good state and exits 3.

With --dry-run the runbook runs against its rehearsal scenario in virtual time: the same steps, gates and exit code as live, in about half a second for a 20-minute runbook, ending with a report and a chart.

--yes confirms the plan. A live approve step is answered at the prompt, by \`sluice promote RUN\` from any terminal, or in advance with --approve STEP; unanswered, it holds the run after its timeout (default 1 h) with exit 4, for \`sluice resume\`. In a rehearsal --yes answers approve steps too.

\`sluice pause|promote|abort RUN\` control a live run from any terminal, and \`sluice watch RUN\` follows it.

Ctrl-C stops at the next safe point (a ramp holds its last good weights), prints where it stopped, and exits 130.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> outlook-staged-return --dry-run',
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --dry-run',
    '<%= config.bin %> <%= command.id %> runbooks/naive-full-return.yaml --dry-run --json',
    '<%= config.bin %> <%= command.id %> runbooks/regional-dns-ramp.yaml --dry-run --pace 60 --html report.html',
    '<%= config.bin %> <%= command.id %> return-to-service.yaml --yes --approve 4',
  ]

  static override args = {
    runbook: runbookArg,
  }

  static override flags = {...approveFlags, ...runFlags, ...rehearsalOnly({...rehearsalFlags, ...reportFlags}), ...awsFlags, ...stateFlags, ...lockFlags}

  async run(): Promise<RunJson> {
    const {args, flags} = await this.parse(Run)
    const runbook = loadRunbook(args.runbook)
    return executeRunbook(runbook, modeOf(flags), {...flags, json: this.jsonEnabled()}, this.printer())
  }
}
