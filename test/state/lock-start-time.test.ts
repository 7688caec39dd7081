import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {thisPlace} from '../../src/platform/process-place.js'
import {thisHost} from '../../src/state/journal.js'
import {sluiceInProcess} from '../helpers/command.js'
import {letGoOfRuns, stateWith} from '../helpers/live-runs.js'

afterEach(letGoOfRuns)

const RUN = '20261204-055000-3d3d'
const LEASE = 1

/**
 * A run that never ended, whose journal lock names a process on this host without the time it
 * started, as a hand-written or damaged record would: `pid` is a process that runs (and has
 * nothing to do with the run), and nothing renews the lease.
 */
async function deadRunLockedBy(pid: number) {
  const {dir, store} = await stateWith([{runId: RUN, life: 'dead'}])
  mkdirSync(join(dir, 'locks'), {recursive: true, mode: 0o700})
  const lock = {
    resource: `journal:${RUN}`,
    runId: RUN,
    operator: 'alice',
    host: thisHost,
    pid,
    since: '2026-12-04T05:50:00.000Z',
    heartbeat: '2099-01-01T00:00:00.000Z',
    leaseSeconds: LEASE,
    lockId: '0123456789abcdef',
    version: 'v1',
    place: thisPlace,
  }
  writeFileSync(join(dir, 'locks', `journal_${RUN}.json`), JSON.stringify(lock), {mode: 0o600})
  return {dir, store}
}

describe('a lock that records no start time for its pid is judged by its lease, not by whatever process has the pid now', () => {
  it.skipIf(thisPlace === undefined)('journal shows the run dead once its lease lapses, though the pid it names runs', async () => {
    // The parent of this test process: alive, and not the run's.
    const {dir} = await deadRunLockedBy(process.ppid)
    const listed = await sluiceInProcess<{runs: Array<{runId: string; status: string; detail?: string}>}>(['journal', '--state', dir, '--json'])
    expect(listed.exit, listed.stderr).toBe(0)
    expect(listed.result?.runs).toEqual([
      {
        runId: RUN,
        status: 'dead',
        detail: `lease lapsed: not renewed in ${LEASE} s while sluice watched`,
        runbook: 'outlook-staged-return',
        operator: 'alice',
        host: thisHost,
        startedAt: expect.any(String),
      },
    ])
    expect(listed.stderr).toContain(
      '1 unfinished run is held by a process sluice cannot judge by its pid (on another host, or a lock that records no start time): watching its lease',
    )
  })

  it.skipIf(thisPlace === undefined)('pause is refused (exit 4) once the lease lapses, and no pause is left for nobody', async () => {
    const {dir, store} = await deadRunLockedBy(process.ppid)
    const paused = await sluiceInProcess(['pause', RUN, '--state', dir])
    expect(paused.exit, paused.stderr).toBe(4)
    expect(paused.stderr).toContain(`run ${RUN} is held by pid ${process.ppid} on ${thisHost}: watching its lease for up to ${LEASE} s`)
    expect(paused.stderr).toContain(
      `run ${RUN} is not running: it never ended, and its process on ${thisHost} is dead (lease lapsed: not renewed in ${LEASE} s while sluice watched)`,
    )
    expect(await store.controls(RUN)).toEqual([])
  })

  it.skipIf(thisPlace === undefined)('a pid that is gone is still dead at once, start time or not', async () => {
    const {dir} = await deadRunLockedBy(2 ** 31 - 2)
    const listed = await sluiceInProcess<{runs: Array<{status: string; detail?: string}>}>(['journal', '--state', dir, '--json'])
    expect(listed.result?.runs[0]).toMatchObject({status: 'dead', detail: `pid ${2 ** 31 - 2} gone`})
    expect(listed.stderr).not.toContain('watching its lease')
  })
})
