import type {Lever, RunbookLevers} from '../assess/assess.js'
import type {Runbook} from '../loader/runbook.js'
import type {EngineIO} from '../ports/io.js'
import {rehearse} from './rehearsal.js'
import {InputError} from '../errors.js'

/**
 * Runbooks as assess's levers: each rehearsed against the question (the pool as it is now, the
 * trigger fixed) from the fix on, every approval given, as `run --dry-run --scenario` would with
 * that scenario. It holds when the pool is back at full service when the runbook has ended and the
 * fleet has settled; how soon is counted from the fix, as every lever's is.
 */
export function rehearsedRunbooks(runbooks: Array<{ref: string; runbook: Runbook}>): RunbookLevers {
  const quiet: EngineIO = {notify: () => undefined, confirm: async () => true}
  return async ({scenario, setup, fixAt}) => {
    const levers: Lever[] = []
    for (const {ref, runbook} of runbooks) {
      let report
      try {
        report = await rehearse(
          runbook,
          {io: quiet, signal: new AbortController().signal, operator: 'assess', approved: runbook.steps.map((s) => s.index)},
          {scenario, setup: setup.name, startAt: fixAt, pace: null, seeds: 1},
        )
      } catch (error) {
        // A runbook written for other pools cannot be rehearsed on this one: a lever that does not apply, said why, not a failed assessment.
        if (!(error instanceof InputError)) throw error
        levers.push({kind: 'runbook', what: `${runbook.name} does not fit this pool: ${error.message}`, value: null, holds: false, backInSeconds: null})
        continue
      }
      const {rehearsal, run} = report
      const back = rehearsal.recovered ? rehearsal.summary.recoveredSecondsAfterFix : null
      const ended =
        run.outcome === 'completed' ? 'completes' : `stops ${run.outcome} at step ${run.stoppedAt?.step ?? '?'} (${run.stoppedAt?.title ?? run.message})`
      levers.push({
        kind: 'runbook',
        what: `run ${runbook.name} now: rehearsed from now it ${ended} in ${Math.round(rehearsal.endAt - rehearsal.startAt)} s`,
        value: null,
        holds: rehearsal.recovered,
        backInSeconds: back,
        command: `sluice run ${ref}`,
      })
    }
    return levers
  }
}
