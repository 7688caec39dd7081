import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, nowFlag, runFlags, stateFlags} from '../src/cli/flags.js'
import {rollBackAtTerminal} from '../src/cli/roll-back.js'
import type {RollbackResult} from '../src/live/rollback.js'
import {openStateStore} from '../src/cli/state-store.js'

export default class Rollback extends SluiceCommand {
  static override summary = 'Undo what a live run changed, newest first.'

  static override description = `Reads the run's journal and undoes its changes in reverse order: the weights set back to exactly what the run found, restrictions it added lifted (and any it lifted put back), its freeze cleared, targets it left out of rotation returned. Weights go back as a ramp onto the pool that receives the traffic: steps sized by that pool's healthy targets × its targets.capacityPerTarget against today's demand, or else back through the weights the run passed, each baked behind the gate of the step that made them, moved to the receiving pool. A gate that fails on the way back holds there and asks the person at the terminal whether to go on (--yes never answers that; with nobody to ask it holds, exit 3); run rollback again to go on. --now moves weights at once. Shows the plan and asks first (--yes answers; no terminal and no --yes refuses with exit 4). Every undo and every verdict is recorded in the run's journal. \`sluice run --dry-run --rollback ramped|now\` rehearses it.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --yes --json',
  ]

  static override args = {
    run: Args.string({description: 'The run id (see `sluice journal`).', required: true}),
  }

  static override flags = {
    yes: runFlags.yes,
    now: nowFlag,
    ...awsFlags,
    ...stateFlags,
  }

  async run(): Promise<RollbackResult> {
    const {args, flags} = await this.parse(Rollback)
    const aws = awsOptionsOf(flags)
    const store = await openStateStore(flags.state, aws)
    return rollBackAtTerminal(
      store,
      args.run,
      aws,
      {yes: flags.yes, now: flags.now, json: this.jsonEnabled()},
      {
        log: (text) => this.log(text),
        endWith: (outcome) => this.endWith(outcome),
      },
    )
  }
}
