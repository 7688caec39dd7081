import type {AwsOptions} from '../aws/clients.js'
import type {FreezeRecord, Restriction, WeightMap} from '../ports/control-plane.js'
import {RefusedError} from '../errors.js'
import {type EngineIO} from '../ports/io.js'
import {JournalWriter, mutations, runStart, runStatus, thisHost, type RecordedMutation} from '../state/journal.js'
import type {StateStore} from '../ports/state-store.js'
import {liveControlPlane, lockedResources} from './control-plane.js'
import {readForRecovery, runbookOf} from './history.js'

interface Undo {
  kind: string
  resource: string
  describe: string
  apply: () => Promise<void>
  before: unknown
  after: unknown
}

export interface RollbackResult {
  runId: string
  undone: Array<{kind: string; resource: string; describe: string}>
  outcome: 'rolled-back' | 'refused' | 'nothing'
  message: string
}

/**
 * Undoes what a run changed, newest first: weights back to where the run found them, its
 * restrictions lifted (and any it lifted put back), its freeze cleared, targets it left out of
 * rotation returned. Shows the plan and asks first; records every undo in the run's journal.
 */
export async function rollbackRun(store: StateStore, runId: string, aws: AwsOptions, io: EngineIO, operator: string): Promise<RollbackResult> {
  const read = await readForRecovery(store, runId, 'rollback')
  if (runStatus(read) === 'rolled-back') return {runId, undone: [], outcome: 'nothing', message: `run ${runId} was already rolled back`}
  const start = runStart(read)
  const runbook = runbookOf(start)
  const resources = lockedResources(runbook)
  await store.acquire(resources, {runId, operator, host: thisHost, since: new Date().toISOString()})
  const {control, clients} = liveControlPlane(runbook, aws, {operator, freeze: store.freeze})
  try {
    const done = mutations(read).filter((m) => m.outcome?.ok)
    const undos = plan(done, control)
    if (undos.length === 0) return {runId, undone: [], outcome: 'nothing', message: `run ${runId} changed nothing that needs undoing`}
    const yes = await io.confirm(`Roll back run ${runId} (${runbook.name})?`, ['This will:', ...undos.map((u, i) => `${i + 1}. ${u.describe}`)])
    if (!yes) return {runId, undone: [], outcome: 'refused', message: `rollback of run ${runId} not confirmed; nothing was changed`}
    const journal = new JournalWriter(store, runId, (read.entries.at(-1)?.seq ?? 0) + 1)
    await journal.write('rollback-start', {operator, host: thisHost, pid: process.pid, undo: undos.map((u) => u.describe)})
    for (const u of undos) {
      const mutation = {step: -1, kind: u.kind, resource: u.resource, before: u.before, after: u.after}
      await journal.write('mutation', {mutation: {...mutation, phase: 'intent'}})
      await u.apply()
      await journal.write('mutation', {mutation: {...mutation, phase: 'outcome', ok: true}})
      io.notify({type: 'progress', step: -1, message: `undone: ${u.describe}`, at: control.clock.now()})
    }
    await journal.write('rollback-end', {outcome: 'rolled-back'})
    return {runId, undone: undos.map(({kind, resource, describe}) => ({kind, resource, describe})), outcome: 'rolled-back', message: `run ${runId} rolled back: ${undos.length} change${undos.length === 1 ? '' : 's'} undone`}
  } finally {
    clients.destroy()
    await store.release(resources, runId)
  }
}

/** The undo of each resource's net change, newest resource first. */
function plan(done: RecordedMutation[], control: ReturnType<typeof liveControlPlane>['control']): Undo[] {
  const byResource = new Map<string, RecordedMutation[]>()
  for (const m of done) {
    const key = m.kind === 'restrict' || m.kind === 'lift' ? `${m.resource}#${((m.after ?? m.before) as Restriction).type}` : m.kind === 'deregister' || m.kind === 'register' ? `${m.resource}#targets` : `${m.resource}#${m.kind === 'unfreeze' ? 'freeze' : m.kind}`
    byResource.set(key, [...(byResource.get(key) ?? []), m])
  }
  const undos: Array<Undo & {seq: number}> = []
  for (const changes of byResource.values()) {
    const first = changes[0]
    const last = changes.at(-1)!
    switch (last.kind) {
      case 'dns-weights': {
        const original = first.before as WeightMap
        undos.push({seq: last.seq, kind: 'dns-weights', resource: last.resource, before: last.after, after: original, describe: `set the weights of ${last.resource} back to ${fmt(original)}`, apply: () => control.dns!.applyWeights(original)})
        break
      }
      case 'restrict': {
        const r = last.after as Restriction
        undos.push({seq: last.seq, kind: 'lift', resource: last.resource, before: r, after: null, describe: `lift the restriction on ${r.type} from ${last.resource}`, apply: async () => void (await control.rules!.remove(r.type))})
        break
      }
      case 'lift': {
        const r = last.before as Restriction
        undos.push({seq: last.seq, kind: 'restrict', resource: last.resource, before: null, after: r, describe: `put back the restriction on ${r.type} on ${last.resource}`, apply: () => control.rules!.add(r)})
        break
      }
      case 'freeze': {
        undos.push({seq: last.seq, kind: 'unfreeze', resource: last.resource, before: last.after, after: first.before, describe: 'clear the change freeze the run set', apply: () => (first.before ? control.freeze.set(first.before as FreezeRecord) : control.freeze.clear())})
        break
      }
      case 'unfreeze': {
        const record = first.before as FreezeRecord
        undos.push({seq: last.seq, kind: 'freeze', resource: last.resource, before: null, after: record, describe: `put back the change freeze (${record.reason})`, apply: () => control.freeze.set(record)})
        break
      }
      case 'slow-start': {
        const group = [...control.targetGroups.values()].find((g) => g.label === last.resource)
        if (group) undos.push({seq: last.seq, kind: 'slow-start', resource: last.resource, before: last.after, after: first.before, describe: `set slow start of ${last.resource} back to ${first.before} s`, apply: () => group.setSlowStart(first.before as number)})
        break
      }
      case 'failover': {
        const group = [...control.targetGroups.values()].find((g) => g.label === last.resource)
        const original = first.before as number | null
        if (group) undos.push({seq: last.seq, kind: 'failover', resource: last.resource, before: last.after, after: original, describe: `set routing failover of ${last.resource} back to ${original === null ? 'off' : `${original}%`}`, apply: () => group.setFailoverPercent(original)})
        break
      }
      case 'deregister':
      case 'register': {
        const out = new Set<string>()
        for (const m of changes) {
          if (m.kind === 'deregister') for (const id of m.before as string[]) out.add(id)
          else for (const id of m.after as string[]) out.delete(id)
        }
        const group = [...control.targetGroups.values()].find((g) => g.label === last.resource)
        if (group && out.size > 0) {
          const ids = [...out]
          undos.push({seq: last.seq, kind: 'register', resource: last.resource, before: null, after: ids, describe: `return ${ids.length} target${ids.length === 1 ? '' : 's'} the run left out of rotation to ${last.resource}`, apply: () => group.register(ids)})
        }
        break
      }
      default:
        throw new RefusedError(`run recorded a change sluice does not know how to undo: ${last.kind} on ${last.resource}`)
    }
  }
  return undos.sort((a, b) => b.seq - a.seq)
}

const fmt = (w: WeightMap): string => Object.entries(w).sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(' ')
