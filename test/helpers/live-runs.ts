import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {LocalStore} from '../../src/local/local-store.js'
import {journalLock} from '../../src/ports/state-store.js'
import {thisHost} from '../../src/state/journal.js'
import {runStartFields} from './journal-entries.js'

export const at = (s: number) => `2026-12-04T06:00:${String(s).padStart(2, '0')}.000Z`
const stores: LocalStore[] = []

/**
 * A state directory with runs in it, written by this process: `running` ones keep their journal's
 * lock, held by this (live) process on this host, as a run's own process holds it; `dead` ones
 * let it go without ending; `ended` ones end.
 */
export async function stateWith(runs: Array<{runId: string; life: 'running' | 'dead' | 'ended'; runbook?: string; operator?: string}>) {
  const dir = join(mkdtempSync(join(tmpdir(), 'sluice-live-run-')), 'state')
  const store = new LocalStore(dir)
  stores.push(store)
  for (const {runId, life, runbook = 'outlook-staged-return', operator = 'alice'} of runs) {
    await store.append(runId, {seq: 1, at: at(1), type: 'run-start', ...runStartFields(runId), runbookName: runbook, operator, host: thisHost})
    // Taken as a run takes it, by this process on this host, so it is judged by its pid.
    await store.acquire([journalLock(runId)], {runId, operator, host: thisHost})
    await store.append(runId, {seq: 2, at: at(2), type: 'step-start', step: 0, title: 'Freeze changes'})
    if (life === 'ended') await store.append(runId, {seq: 3, at: at(3), type: 'run-end', outcome: 'completed', message: 'done'})
    if (life !== 'running') await store.release([], runId)
  }
  return {dir, store, env: {SLUICE_STATE: dir}}
}

/** Lets go of the locks this process holds for its "running" runs, so no renewal outlives a test. */
export async function letGoOfRuns(): Promise<void> {
  for (const store of stores.splice(0)) for (const runId of await store.runIds()) await store.release([], runId)
}
