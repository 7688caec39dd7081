import {Args, Flags} from '@oclif/core'
import {ControlCommand, controlFlags, type ControlJson} from '../src/cli/control-command.js'
import {awsOptionsOf, nowFlag, wayBackFlags} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import type {RollbackResult} from '../src/live/rollback.js'
import type {WatchEnd} from '../src/state/watch.js'

export default class Abort extends ControlCommand {
  static override summary = 'Stop a running live run at its next safe point, from any terminal; with --rollback, then take it all back as a ramp.'

  static override description = `Writes an abort for the run to its state store. The running process stops as it does on Ctrl-C: at its next safe point, with a ramp put back to its last good weights and a cycle's batch back in service; it lets go of its locks and exits 130, and its journal says who aborted it. \`sluice resume RUN\` or \`sluice rollback RUN\` go on from there. A run that is not running is refused (exit 4).

With --rollback, abort waits for the run to stop and then rolls it back as \`sluice rollback\` does: weights in steps onto the receiving pool, each behind the gate of the step that moved them, holding if one fails (exit 3); --now moves them at once (--now without --rollback is bad input, exit 2). The rollback's plan is shown and asked about; --yes answers.

With no RUN it sends nothing: stopping a run is not undone by a promote, so abort never picks one. It names the live runs in the store (id, runbook, operator@host, the step it is in) and exits 2; with none, it says so (exit 2).`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --rollback']

  // RUN may be left out only to be told which runs there are: stopping a run is not undone by a
  // promote, so abort never picks one (as pause and watch pick the one live run).
  static override args = {
    run: Args.string({
      description:
        'The run id (`sluice journal` lists the runs; the run prints its id); left out, the live runs are named, each with its step, and nothing is sent (exit 2): abort never picks a run for you.',
    }),
  }

  static override flags = {
    ...controlFlags,
    yes: Flags.boolean({
      char: 'y',
      description: "Answers the rollback's confirmation with --rollback; otherwise accepted for scripts (a control asks nothing).",
      default: false,
    }),
    // No default, here or on the flags that need it: oclif takes a flag with a default as given.
    rollback: Flags.boolean({
      description: 'Once the run has stopped, roll it back as `sluice rollback` does: in steps behind the gates, or with --now at once.',
    }),
    now: ofTheRollback('now', nowFlag.description, 'how the rollback moves weights back (at once)'),
    'from-live': ofTheRollback('from-live', wayBackFlags['from-live'].description, 'what the rollback plans from'),
    ungated: ofTheRollback('ungated', wayBackFlags.ungated.description, 'whether the rollback may take weights back ungated'),
  }

  protected readonly kind = 'abort' as const

  async run(): Promise<ControlJson & {stopped?: WatchEnd; rollback?: RollbackResult}> {
    const {args, flags} = await this.parse(Abort)
    if (args.run === undefined) {
      const [{nameTheRun}, stateStore] = await Promise.all([import('../src/state/live-run.js'), import('../src/cli/state-store.js')])
      await nameTheRun(await stateStore.openStateStore(flags.state, awsOptionsOf(flags)), 'abort', (m) => this.progress(m))
    }
    // Sent with the rollback it asks for: once the run takes it, a resume goes back, even if this process dies first.
    const sent = await this.send(args, flags, {rollback: flags.rollback})
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
      {yes: flags.yes, now: flags.now === true, fromLive: flags['from-live'] === true, ungated: flags.ungated === true, json: this.jsonEnabled()},
      {
        log: (text) => this.log(text),
        endWith: (outcome) => this.endWith(outcome),
      },
    )
    return {...sent, stopped, rollback}
  }
}

/**
 * A way-back flag of abort's: it says how the rollback goes, so it needs --rollback. Refused while
 * parsing, before anything is sent: an abort the operator meant to be followed by a rollback must
 * not stop the run and leave it there.
 */
function ofTheRollback(flag: string, description: string | undefined, says: string) {
  return related(Flags.boolean({description}), {
    dependsOn: {flags: ['rollback'], why: `--${flag} says ${says}, and abort rolls the run back only with --rollback`},
  })
}
