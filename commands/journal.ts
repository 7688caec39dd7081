import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {describeJournal, listRuns, runsTable, type RunListing} from '../src/state/journal-view.js'
import {openStateStore} from '../src/cli/state-store.js'
import type {JournalEntry, TornWrite} from '../src/ports/state-store.js'

type JournalJson =
  {runs: RunListing[]} | {runId: string; status: string; life?: {status: string; detail?: string}; entries: JournalEntry[]; torn: TornWrite | null}

export default class Journal extends SluiceCommand {
  static override summary = "List live runs, or show one run's timeline."

  static override description = `Without a run id, lists the runs in the state store with their status: how each ended (completed, gate-failed, held, interrupted, refused, failed, rolled-back), or, for one that never ended, \`running\` or \`dead (pid N gone)\` / \`dead (lease lapsed …)\`, judged by the holder's pid on this host or by watching its lease. With one, shows what the run did: who, on which host, when, every change with its before and after, and every gate verdict. A journal whose last line was cut off is reported, not trusted.`

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --json']

  static override args = {
    run: Args.string({description: 'A run id.'}),
  }

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<JournalJson> {
    const {args, flags} = await this.parse(Journal)
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    if (!args.run) {
      const runs = await listRuns(store, (m) => this.progress(m))
      if (runs.length === 0) this.log(`no runs in ${store.label}`)
      else this.log(runsTable(runs, this.width))
      return {runs}
    }
    const read = await store.read(args.run)
    const view = describeJournal(args.run, read)
    // A run that never ended is running or dead: said from its holder, as the listing says it.
    const {judgeRun, lifeStatus} = await import('../src/state/run-life.js')
    const life = view.status === 'unfinished' && !read.torn ? lifeStatus(await judgeRun(store, args.run, read), read) : null
    const lines = life ? [...view.lines.slice(0, -1), `status: unfinished, ${life.detail ? `${life.status} (${life.detail})` : life.status}`] : view.lines
    this.log(lines.join('\n'))
    if (read.torn) this.note(`warning: the last line (${read.torn.line}) of this journal is a torn write; see above`)
    return {runId: args.run, status: view.status, ...(life ? {life} : {}), entries: read.entries, torn: read.torn}
  }
}
