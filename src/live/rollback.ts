import type {AwsOptions} from '../aws/clients.js'
import type {Undo} from '../actions/action.js'
import {rulesOf} from '../actions/registry.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {EngineIO, RecordedMutation} from '../ports/io.js'
import {JournalWriter, mutations, runStart, runStatus, thisHost} from '../state/journal.js'
import type {StateStore} from '../ports/state-store.js'
import {liveControlPlane, lockedResources} from '../wiring/live.js'
import {applyRecorded, changesBySubject, readForRecovery, runbookOf, settleUnknown} from './history.js'

export interface RollbackResult {
  runId: string
  undone: Array<{kind: string; resource: string; describe: string}>
  /** What rollback did not touch, and why: net-zero changes, and state that is no longer the run's. */
  leftAlone: string[]
  outcome: 'rolled-back' | 'refused' | 'nothing'
  message: string
}

/**
 * Undoes what a run changed: per resource, only its net effect, newest first (weights back to
 * where the run found them, its restrictions lifted and any it lifted put back, its freeze cleared,
 * targets it left out of rotation returned). A change whose outcome was never recorded is first
 * settled by reading real state, as resume does. Shows the plan, with what it leaves alone and
 * why, and asks first; records every undo in the run's journal.
 */
export async function rollbackRun(store: StateStore, runId: string, aws: AwsOptions, io: EngineIO, operator: string): Promise<RollbackResult> {
  const read = await readForRecovery(store, runId, 'rollback')
  if (runStatus(read) === 'rolled-back') return {runId, undone: [], leftAlone: [], outcome: 'nothing', message: `run ${runId} was already rolled back`}
  const start = runStart(read)
  const runbook = runbookOf(start)
  const resources = lockedResources(runbook)
  await store.acquire(resources, {runId, operator, host: thisHost, since: new Date().toISOString()})
  const {control, clients} = liveControlPlane(runbook, aws, {operator, freeze: store.freeze, runId})
  try {
    const journal = new JournalWriter(store, runId, (read.entries.at(-1)?.seq ?? 0) + 1)
    const recorded = mutations(read)
    for (const finding of await settleUnknown(recorded, control, journal, 'rollback')) io.notify({type: 'warning', message: `found on rollback: ${finding}`})
    const {undos, leftAlone} = await plan(
      recorded.filter((m) => m.outcome?.ok),
      control,
    )
    const alone = leftAlone.map((why) => `left alone: ${why}`)
    if (undos.length === 0) return {runId, undone: [], leftAlone, outcome: 'nothing', message: `run ${runId} changed nothing that needs undoing`}
    const yes = await io.confirm(`Roll back run ${runId} (${runbook.name})?`, ['This will:', ...undos.map((u, i) => `${i + 1}. ${u.describe}`), ...alone])
    if (!yes) return {runId, undone: [], leftAlone, outcome: 'refused', message: `rollback of run ${runId} not confirmed; nothing was changed`}
    await journal.write('rollback-start', {operator, host: thisHost, pid: process.pid, undo: undos.map((u) => u.describe), leftAlone})
    for (const u of undos) {
      await applyRecorded(journal, u)
      io.notify({type: 'progress', step: -1, message: `undone: ${u.describe}`, at: control.clock.now()})
    }
    await journal.write('rollback-end', {outcome: 'rolled-back'})
    return {
      runId,
      undone: undos.map(({kind, resource, describe}) => ({kind, resource, describe})),
      leftAlone,
      outcome: 'rolled-back',
      message: `run ${runId} rolled back: ${undos.length} change${undos.length === 1 ? '' : 's'} undone`,
    }
  } finally {
    clients.destroy()
    await store.release(resources, runId)
  }
}

/** Each subject's net change, newest first, undone as the action that made the changes says. */
async function plan(done: RecordedMutation[], control: ControlPlane): Promise<{undos: Undo[]; leftAlone: string[]}> {
  const undos: Array<Undo & {seq: number}> = []
  const leftAlone: string[] = []
  for (const changes of changesBySubject(done)) {
    const last = changes.at(-1)!
    const undo = await rulesOf(last).undo(changes, control)
    if (typeof undo === 'string') leftAlone.push(undo)
    else undos.push({...undo, seq: last.seq})
  }
  return {undos: undos.sort((a, b) => b.seq - a.seq), leftAlone}
}
