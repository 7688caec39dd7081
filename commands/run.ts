import {SluiceCommand} from '../src/cli/base.js'
import {InputError} from '../src/errors.js'
import {
  approveFlags,
  awsFlags,
  awsOptionsOf,
  detachFlags,
  detachNeedsYes,
  lockFlags,
  rehearsalFlags,
  rehearsalOnly,
  reportFlags,
  runbookArg,
  runFlags,
  stateFlags,
} from '../src/cli/flags.js'
import {executeRunbook, modeOf, type RunJson} from '../src/cli/run-runbook.js'
import {loadRunbook} from '../src/loader/shipped.js'

/** What `run --detach --json` prints: the run it started, and how it stands. */
interface DetachedJson {
  runId: string
  pid: number
  log: string
  status: string
  exitCode: number | null
}

export default class Run extends SluiceCommand {
  static override summary = 'Run a runbook, or rehearse it with --dry-run against the simulated fleet.'

  static override description = `Shows the plan, then runs the steps in order: freeze, restrict, cycle, ramp, approve, wait, check. Every gate verdict is printed with the measured value and the threshold. A failed gate puts back the last good state and exits 3.

With --dry-run the runbook runs against its rehearsal scenario in virtual time: the same steps, gates and exit code as live, in about half a second for a 20-minute runbook, ending with a report and a chart.

--yes confirms the plan. A live approve step is answered at the prompt, by \`sluice promote RUN\` from any terminal, or in advance with --approve STEP; unanswered, it holds the run after its timeout (default 1 h) with exit 4, for \`sluice resume\`. In a rehearsal --yes answers approve steps too.

\`sluice pause|promote|abort RUN\` control a live run from any terminal, and \`sluice watch RUN\` follows it.

Ctrl-C stops at the next safe point (a ramp holds its last good weights), prints where it stopped, and exits 130.

--detach (live, with --yes) starts the run as a process of its own, in a session of its own, with its output in a log beside the state; it prints the run id and the commands to follow and steer it, and exits once the run is under way. The run keeps going when the terminal, its shell or its SSH session goes.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> outlook-staged-return --dry-run',
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --dry-run',
    '<%= config.bin %> <%= command.id %> runbooks/naive-full-return.yaml --dry-run --json',
    '<%= config.bin %> <%= command.id %> runbooks/regional-dns-ramp.yaml --dry-run --pace 60 --html report.html',
    '<%= config.bin %> <%= command.id %> return-to-service.yaml --yes --approve 4',
    '<%= config.bin %> <%= command.id %> return-to-service.yaml --yes --detach',
  ]

  static override args = {
    runbook: runbookArg,
  }

  static override flags = {
    ...approveFlags,
    ...runFlags,
    ...rehearsalOnly({...rehearsalFlags, ...reportFlags}),
    ...awsFlags,
    ...stateFlags,
    ...lockFlags,
    ...detachFlags,
  }

  async run(): Promise<RunJson | DetachedJson> {
    const {args, flags} = await this.parse(Run)
    const runbook = loadRunbook(args.runbook)
    if (flags.detach) {
      if (!flags.yes) throw new InputError(detachNeedsYes)
      return this.detach(flags.state, awsOptionsOf(flags))
    }
    return executeRunbook(runbook, modeOf(flags), {...flags, json: this.jsonEnabled()}, this.printer())
  }

  /** The same command line, without --detach, as a process of its own; this one says how to reach it and exits. */
  private async detach(state: string | undefined, aws: ReturnType<typeof awsOptionsOf>): Promise<DetachedJson> {
    const [{openStateStore}, {detachRun}, {runStatus}] = await Promise.all([
      import('../src/cli/state-store.js'),
      import('../src/cli/detach.js'),
      import('../src/state/journal.js'),
    ])
    const store = await openStateStore(state, aws)
    const d = await detachRun(
      this.argv.filter((a) => a !== '--detach'),
      store,
      state,
    )
    if (d.ended) {
      process.stderr.write(`${d.ended.tail}\n`)
      this.note(`run ${d.runId} ended before it was under way (exit ${d.ended.code}); its output is in ${d.log}`)
      process.exitCode = d.ended.code ?? 1
      return {runId: d.runId, pid: d.pid, log: d.log, status: 'ended', exitCode: d.ended.code}
    }
    const status = runStatus(await store.read(d.runId))
    const id = d.runId
    this.log(`run ${id} is under way in the background (pid ${d.pid}); its output: ${d.log}`)
    this.log(`  follow it:        sluice watch ${id}`)
    this.log(`  hold it:          sluice pause ${id}`)
    this.log(`  continue it:      sluice promote ${id}`)
    this.log(`  stop it:          sluice abort ${id}`)
    this.log(`  on the bridge:    sluice serve`)
    return {runId: id, pid: d.pid, log: d.log, status, exitCode: null}
  }
}
