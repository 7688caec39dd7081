import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {RefusedError} from '../src/errors.js'
import {entryLine} from '../src/state/journal-view.js'
import {openStore} from '../src/state/open.js'
import type {WatchEnd} from '../src/state/watch.js'

export default class Watch extends SluiceCommand {
  static override summary = 'Follow a live run from any terminal, until it ends.'

  static override description = `Reads the run's journal from its state store (the same --state the run uses; dynamodb://TABLE reaches a run on another machine) and shows who runs it, each step, every change with the weights before and after, every gate verdict and every control, as the running process records them. It ends with the run (exit 0). A run that has already ended is shown whole (exit 0); one that is not running and never ended (its process died) is shown and said so (exit 4).

With --json, one journal entry per line (JSON Lines), as the running process writes them.`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --json | jq -c \'select(.type == "verdict")\'']

  static override args = {
    run: Args.string({description: 'The run id.', required: true}),
  }

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<WatchEnd> {
    const {args, flags} = await this.parse(Watch)
    const store = await openStore(flags.state, awsOptionsOf(flags))
    const {watchRun} = await import('../src/state/watch.js')
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal)
    const json = this.jsonEnabled()
    let end: WatchEnd
    try {
      end = await watchRun(store, args.run, (entry) => {
        if (json) process.stdout.write(`${JSON.stringify(entry)}\n`)
        else {
          const line = entryLine(args.run, entry)
          if (line !== null) this.log(line)
        }
      }, stop.signal)
    } finally {
      process.off('SIGINT', onSignal)
    }
    if (end.notRunning) throw new RefusedError(end.notRunning)
    this.note(end.wasRunning ? `run ${end.runId} ended: ${end.status}` : `run ${end.runId} is not running: it ended ${end.status}`)
    this.streamed = true
    return end
  }

  /** Under --json the entries were the output, one per line: no summary object after them (errors still print). */
  private streamed = false

  override logJson(json: unknown): void {
    if (!this.streamed) super.logJson(json)
  }
}
