import {Args} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, nowFlag, runFlags, stateFlags, wayBackFlags} from '../src/cli/flags.js'
import {rollBackAtTerminal} from '../src/cli/roll-back.js'
import type {RollbackResult} from '../src/live/rollback.js'
import {openStateStore} from '../src/cli/state-store.js'

export default class Rollback extends SluiceCommand {
  static override summary = 'Undo what a live run changed, newest first, as a run of its own that any terminal can watch, pause, promote and abort.'

  static override description = `Reads the run's journal, then the world: what a later run changed is left to that run (named), and anything else not as the run left it refuses the rollback (exit 4, each difference named; --from-live plans from what is there). Then it undoes the run's changes in reverse order: the weights set back to exactly what the run found, restrictions it added lifted (and any it lifted put back), its freeze cleared, targets it left out of rotation returned. Weights go back as a ramp onto the pool that receives the traffic: steps sized by that pool's healthy targets × its targets.capacityPerTarget against today's demand, or else back through the weights the run passed, each baked behind the newest gate of the steps that moved them (else the runbook's gate on the receiving pool; with none it refuses unless --ungated), moved to the receiving pool; the plan names the receiving pool and whether it failed a gate in this run. The rollback is a run of its own under the run's id: it holds the run's lock, \`sluice journal\` lists it as running (rolling back), and \`sluice watch\`, \`pause\`, \`promote\` and \`abort\` work on it from any terminal; one killed or held goes on with \`sluice rollback RUN\` or \`sluice resume RUN\`, never forwards. A gate that fails on the way back holds there and asks the person at the terminal whether to go on (--yes never answers that; with nobody to ask it holds, exit 3); run rollback again to go on. --now moves weights at once. Shows the plan and asks first (--yes answers; no terminal and no --yes refuses with exit 4). Every undo and every verdict is recorded in the run's journal. \`sluice run --dry-run --rollback ramped|now\` rehearses it.`

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
    ...wayBackFlags,
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
      {yes: flags.yes, now: flags.now, fromLive: flags['from-live'], ungated: flags.ungated, json: this.jsonEnabled()},
      {
        log: (text) => this.log(text),
        endWith: (outcome) => this.endWith(outcome),
      },
    )
  }
}
