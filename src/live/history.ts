import {readFileSync} from 'node:fs'
import type {ControlPlane, Restriction, WeightMap} from '../ports/control-plane.js'
import {RefusedError} from '../errors.js'
import {loadRunbookFile, runbookFromFlags, type Runbook} from '../runbook/load.js'
import type {RunbookInput} from '../runbook/schema.js'
import {mutations, sha256, type RecordedMutation, type RunStart} from '../state/journal.js'
import type {JournalRead, StateStore} from '../ports/state-store.js'

/** Reads a journal for resume or rollback, refusing to guess when its last line was cut off. */
export async function readForRecovery(store: StateStore, runId: string, what: 'resume' | 'rollback'): Promise<JournalRead> {
  const read = await store.read(runId)
  if (read.torn) {
    const last = [...mutations(read)].reverse().find((m) => m.outcome === undefined) ?? mutations(read).at(-1)
    throw new RefusedError(
      `the journal of run ${runId} ends in a torn write at line ${read.torn.line} (${read.torn.bytes} bytes: ${JSON.stringify(read.torn.text.slice(0, 60))}…): ` +
        `the entry was cut off while it was written, so sluice cannot tell what happened after entry ${read.entries.at(-1)?.seq ?? 0}. ` +
        `It will not ${what} on a guess. Check ${last ? `${last.resource} (last change: ${last.kind})` : 'the runbook\'s targets'} with \`sluice status\`, ` +
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


const same = (a: unknown, b: unknown): boolean => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return [...v].map(sortKeys).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, sortKeys(x)]))
  return v
}

/**
 * Whether a change whose outcome was never recorded took effect, found by reading the real state:
 * 'applied', 'not applied', or null when the state matches neither side.
 */
export async function settle(m: RecordedMutation, control: ControlPlane): Promise<'applied' | 'not applied' | null> {
  switch (m.kind) {
    case 'dns-weights': {
      const now = await control.dns!.readWeights()
      const pick = (w: WeightMap) => Object.fromEntries(Object.keys(w).map((k) => [k, now[k]]))
      if (same(pick(m.after as WeightMap), m.after)) return 'applied'
      if (same(pick(m.before as WeightMap), m.before)) return 'not applied'
      return null
    }
    case 'deregister':
    case 'register': {
      const ids = (m.kind === 'deregister' ? m.before : m.after) as string[]
      const group = [...control.targetGroups.values()].find((g) => m.resource === g.label)
      if (!group) return null
      const registered = new Set((await group.targets()).filter((t) => t.health !== 'unused').map((t) => t.id))
      const inGroup = ids.filter((id) => registered.has(id)).length
      if (inGroup === (m.kind === 'register' ? ids.length : 0)) return 'applied'
      if (inGroup === (m.kind === 'register' ? 0 : ids.length)) return 'not applied'
      return null
    }
    case 'restrict':
    case 'lift': {
      const type = ((m.after ?? m.before) as Restriction).type
      const present = (await control.rules!.list()).some((r) => r.type === type)
      return present === (m.kind === 'restrict') ? 'applied' : 'not applied'
    }
    case 'freeze':
    case 'unfreeze': {
      const now = await control.freeze.get()
      if (m.kind === 'freeze') return now && same(now, m.after) ? 'applied' : now === null ? 'not applied' : null
      return now === null ? 'applied' : same(now, m.before) ? 'not applied' : null
    }
    case 'failover': {
      const group = [...control.targetGroups.values()].find((g) => m.resource === g.label)
      const now = group ? await group.failoverPercent() : undefined
      return now === m.after ? 'applied' : now === m.before ? 'not applied' : null
    }
    case 'slow-start': {
      const group = [...control.targetGroups.values()].find((g) => m.resource === g.label)
      const now = group ? await group.slowStart() : undefined
      return now === m.after ? 'applied' : now === m.before ? 'not applied' : null
    }
    default:
      return null
  }
}
