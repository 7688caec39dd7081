import type {AwsOptions} from '../aws/clients.js'
import type {EngineIO} from '../ports/io.js'
import {JournalWriter, mutations, runStart, runStatus, thisHost} from '../state/journal.js'
import type {StateStore} from '../ports/state-store.js'
import {liveControlPlane, lockedResources} from '../wiring/live.js'
import {readForRecovery, runbookOf, settleUnknown} from './history.js'
import {carryOut, planUndo} from './undo-run.js'

export interface RollbackResult {
  runId: string
  undone: Array<{kind: string; resource: string; describe: string}>
  /** What it said it would do, a line per undo: how each goes back, in how many steps, behind what, and why. */
  plan: string[]
  /** What rollback did not touch, and why: net-zero changes, and state that is no longer the run's. */
  leftAlone: string[]
  /** held: a gate failed on the way back and nobody said go on; the rest is not undone. */
  outcome: 'rolled-back' | 'refused' | 'nothing' | 'held' | 'interrupted'
  message: string
}

export interface RollbackOptions {
  /** Undo weights in one change each, as before ramped rollbacks: for a receiving side known to hold. */
  now?: boolean
  signal?: AbortSignal
}

/**
 * Undoes what a run changed: per resource, only its net effect, newest first (weights back to
 * where the run found them, its restrictions lifted and any it lifted put back, its freeze cleared,
 * targets it left out of rotation returned). Weights go back as a ramp: step by step, sized by the
 * receiving pool's capacity where the runbook states it, else through the weights the run passed,
 * each step behind the gate of the step that made them (--now: at once). A change whose outcome was
 * never recorded is first settled by reading real state, as resume does. Shows the plan, with what
 * it leaves alone and why, and asks first; records every undo in the run's journal.
 */
export async function rollbackRun(
  store: StateStore,
  runId: string,
  aws: AwsOptions,
  io: EngineIO,
  operator: string,
  options: RollbackOptions = {},
): Promise<RollbackResult> {
  const read = await readForRecovery(store, runId, 'rollback')
  if (runStatus(read) === 'rolled-back')
    return {runId, undone: [], plan: [], leftAlone: [], outcome: 'nothing', message: `run ${runId} was already rolled back`}
  const start = runStart(read)
  const runbook = runbookOf(start)
  const resources = lockedResources(runbook)
  const signal = options.signal ?? new AbortController().signal
  await store.acquire(resources, {runId, operator, host: thisHost, since: new Date().toISOString()})
  const {control, clients} = liveControlPlane(runbook, aws, {operator, freeze: store.freeze, runId})
  try {
    const journal = new JournalWriter(store, runId, (read.entries.at(-1)?.seq ?? 0) + 1)
    const recorded = mutations(read)
    for (const finding of await settleUnknown(recorded, control, journal, 'rollback')) io.notify({type: 'warning', message: `found on rollback: ${finding}`})
    const {undos, leftAlone} = await planUndo(
      recorded.filter((m) => m.outcome?.ok),
      runbook,
      control,
      options.now ?? false,
    )
    const alone = leftAlone.map((why) => `left alone: ${why}`)
    if (undos.length === 0) return {runId, undone: [], plan: [], leftAlone, outcome: 'nothing', message: `run ${runId} changed nothing that needs undoing`}
    const lines = undos.map((u) => u.line)
    const yes = await io.confirm(`Roll back run ${runId} (${runbook.name})?`, ['This will:', ...lines, ...alone])
    if (!yes) return {runId, undone: [], plan: lines, leftAlone, outcome: 'refused', message: `rollback of run ${runId} not confirmed; nothing was changed`}
    await journal.write('rollback-start', {operator, host: thisHost, pid: process.pid, undo: lines, leftAlone, ...(options.now ? {now: true} : {})})
    const done = await carryOut(undos, {control, record: journal, io, signal})
    const undone = done.undone.map(({kind, resource, describe}) => ({kind, resource, describe}))
    if (done.outcome !== 'done') {
      await journal.write('rollback-end', {outcome: done.outcome, ...(done.at ? {at: done.at} : {})})
      return {
        runId,
        undone,
        plan: lines,
        leftAlone,
        outcome: done.outcome,
        message: `rollback of run ${runId} ${done.outcome === 'held' ? 'held' : 'stopped'}: ${done.message}. \`sluice rollback ${runId}\` goes on from here${done.at ? '; --now moves the rest at once' : ''}`,
      }
    }
    await journal.write('rollback-end', {outcome: 'rolled-back'})
    return {
      runId,
      undone,
      plan: lines,
      leftAlone,
      outcome: 'rolled-back',
      message: `run ${runId} rolled back: ${undos.length} change${undos.length === 1 ? '' : 's'} undone`,
    }
  } finally {
    clients.destroy()
    await store.release(resources, runId)
  }
}
