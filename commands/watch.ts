import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {exitCodes} from '../src/cli/exit-codes.js'
import {RefusedError, type Outcome} from '../src/errors.js'
import {openStateStore} from '../src/cli/state-store.js'
import type {WatchEnd} from '../src/state/watch.js'
import type {StateStore} from '../src/ports/state-store.js'

export default class Watch extends SluiceCommand {
  static override summary = 'Follow a live run from any terminal, until it ends; with no RUN, the one live run.'

  static override description = `Reads the run's journal from its state store (the same --state the run uses; dynamodb://TABLE reaches a run on another machine) and shows it as the running process's own terminal does: who runs it, each step, every change with the weights before and after, the gate verdicts, the bake counting down, and every control. On a terminal it is redrawn in place; otherwise (a file, a CI log) it is timestamped lines. It ends with the run, with the run's own exit code (0 completed, 3 a gate failed, 4 refused, 130 interrupted or aborted, 1 failed). A run that has already ended is shown whole, with the exit code it ended with; one that is not running and never ended (its process died) is shown and said so (exit 4). Whether it runs is judged by its holder's pid on this host, or by its lease moving, never by another machine's clock.

With no RUN it follows the one live run in the store and says which on stderr; no live run, or several, is exit 2, naming them. A run held on another host is first judged by its lease, as \`sluice journal\` judges it (up to one lease).

With --json, one journal entry per line (JSON Lines), as the running process writes them.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2',
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --json | jq -c \'select(.type == "verdict")\'',
  ]

  static override args = {
    run: Args.string({description: 'The run id; left out, the one live run in the store (exit 2 if there is none, or several).'}),
  }

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<WatchEnd> {
    const {args, flags} = await this.parse(Watch)
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    const runId = args.run ?? (await this.theLiveRun(store))
    const [{watchRun}, {TerminalIO, chooseMode}, {WatchView}] = await Promise.all([
      import('../src/state/watch.js'),
      import('../src/cli/terminal/terminal-io.js'),
      import('../src/cli/terminal/watch-view.js'),
    ])
    const json = this.jsonEnabled()
    // What is watched is the output: on stdout, drawn when stdout is a terminal.
    const mode = chooseMode({json, isTTY: process.stdout.isTTY === true})
    const view = new WatchView(new TerminalIO({mode, yes: false, interactive: false, stream: process.stdout, clock: 'wall'}), runId)
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal)
    let end: WatchEnd
    try {
      end = await watchRun(
        store,
        runId,
        (entry, past) => {
          if (json) process.stdout.write(`${JSON.stringify(entry)}\n`)
          else view.show(entry, past)
        },
        stop.signal,
      )
    } finally {
      process.off('SIGINT', onSignal)
      await view.close()
    }
    if (end.notRunning) throw new RefusedError(end.notRunning)
    this.note(end.wasRunning ? `run ${end.runId} ended: ${end.status}` : `run ${end.runId} is not running: it ended ${end.status}`)
    this.streamed = true
    // The run's own exit code, so a script that watches a run learns how it ended.
    if (end.outcome && end.outcome in exitCodes) this.endWith(end.outcome as Outcome)
    return end
  }

  /** With no RUN: the one live run, said on stderr (under --json too: it is not the output). */
  private async theLiveRun(store: StateStore): Promise<string> {
    const {theLiveRun, runLabel} = await import('../src/state/live-run.js')
    const run = await theLiveRun(store, 'watch', (m) => this.progress(m))
    this.progress(`watching the one live run: ${runLabel(run)}`)
    return run.runId
  }

  /** Under --json the entries were the output, one per line: no summary object after them (errors still print). */
  private streamed = false

  override logJson(json: unknown): void {
    if (!this.streamed) super.logJson(json)
  }
}
