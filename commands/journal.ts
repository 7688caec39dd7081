import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {InputError} from '../src/errors.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import {describeJournal, runsTable} from '../src/report/journal.js'
import {listRuns, type RunListing} from '../src/state/run-life.js'
import {openStateStore} from '../src/cli/state-store.js'
import type {JournalEntry, TornWrite} from '../src/ports/state-store.js'

type JournalJson =
  {runs: RunListing[]} | {runId: string; status: string; life?: {status: string; detail?: string}; entries: JournalEntry[]; torn: TornWrite | null}

export default class Journal extends SluiceCommand {
  static override summary = "List live runs, or show one run's timeline."

  static override description = `Without a run id, lists the runs in the state store with their status: how each ended (completed, gate-failed, held, interrupted, refused, failed, rolled-back), or, for one that never ended, \`running\` or \`dead (pid N gone)\` / \`dead (lease lapsed …)\`, judged by the holder's pid on this host or by watching its lease. With one, shows what the run did: who, on which host, when, every change with its before and after, and every gate verdict. A journal whose last line was cut off is reported, not trusted.

With --markdown, the run's incident timeline as Markdown on stdout, for a postmortem (\`> timeline.md\`): a summary (its status, who started it where, when it started and ended, how the run and its way back ended, how many changes, the gate verdicts passed and failed, the controls received), the plan, one table in journal order with the time in UTC, who acted (the operator of the attempt that wrote the entry: the run, a resume or a rollback; a control's sender) and what happened (each change before → after, each verdict with its value and bound, failed ones in bold, each control with what the run did with it, drift, the ends), and each resource's net change from what the run found to what it left, the way back included. It holds only what the journal holds, so the same journal gives the same Markdown; text from the journal is escaped so it cannot break a table or become HTML. Not with --json.`

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --json',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --markdown > timeline.md',
  ]

  static override args = {
    run: Args.string({description: 'A run id.'}),
  }

  static override flags = {
    markdown: related(
      Flags.boolean({
        description: "The run's incident timeline as Markdown on stdout, for a postmortem: summary, plan, timeline table (UTC), net changes. Needs RUN.",
        default: false,
      }),
      {exclusive: {flags: ['json'], why: '--markdown prints the timeline as Markdown, --json the journal entries as JSON; choose one'}},
    ),
    ...stateFlags,
    ...awsFlags,
  }

  async run(): Promise<JournalJson> {
    const {args, flags} = await this.parse(Journal)
    // Not declared with oclif, which relates flags to flags only: RUN is an argument.
    if (flags.markdown && !args.run) throw new InputError('--markdown: needs a RUN, the run whose timeline to print (`sluice journal` lists them)')
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    if (!args.run) {
      const runs = await listRuns(store, (m) => this.progress(m))
      if (runs.length === 0) this.log(`no runs in ${store.label}`)
      else this.log(runsTable(runs, this.width))
      return {runs}
    }
    const read = await store.read(args.run)
    const view = describeJournal(args.run, read)
    if (flags.markdown) {
      // The journal's alone, whatever holds its lock now: the same journal gives the same Markdown.
      const {timelineMarkdown} = await import('../src/state/timeline.js')
      this.log(timelineMarkdown(args.run, read).trimEnd())
      if (read.torn) this.note(`warning: the last line (${read.torn.line}) of this journal is a torn write; the timeline ends before it`)
      return {runId: args.run, status: view.status, entries: read.entries, torn: read.torn}
    }
    // A run that never ended is running or dead: said from its holder, as the listing says it.
    const {judgeRun, lifeStatus} = await import('../src/state/run-life.js')
    const life = view.status === 'unfinished' && !read.torn ? lifeStatus(await judgeRun(store, args.run, read), read) : null
    const lines = life ? [...view.lines.slice(0, -1), `status: unfinished, ${life.detail ? `${life.status} (${life.detail})` : life.status}`] : view.lines
    this.log(lines.join('\n'))
    if (read.torn) this.note(`warning: the last line (${read.torn.line}) of this journal is a torn write; see above`)
    return {runId: args.run, status: view.status, ...(life ? {life} : {}), entries: read.entries, torn: read.torn}
  }
}
