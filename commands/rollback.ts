import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, runFlags, stateFlags} from '../src/cli/flags.js'
import {operator} from '../src/cli/run-runbook.js'
import type {RollbackResult} from '../src/live/rollback.js'
import {openStateStore} from '../src/cli/state-store.js'

export default class Rollback extends SluiceCommand {
  static override summary = 'Undo what a live run changed, newest first.'

  static override description = `Reads the run's journal and undoes its changes in reverse order: the weights set back to exactly what the run found, restrictions it added lifted (and any it lifted put back), its freeze cleared, targets it left out of rotation returned. Weights go back as a ramp onto the pool that receives the traffic: steps sized by that pool's healthy targets × its targets.capacityPerTarget against today's demand, or else back through the weights the run passed, each baked behind the gate of the step that made them, moved to the receiving pool. A gate that fails on the way back holds there and asks the person at the terminal whether to go on (--yes never answers that; with nobody to ask it holds, exit 3); run rollback again to go on. --now moves weights at once. Shows the plan and asks first (--yes answers; no terminal and no --yes refuses with exit 4). Every undo and every verdict is recorded in the run's journal.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --yes --json',
  ]

  static override args = {
    run: Args.string({description: 'The run id (see `sluice journal`).', required: true}),
  }

  static override flags = {
    yes: runFlags.yes,
    now: Flags.boolean({
      description: 'Move weights back in one change each, without steps or gates: for when the receiving side is known to hold.',
      default: false,
    }),
    ...awsFlags,
    ...stateFlags,
  }

  async run(): Promise<RollbackResult> {
    const {args, flags} = await this.parse(Rollback)
    const aws = awsOptionsOf(flags)
    const store = await openStateStore(flags.state, aws)
    const [{rollbackRun}, {TerminalIO, chooseMode}, {onStopSignals}] = await Promise.all([
      import('../src/live/rollback.js'),
      import('../src/cli/terminal/terminal-io.js'),
      import('../src/cli/stop-signals.js'),
    ])
    const io = new TerminalIO({mode: chooseMode({json: this.jsonEnabled()}), yes: flags.yes, interactive: Boolean(process.stdin.isTTY && process.stderr.isTTY)})
    const stop = onStopSignals((text) => process.stderr.write(`${text}\n`), 'holding at the weights reached')
    let result: RollbackResult
    try {
      result = await rollbackRun(store, args.run, aws, io, operator(), {now: flags.now, signal: stop.signal})
    } finally {
      stop.release()
      await io.close()
    }
    this.log(result.message)
    for (const u of result.undone) this.log(`  undone: ${u.describe}`)
    for (const why of result.leftAlone) this.log(`  left alone: ${why}`)
    if (result.outcome === 'refused') this.endWith('refused')
    if (result.outcome === 'held') this.endWith('gate-failed')
    if (result.outcome === 'interrupted') this.endWith('interrupted')
    return result
  }
}
