import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {describeJournal, listRuns, type RunListing} from '../src/state/journal-view.js'
import {openStore} from '../src/state/open.js'
import type {JournalEntry, TornWrite} from '../src/ports/state-store.js'

type JournalJson = {runs: RunListing[]} | {runId: string; status: string; entries: JournalEntry[]; torn: TornWrite | null}

export default class Journal extends SluiceCommand {
  static override summary = 'List live runs, or show one run\'s timeline.'

  static override description = `Without a run id, lists the runs in the state store with their status (completed, gate-failed, held, interrupted, refused, failed, rolled-back, or unfinished when the process died). With one, shows what the run did: who, on which host, when, every change with its before and after, and every gate verdict. A journal whose last line was cut off is reported, not trusted.`

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --json']

  static override args = {
    run: Args.string({description: 'A run id.'}),
  }

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<JournalJson> {
    const {args, flags} = await this.parse(Journal)
    const store = await openStore(flags.state, awsOptionsOf(flags))
    if (!args.run) {
      const runs = await listRuns(store)
      if (runs.length === 0) this.log(`no runs in ${store.label}`)
      for (const r of runs) this.log(`${r.runId}  ${r.status.padEnd(11)}  ${r.runbook}  by ${r.operator} on ${r.host}  started ${r.startedAt}`)
      return {runs}
    }
    const read = await store.read(args.run)
    const view = describeJournal(args.run, read)
    this.log(view.lines.join('\n'))
    if (read.torn) this.note(`warning: the last line (${read.torn.line}) of this journal is a torn write; see above`)
    return {runId: args.run, status: view.status, entries: read.entries, torn: read.torn}
  }
}
