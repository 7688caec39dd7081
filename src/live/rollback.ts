import type {AwsOptions} from '../aws/clients.js'
import type {Undo} from '../actions/action.js'
import {rulesOf} from '../actions/registry.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {EngineIO, RecordedMutation} from '../ports/io.js'
import {JournalWriter, mutations, runStart, runStatus, thisHost} from '../state/journal.js'
import type {StateStore} from '../ports/state-store.js'
import {liveControlPlane, lockedResources} from '../wiring/live.js'
import {applyRecorded, changesBySubject, readForRecovery, runbookOf, settleUnknown} from './history.js'
import {describeStepBack, planStepBack, walkStepBack, type SteppedUndo} from './step-back.js'

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

/** The weights undos a rollback takes in steps; the rest are one change each. */
const steppedKinds = new Set(['weights', 'pool-weights'])

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
    const {undos, leftAlone} = await plan(
      recorded.filter((m) => m.outcome?.ok),
      control,
    )
    const alone = leftAlone.map((why) => `left alone: ${why}`)
    if (undos.length === 0) return {runId, undone: [], plan: [], leftAlone, outcome: 'nothing', message: `run ${runId} changed nothing that needs undoing`}
    const stepped = new Map<Undo, SteppedUndo>()
    if (!options.now) for (const u of undos) if (steppedKinds.has(u.kind) && u.applyStep) stepped.set(u, await planStepBack(u, u.changes, runbook, control))
    const lines = undos.map((u, i) => {
      const s = stepped.get(u)
      return `${i + 1}. ${s ? describeStepBack(s) : `${u.describe}${steppedKinds.has(u.kind) ? ' at once (--now)' : ''}`}`
    })
    const yes = await io.confirm(`Roll back run ${runId} (${runbook.name})?`, ['This will:', ...lines, ...alone])
    if (!yes) return {runId, undone: [], plan: lines, leftAlone, outcome: 'refused', message: `rollback of run ${runId} not confirmed; nothing was changed`}
    await journal.write('rollback-start', {operator, host: thisHost, pid: process.pid, undo: lines, leftAlone, ...(options.now ? {now: true} : {})})
    const undone: RollbackResult['undone'] = []
    for (const u of undos) {
      const s = stepped.get(u)
      if (s) {
        const walked = await walkStepBack(s, {control, journal, io, signal})
        if (walked.outcome !== 'done') {
          await journal.write('rollback-end', {outcome: walked.outcome, at: walked.at})
          return {
            runId,
            undone,
            plan: lines,
            leftAlone,
            outcome: walked.outcome,
            message: `rollback of run ${runId} ${walked.outcome === 'held' ? 'held' : 'stopped'}: ${walked.message}. \`sluice rollback ${runId}\` goes on from here; --now moves the rest at once`,
          }
        }
      } else if (signal.aborted) {
        await journal.write('rollback-end', {outcome: 'interrupted'})
        return {
          runId,
          undone,
          plan: lines,
          leftAlone,
          outcome: 'interrupted',
          message: `rollback of run ${runId} stopped before: ${u.describe}. \`sluice rollback ${runId}\` goes on from here`,
        }
      } else await applyRecorded(journal, u)
      undone.push({kind: u.kind, resource: u.resource, describe: u.describe})
      io.notify({type: 'progress', step: -1, message: `undone: ${u.describe}`, at: control.clock.now()})
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

/** Each subject's net change, newest first, undone as the action that made the changes says, with the changes it undoes. */
async function plan(done: RecordedMutation[], control: ControlPlane): Promise<{undos: Array<Undo & {changes: RecordedMutation[]}>; leftAlone: string[]}> {
  const undos: Array<Undo & {seq: number; changes: RecordedMutation[]}> = []
  const leftAlone: string[] = []
  for (const changes of changesBySubject(done)) {
    const last = changes.at(-1)!
    const undo = await rulesOf(last).undo(changes, control)
    if (typeof undo === 'string') leftAlone.push(undo)
    else undos.push({...undo, seq: last.seq, changes})
  }
  return {undos: undos.sort((a, b) => b.seq - a.seq), leftAlone}
}
