import {readFileSync} from 'node:fs'
import type {Drift, Undo} from '../actions/action.js'
import {rulesOf} from '../actions/registry.js'
import type {ControlPlane} from '../ports/control-plane.js'
import {RefusedError} from '../errors.js'
import type {Runbook} from '../loader/runbook.js'
import {loadRunbookFile, runbookFromFlags} from '../loader/load-runbook.js'
import type {RunbookInput} from '../loader/runbook-schema.js'
import {mutations, sha256, type JournalWriter, type RunStart} from '../state/journal.js'
import type {RecordedMutation} from '../ports/io.js'
import type {JournalRead, StateStore} from '../ports/state-store.js'

/** Reads a journal for resume or rollback, refusing to guess when its last line was cut off. */
export async function readForRecovery(store: StateStore, runId: string, what: 'resume' | 'rollback'): Promise<JournalRead> {
  const read = await store.read(runId)
  if (read.torn) {
    const last = [...mutations(read)].reverse().find((m) => m.outcome === undefined) ?? mutations(read).at(-1)
    throw new RefusedError(
      `the journal of run ${runId} ends in a torn write at line ${read.torn.line} (${read.torn.bytes} bytes: ${JSON.stringify(read.torn.text.slice(0, 60))}…): ` +
        `the entry was cut off while it was written, so sluice cannot tell what happened after entry ${read.entries.at(-1)?.seq ?? 0}. ` +
        `It will not ${what} on a guess. Check ${last ? `${last.resource} (last change: ${last.kind})` : "the runbook's targets"} with \`sluice status\`, ` +
        `then set it right by hand or remove the torn line from the journal and run \`sluice ${what} ${runId}\` again`,
    )
  }
  return read
}

/** The runbook a run ran: the same file, unchanged, or the input its flags made. */
export function runbookOf(start: RunStart): Runbook {
  if (start.runbookFile) {
    let text: string
    try {
      text = readFileSync(start.runbookFile, 'utf8')
    } catch {
      throw new RefusedError(`run ${start.runId} ran ${start.runbookFile}, which cannot be read any more`)
    }
    if (sha256(text) !== start.runbookSha256)
      throw new RefusedError(`${start.runbookFile} has changed since run ${start.runId} started; sluice resumes a run only with the runbook it started with`)
    return loadRunbookFile(start.runbookFile)
  }
  return runbookFromFlags(start.runbookInput as RunbookInput, () => 'journal')
}

/** A run's changes that took effect, per piece of live state (subject), each list oldest first. */
export function changesBySubject(recorded: RecordedMutation[]): RecordedMutation[][] {
  const bySubject = new Map<string, RecordedMutation[]>()
  for (const m of recorded.filter((r) => r.outcome?.ok)) {
    const subject = rulesOf(m).subject(m)
    bySubject.set(subject, [...(bySubject.get(subject) ?? []), m])
  }
  return [...bySubject.values()]
}

/**
 * What the world no longer has of what a run left: per subject, the drift its newest change's
 * action finds by reading live state now (weights, restrictions, registrations, the freeze).
 * Resume stops on it unless told to put it back; `status --run` shows it.
 */
export async function findDrift(recorded: RecordedMutation[], control: ControlPlane): Promise<Drift[]> {
  return [...(await driftBySubject(recorded, control)).values()]
}

/** findDrift, keyed by the subject each drift is of (as changesBySubject groups changes). */
export async function driftBySubject(recorded: RecordedMutation[], control: ControlPlane): Promise<Map<string, Drift>> {
  const drifts = new Map<string, Drift>()
  for (const changes of changesBySubject(recorded)) {
    const last = changes.at(-1)!
    const drift = await rulesOf(last).drift(changes, control)
    if (drift) drifts.set(rulesOf(last).subject(last), drift)
  }
  return drifts
}

/** Where changes outside any step are recorded: a run's journal, or a drill's memory. */
export interface ChangeRecorder {
  write(type: string, data: Record<string, unknown>): Promise<void>
}

/**
 * Makes one change outside any step (an undo, a drift put back), recorded as a step -1 change:
 * its intent before, its outcome after, so the journal accounts for it as for any other.
 */
export async function applyRecorded(journal: ChangeRecorder, change: Undo): Promise<void> {
  const mutation = {step: -1, kind: change.kind, resource: change.resource, before: change.before, after: change.after}
  await journal.write('mutation', {mutation: {...mutation, phase: 'intent'}})
  try {
    await change.apply()
  } catch (error) {
    await journal.write('mutation', {mutation: {...mutation, phase: 'outcome', ok: false, error: (error as Error).message}}).catch(() => undefined)
    throw error
  }
  await journal.write('mutation', {mutation: {...mutation, phase: 'outcome', ok: true}})
}

/** One drift as a line: what the journal says against what is there. */
export const describeDrift = (d: Drift): string => `${d.subject}: the journal says ${d.left}; now ${d.now}`

/**
 * Settles every change whose outcome was never recorded (the run died between intent and outcome)
 * by reading the real state, the way the action that made it says, and records the finding. Resume
 * and rollback both start here, so neither acts on a guess. A change whose resource now matches
 * neither side is refused, with what to check.
 */
export async function settleUnknown(
  recorded: RecordedMutation[],
  control: ControlPlane,
  journal: JournalWriter,
  what: 'resume' | 'rollback',
): Promise<string[]> {
  const findings: string[] = []
  for (const m of recorded.filter((r) => r.outcome === undefined)) {
    const found = await rulesOf(m).settle(m, control)
    const change = `${m.kind} on ${m.resource} (${JSON.stringify(m.before)} → ${JSON.stringify(m.after)})`
    if (found === null)
      throw new RefusedError(
        `run ${journal.runId} was stopped during ${change}, and ${m.resource} now matches neither side; check it with \`sluice status\` and set it by hand before you ${what}`,
      )
    m.outcome = {ok: found === 'applied'}
    await journal.write('mutation', {mutation: {...m, phase: 'outcome', ok: found === 'applied'}, found: `${found} (found on ${what})`})
    findings.push(`${change}: ${found}`)
  }
  return findings
}
