import {Flags} from '@oclif/core'
import {ControlCommand, controlArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'
import {awsOptionsOf, nowFlag} from '../src/cli/flags.js'
import type {RollbackResult} from '../src/live/rollback.js'
import type {WatchEnd} from '../src/state/watch.js'

export default class Abort extends ControlCommand {
  static override summary = 'Stop a running live run at its next safe point, from any terminal; with --rollback, then take it all back as a ramp.'

  static override description = `Writes an abort for the run to its state store. The running process stops as it does on Ctrl-C: at its next safe point, with a ramp put back to its last good weights and a cycle's batch back in service; it lets go of its locks and exits 130, and its journal says who aborted it. \`sluice resume RUN\` or \`sluice rollback RUN\` go on from there. A run that is not running is refused (exit 4).

With --rollback, abort waits for the run to stop and then rolls it back as \`sluice rollback\` does: weights in steps onto the receiving pool, each behind the gate of the step that moved them, holding if one fails (exit 3); --now moves them at once. The rollback's plan is shown and asked about; --yes answers.`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --rollback']

  static override args = controlArgs

  static override flags = {
    ...controlFlags,
    yes: Flags.boolean({
      char: 'y',
      description: "Answers the rollback's confirmation with --rollback; otherwise accepted for scripts (a control asks nothing).",
      default: false,
    }),
    rollback: Flags.boolean({
      description: 'Once the run has stopped, roll it back as `sluice rollback` does: in steps behind the gates, or with --now at once.',
      default: false,
    }),
    now: {...nowFlag, dependsOn: ['rollback']},
  }

  protected readonly kind = 'abort' as const

  async run(): Promise<ControlJson & {stopped?: WatchEnd; rollback?: RollbackResult}> {
    const {args, flags} = await this.parse(Abort)
    const sent = await this.send(args, flags)
    if (!flags.rollback) return sent
    const aws = awsOptionsOf(flags)
    const [{openStateStore}, {waitUntilStopped}, {rollBackAtTerminal}] = await Promise.all([
      import('../src/cli/state-store.js'),
      import('../src/state/watch.js'),
      import('../src/cli/roll-back.js'),
    ])
    const store = await openStateStore(flags.state, aws)
    this.progress(`waiting for run ${sent.runId} to stop before rolling it back`)
    const stopped = await waitUntilStopped(store, sent.runId, new AbortController().signal)
    this.progress(`run ${sent.runId} ${stopped.outcome ? `stopped (${stopped.outcome})` : `is not running: ${stopped.notRunning}`}; rolling it back`)
    const rollback = await rollBackAtTerminal(
      store,
      sent.runId,
      aws,
      {yes: flags.yes, now: flags.now, json: this.jsonEnabled()},
      {
        log: (text) => this.log(text),
        endWith: (outcome) => this.endWith(outcome),
      },
    )
    return {...sent, stopped, rollback}
  }
}
