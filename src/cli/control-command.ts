import {Args, Flags} from '@oclif/core'
import type {ControlKind} from '../ports/controls.js'
import type {ControlSent} from '../state/controls.js'
import type {StateStore} from '../ports/state-store.js'
import {openStateStore} from './state-store.js'
import {thisHost} from '../state/journal.js'
import {controlName} from '../format.js'
import {SluiceCommand} from './base.js'
import {awsFlags, awsOptionsOf, stateFlags, type FlagValues} from './flags.js'
import {operator} from './run-runbook.js'

/** The argument and flags every control command takes (each command declares them itself: oclif reads its own statics). */
export const controlArgs = {
  run: Args.string({description: 'The run id (`sluice journal` lists the runs; the run prints its id).', required: true}),
}
/** `pause` may leave RUN out: then it pauses the one live run, the control most often sent in a hurry and the easiest to undo. */
export const optionalRunArgs = {
  run: Args.string({
    description:
      'The run id (`sluice journal` lists the runs; the run prints its id); left out, the one live run in the store (exit 2 if there is none, or several).',
  }),
}
/** --yes: a control asks nothing (it is the operator's act), but scripts pass --yes to every command that changes something. */
export const controlFlags = {
  ...stateFlags,
  ...awsFlags,
  yes: Flags.boolean({char: 'y', description: 'Accepted for scripts that pass --yes everywhere; a control asks nothing.', default: false}),
}

/** What `--json` prints for `pause`, `promote` and `abort`. */
export type ControlJson = ControlSent

const effects: Record<ControlKind, string> = {
  pause:
    'It holds where it is (a wait or bake stops counting, a gate is still measured; a cycle holds between batches, a ramp between steps), keeping its locks and the pause across a crash, until `sluice promote` or `sluice abort`',
  promote:
    'It continues if paused; otherwise it answers a waiting approve step, or ends the current bake as soon as its gate has passed the times in a row it needs',
  abort: 'It stops at its next safe point (a ramp puts back its last good weights) and ends with exit 130',
}

const fullEffect =
  'It continues if paused, or answers what waits now (a bake, an approval); from then on every bake and wait ends as soon as its gate has passed the times in a row it needs, and an approve step still asks'

/**
 * The controls an operator sends a live run from any terminal: an intent written to the run's
 * state store, which the running process reads within a second and records in its journal with
 * who sent it. A run that is not running is refused (exit 4).
 */
export abstract class ControlCommand extends SluiceCommand {
  protected abstract readonly kind: ControlKind

  protected async send(
    args: {run?: string},
    flags: FlagValues<typeof stateFlags & typeof awsFlags>,
    options: {rollback?: boolean; full?: boolean} = {},
  ): Promise<ControlJson> {
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    const runId = args.run ?? (await this.theLiveRun(store))
    const {sendControl} = await import('../state/controls.js')
    const sent = await sendControl(store, runId, this.kind, {operator: operator(), host: thisHost, pid: process.pid}, (m) => this.progress(m), options)
    const by = sent.runningBy
    const {taken} = sent
    // What the run did with it, in its own words ("approved step 6", "nothing was waiting: …").
    const effect = options.full ? fullEffect : effects[this.kind]
    const took = taken ? `the run took it up: ${taken.did}` : `the run is alive but has not taken it up yet; it will at its next look. ${effect}`
    this.log(
      `${controlName({kind: this.kind, ...options})} sent to run ${sent.runId} (${sent.runbook}, run by ${by.operator} on ${by.host}, pid ${by.pid}) as control ${sent.control.seq}; ${took}`,
    )
    // A promote nothing was waiting for did nothing: not done (exit 4), so a script does not go on as if it had.
    if (taken?.effect === 'nothing waiting') this.endWith('refused')
    this.note(`\`sluice watch ${sent.runId}\` follows it`)
    return sent
  }

  /** With no RUN: the one live run, said on stderr (under --json too: it is not the result). */
  private async theLiveRun(store: StateStore): Promise<string> {
    const {theLiveRun, runLabel} = await import('../state/live-run.js')
    const run = await theLiveRun(store, this.kind, (m) => this.progress(m))
    this.progress(`${gerunds[this.kind]} the one live run: ${runLabel(run)}`)
    return run.runId
  }
}

const gerunds: Record<ControlKind, string> = {pause: 'pausing', promote: 'promoting', abort: 'aborting'}
