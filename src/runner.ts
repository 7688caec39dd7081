import type {RunResult} from './engine/engine.js'
import type {LiveSettings} from './live/run.js'
import type {EngineIO} from './ports/io.js'
import type {Rehearsal, RehearsalSettings} from './rehearsal/rehearse.js'
import type {Runbook} from './runbook/runbook.js'

/** What every run takes, rehearsed or live. */
export interface RunInputs {
  io: EngineIO
  /** Aborted on an interrupt: the run stops at the next safe point. */
  signal: AbortSignal
  operator: string
  /** Indexes of the approve steps approved in advance (`--approve STEP`). */
  approved?: number[]
}

/** What every run returns: the engine's result, with the run id of a live run or the rehearsal's record. */
export type RunReport = {run: RunResult} & ({mode: 'rehearsal'; runId: null; rehearsal: Rehearsal} | {mode: 'live'; runId: string; rehearsal: null})

/** Where a run goes: the simulated fleet or the live system, with what each needs. */
export type Mode = ({kind: 'rehearsal'} & RehearsalSettings) | ({kind: 'live'} & LiveSettings)

/**
 * The one seam between rehearsal and live. Each side is loaded only when it is picked, so a
 * rehearsal never loads the AWS SDK and a live run never loads the simulator.
 */
export async function runIn(mode: Mode, runbook: Runbook, inputs: RunInputs): Promise<RunReport> {
  if (mode.kind === 'rehearsal') {
    const {rehearse} = await import('./rehearsal/rehearse.js')
    return rehearse(runbook, inputs, mode)
  }
  const [{runLive}, {liveAws}] = await Promise.all([import('./live/run.js'), import('./live/control-plane.js')])
  // The profile and the region are settled before the run's first call and its journal.
  return runLive(runbook, inputs, {...mode, aws: await liveAws(runbook, mode.aws)})
}
