import type {Drift, Undo} from '../actions/action.js'
import type {RunControls} from '../ports/controls.js'
import {rulesOf} from '../actions/registry.js'
import type {Runbook} from '../loader/runbook.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import type {EngineIO, GateVerdict, RecordedMutation, RunEvent} from '../ports/io.js'
import {applyRecorded, changesBySubject, type ChangeRecorder} from './history.js'
import {describeStepBack, planStepBack, walkStepBack, type SteppedUndo, type WayBackContext, failedPools} from './step-back.js'

// What a rollback undoes and how, apart from where it is recorded: `sluice rollback` writes it in
// the run's journal, a drill that rolls its runbook back keeps it in memory.

/** The weights undos a rollback takes in steps; the rest are one change each. */
const steppedKinds = new Set(['weights', 'pool-weights'])

export interface PlannedUndo {
  undo: Undo
  /** Set when the undo goes back in steps. */
  stepped?: SteppedUndo
  /** The plan's line for it: how, in how many steps, behind what, and why. */
  line: string
}

/** How a way back is planned, beyond the changes it undoes. */
export interface UndoPlanning {
  /** Weights at once, not in steps. */
  now: boolean
  /** What the journal says of the run: which pools failed a gate. */
  context: WayBackContext
  /**
   * Subjects whose live state differs from what the run left, planned from what is there
   * (`--from-live`): weights go back from the live weights; anything else that is no longer as the
   * run left it is left alone, said why.
   */
  fromLive?: Map<string, Drift>
}

/**
 * Each subject's net change, newest first, undone as the action that made the changes says; a
 * weights undo planned as steps back unless `now`.
 */
export async function planUndo(
  done: RecordedMutation[],
  runbook: Runbook,
  control: ControlPlane,
  planning: UndoPlanning,
): Promise<{undos: PlannedUndo[]; leftAlone: string[]}> {
  const found: Array<{undo: Undo; seq: number; changes: RecordedMutation[]}> = []
  const leftAlone: string[] = []
  for (const changes of changesBySubject(done)) {
    const last = changes.at(-1)!
    const drift = planning.fromLive?.get(rulesOf(last).subject(last))
    if (drift && drift.live === undefined) {
      leftAlone.push(`${drift.subject}: the journal says ${drift.left}, and it is ${drift.now}; left as it is (--from-live)`)
      continue
    }
    const undo = await rulesOf(last).undo(changes, control)
    if (typeof undo === 'string') leftAlone.push(undo)
    else found.push({undo: drift ? {...undo, before: drift.live} : undo, seq: last.seq, changes})
  }
  found.sort((a, b) => b.seq - a.seq)
  const undos: PlannedUndo[] = []
  for (const [i, {undo, changes}] of found.entries()) {
    const stepped =
      !planning.now && steppedKinds.has(undo.kind) && undo.applyStep ? await planStepBack(undo, changes, runbook, control, planning.context) : undefined
    const how = stepped ? describeStepBack(stepped) : `${undo.describe}${steppedKinds.has(undo.kind) ? ' at once (--now)' : ''}`
    undos.push({undo, ...(stepped ? {stepped} : {}), line: `${i + 1}. ${how}`})
  }
  return {undos, leftAlone}
}

export type UndoOutcome = {outcome: 'done'; undone: Undo[]} | {outcome: 'held' | 'interrupted'; undone: Undo[]; message: string; at?: WeightMap}

/** Carries out planned undos in order, each change recorded; a step back that holds, or an interrupt, stops the rest. */
export async function carryOut(
  undos: PlannedUndo[],
  run: {control: ControlPlane; record: ChangeRecorder; io: EngineIO; signal: AbortSignal; controls?: RunControls},
): Promise<UndoOutcome> {
  const {control, record, io, signal} = run
  const undone: Undo[] = []
  for (const {undo, stepped} of undos) {
    if (stepped) {
      const walked = await walkStepBack(stepped, run)
      if (walked.outcome !== 'done') return {outcome: walked.outcome, undone, message: walked.message, at: walked.at}
    } else if (signal.aborted) {
      return {outcome: 'interrupted', undone, message: `stopped before: ${undo.describe}`}
    } else {
      if (run.controls?.pausedBy) await run.controls.whilePaused(signal)
      if (signal.aborted) return {outcome: 'interrupted', undone, message: `stopped before: ${undo.describe}`}
      await applyRecorded(record, undo)
    }
    undone.push(undo)
    io.notify({type: 'progress', step: -1, message: `undone: ${undo.describe}`, at: control.clock.now()})
  }
  return {outcome: 'done', undone}
}

/** A rollback carried out right after a run, with nothing but memory to record it in: a drill's, or its prediction's. */
export interface RollbackAfterRun {
  /** Clock seconds it started and ended at. */
  startedAt: number
  endedAt: number
  plan: string[]
  outcome: UndoOutcome['outcome']
  message: string | null
  /** The verdicts of its gates on the way back. */
  verdicts: GateVerdict[]
}

/**
 * Rolls back what a run changed (`recorded`, from tapChanges) as `sluice rollback` would, with
 * `--now` if `now`, asking no one; `record` sees each change as a journal would.
 */
export async function rollBackAfterRun(
  runbook: Runbook,
  control: ControlPlane,
  recorded: RecordedMutation[],
  io: EngineIO,
  signal: AbortSignal,
  options: {now: boolean; record?: ChangeRecorder; runVerdicts?: GateVerdict[]},
): Promise<RollbackAfterRun> {
  const startedAt = control.clock.now()
  const verdicts: GateVerdict[] = []
  const watching: EngineIO = Object.assign(Object.create(io) as EngineIO, {
    notify(event: RunEvent) {
      if (event.type === 'verdict' && event.verdict.step === -1) verdicts.push(event.verdict)
      io.notify(event)
    },
  })
  const {undos} = await planUndo(recorded, runbook, control, {now: options.now, context: {failed: failedPools(runbook, options.runVerdicts ?? [])}})
  const done = await carryOut(undos, {control, record: options.record ?? {write: async () => undefined}, io: watching, signal})
  return {
    startedAt,
    endedAt: control.clock.now(),
    plan: undos.map((u) => u.line),
    outcome: done.outcome,
    message: done.outcome === 'done' ? null : done.message,
    verdicts,
  }
}
