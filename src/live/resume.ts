import type {AwsOptions} from '../aws/clients.js'
import type {Runbook} from '../loader/runbook.js'
import {
  baselineBeforeLastChange,
  firstUnfinishedStep,
  isOnWayBack,
  JournalWriter,
  mutations,
  pauseInForce,
  runStart,
  runStatus,
  thisHost,
} from '../state/journal.js'
import {journalLock, type StateStore} from '../ports/state-store.js'
import type {ResumeSettings} from './live-run.js'
import {liveControlPlane, lockedResources} from '../wiring/live.js'
import {readForRecovery, runbookOf, settleUnknown} from './recovery.js'
import {sameAccount} from './preflight.js'
import {releaseLeftLocks} from '../state/run-life.js'

export interface ResumePlan {
  runbook: Runbook
  resume: ResumeSettings
  /** What was found out about changes whose outcome had not been recorded. */
  settled: string[]
}

/**
 * Works out how to continue a run: the same runbook, from the first step that did not finish.
 * A change whose outcome was never recorded is looked up in the real state (applied, or not) and
 * the finding recorded; if the state matches neither side, it refuses and says what to check.
 */
export async function planResume(
  store: StateStore,
  runId: string,
  aws: AwsOptions,
  operator: string,
  notify: (message: string) => void,
  reapply = false,
): Promise<ResumePlan | {nothing: string} | {wayBack: string}> {
  const read = await readForRecovery(store, runId, 'resume')
  const status = runStatus(read)
  const who = {runId, operator, host: thisHost, since: new Date().toISOString()}
  if (status === 'completed' || status === 'rolled-back') {
    await releaseLeftLocks(store, runId, who, notify)
    return {nothing: `run ${runId} ${status === 'completed' ? 'completed' : 'was rolled back'}; there is nothing to resume`}
  }
  // Once a run has started back, it only ever goes back: resuming it forwards would undo the undo.
  if (isOnWayBack(read))
    return {
      wayBack: `run ${runId} ${status === 'rolling-back' || status === 'rollback-held' ? `is partway through its rollback (${status})` : 'took an abort --rollback, and its rollback never began'}: resume goes on with the rollback, never forwards`,
    }
  const start = runStart(read)
  const runbook = runbookOf(start)
  await sameAccount(runId, runbook, aws, start.identity)
  const recorded = mutations(read)
  const journal = new JournalWriter(store, runId, (read.entries.at(-1)?.seq ?? 0) + 1)
  // Every lock the run needs, at once: a dead holder's leases are waited out together (at most
  // one lease, and not at all for a pid gone from this host), and the resumed run keeps them.
  const resources = [...lockedResources(runbook), journalLock(runId)]
  await store.acquire(resources, who, {notify})
  let settled: string[] = []
  try {
    if (recorded.some((m) => m.outcome === undefined)) {
      const {control, clients} = liveControlPlane(runbook, aws, {operator, freeze: store.freeze, runId})
      try {
        settled = await settleUnknown(recorded, control, journal, 'resume')
      } finally {
        clients.destroy()
      }
    }
  } catch (error) {
    await store.release(resources, runId).catch(() => undefined)
    throw error
  }
  const fromStep = firstUnfinishedStep(read, runbook.steps.length)
  const baseline = baselineBeforeLastChange(read, fromStep)
  return {
    runbook,
    settled,
    resume: {
      runId,
      nextSeq: journal.nextSeq,
      fromStep,
      mutations: recorded.filter((m) => m.step === fromStep),
      ...(baseline ? {baseline} : {}),
      done: recorded,
      paused: pauseInForce(read),
      reapply,
    },
  }
}
