import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import type {ControlIntent} from '../../src/ports/controls.js'
import {journalLock} from '../../src/ports/state-store.js'
import {thisHost} from '../../src/state/journal.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {sluice} from '../helpers/cli.js'

const at = (s: number) => `2026-12-04T06:00:${String(s).padStart(2, '0')}.000Z`
const stores: LocalStore[] = []

/**
 * A state directory with runs in it, written by this process: `running` ones keep their journal's
 * lock, held by this (live) process on this host, as a run's own process holds it; `dead` ones
 * let it go without ending; `ended` ones end.
 */
async function stateWith(runs: Array<{runId: string; life: 'running' | 'dead' | 'ended'; runbook?: string; operator?: string}>) {
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

afterEach(async () => {
  // Let go of the locks this process held for its "running" runs, so no renewal outlives the test.
  for (const store of stores.splice(0)) for (const runId of await store.runIds()) await store.release([], runId)
})

const OLD = '20261204-050000-0a0a'
const LIVE = '20261204-060000-1b1b'
const OTHER = '20261204-061500-2c2c'
const DEAD = '20261204-055000-3d3d'

describe('watch and pause with no RUN take the one live run (spawned)', () => {
  it('none live (one ended, one dead): exit 2 naming the store and `sluice journal`, for both', async () => {
    const {dir, env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: DEAD, life: 'dead'},
    ])
    for (const command of ['watch', 'pause']) {
      const r = await sluice([command], {env})
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(`Error: no live run in local state ${dir}; \`sluice journal\` lists the runs`)
      expect(r.stdout).toBe('')
    }
  })

  it('several live: exit 2 naming each (id, runbook, who) and asking for one; nothing is paused', async () => {
    const {dir, store, env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: OTHER, life: 'running', runbook: 'regional-dns-ramp', operator: 'bob'},
    ])
    for (const command of ['watch', 'pause']) {
      const r = await sluice([command], {env})
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(
        `Error: 2 live runs in local state ${dir}: ${LIVE} (outlook-staged-return, by alice@${thisHost}), ${OTHER} (regional-dns-ramp, by bob@${thisHost}); name one: \`sluice ${command} RUN\``,
      )
    }
    expect(await store.controls(LIVE)).toEqual([])
    expect(await store.controls(OTHER)).toEqual([])
  })

  it('one live among ended and dead ones: watch follows it and says which on stderr', async () => {
    const {store, env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: DEAD, life: 'dead'},
    ])
    const watching = sluice(['watch'], {env})
    // The run ends a moment later, and the watch with it, with the run's exit code.
    await new Promise((r) => setTimeout(r, 1500))
    await store.append(LIVE, {seq: 3, at: at(3), type: 'run-end', outcome: 'completed', message: 'all steps done'})
    await store.release([], LIVE)
    const r = await watching
    expect(r.stderr).toContain(`watching the one live run: ${LIVE} (outlook-staged-return, by alice@${thisHost})`)
    expect(r.stdout).toContain(`run ${LIVE} of outlook-staged-return by alice on ${thisHost}`)
    expect(r.code, r.stderr).toBe(0)
  }, 60_000)

  it('one live: pause sends it the pause, says which run on stderr, and the run takes it up', async () => {
    const {store, env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: DEAD, life: 'dead'},
    ])
    const pausing = sluice(['pause'], {env})
    // This process plays the run: it takes the pause up as a run's control poller does.
    let control: ControlIntent | undefined
    for (let i = 0; i < 100 && !control; i++) {
      control = (await store.controls(LIVE))[0]
      if (!control) await new Promise((r) => setTimeout(r, 100))
    }
    expect(control?.kind).toBe('pause')
    await store.append(LIVE, {seq: 3, at: at(3), type: 'control', control, effect: 'paused'})
    const r = await pausing
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`pausing the one live run: ${LIVE} (outlook-staged-return, by alice@${thisHost})`)
    expect(r.stdout).toContain(`pause sent to run ${LIVE} (outlook-staged-return, run by alice on ${thisHost}`)
    expect(r.stdout).toContain('the run took it up in step 1 (Freeze changes): paused')
    expect(await store.controls(DEAD)).toEqual([])
  }, 60_000)

  it('promote and abort still need RUN (exit 2)', async () => {
    const {env} = await stateWith([{runId: LIVE, life: 'running'}])
    for (const command of ['promote', 'abort']) {
      const r = await sluice([command], {env})
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain('Error: missing the RUN argument')
    }
  })
})
