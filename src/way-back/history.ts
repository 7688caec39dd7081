import type {Drift, Undo} from '../actions/action.js'
import {rulesOf} from '../actions/registry.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {RecordedMutation} from '../ports/io.js'

// What a run changed, subject by subject, and what has drifted from it since: what the way back
// undoes, what resume checks before it goes on, and how a change outside any step is recorded.

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
