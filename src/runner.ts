import type {LiveReport, LiveSettings} from './live/live-run.js'
import type {RunInputs} from './ports/run.js'
import type {RehearsalReport, RehearsalSettings} from './wiring/rehearsal.js'
import type {Runbook} from './loader/runbook.js'

/** What every run returns: the engine's result, with the run id of a live run or the rehearsal's record. */
export type RunReport = RehearsalReport | LiveReport

/** Where a run goes: the simulated fleet or the live system, with what each needs. */
export type Mode = ({kind: 'rehearsal'} & RehearsalSettings) | ({kind: 'live'} & LiveSettings)

/**
 * The one seam between rehearsal and live. Each side is loaded only when it is picked, so a
 * rehearsal never loads the AWS SDK and a live run never loads the simulator.
 */
export async function runIn(mode: Mode, runbook: Runbook, inputs: RunInputs): Promise<RunReport> {
  if (mode.kind === 'rehearsal') {
    const {rehearse} = await import('./wiring/rehearsal.js')
    return rehearse(runbook, inputs, mode)
  }
  const [{runLive}, {liveAws}] = await Promise.all([import('./live/live-run.js'), import('./wiring/live.js')])
  // The profile and the region are settled before the run's first call and its journal.
  return runLive(runbook, inputs, {...mode, aws: await liveAws(runbook, mode.aws)})
}
