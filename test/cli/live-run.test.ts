import {afterEach, describe, expect, it} from 'vitest'
import type {ControlIntent} from '../../src/ports/controls.js'
import {thisHost} from '../../src/state/journal.js'
import {inProcess as sluice} from '../helpers/command.js'
import {at, letGoOfRuns, stateWith} from '../helpers/live-runs.js'

afterEach(letGoOfRuns)

const OLD = '20261204-050000-0a0a'
const LIVE = '20261204-060000-1b1b'
const OTHER = '20261204-061500-2c2c'
const DEAD = '20261204-055000-3d3d'

describe('watch and pause with no RUN take the one live run (in process)', () => {
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
    let shown = ''
    const watching = sluice(['watch'], {env, onWrite: (stream, text) => void (stream === 'stdout' && (shown += text))})
    // Once it follows the run, the run ends, and the watch with it, with the run's exit code.
    for (let i = 0; i < 300 && !shown.includes(`run ${LIVE} of`); i++) await new Promise((r) => setTimeout(r, 100))
    await store.append(LIVE, {seq: 3, at: at(3), type: 'run-end', outcome: 'completed', message: 'all steps done'})
    await store.release([], LIVE)
    const {code, stdout, stderr} = await watching
    expect(code, stderr).toBe(0)
    expect(stderr).toContain(`watching the one live run: ${LIVE} (outlook-staged-return, by alice@${thisHost})`)
    expect(stdout).toContain(`run ${LIVE} of outlook-staged-return by alice on ${thisHost}`)
  }, 60_000)

  it('one live: pause sends it the pause, says which run on stderr, and the run takes it up', async () => {
    const {store, env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: DEAD, life: 'dead'},
    ])
    let ended = false
    const pausing = sluice(['pause'], {env}).finally(() => (ended = true))
    // This process plays the run: it takes the pause up as a run's control poller does (however
    // long a busy machine takes to start sluice, as long as the pause still waits).
    let control: ControlIntent | undefined
    while (!control && !ended) {
      control = (await store.controls(LIVE))[0]
      if (!control) await new Promise((r) => setTimeout(r, 100))
    }
    expect(control?.kind).toBe('pause')
    await store.append(LIVE, {seq: 3, at: at(3), type: 'control', control, effect: 'paused'})
    const r = await pausing
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`pausing the one live run: ${LIVE} (outlook-staged-return, by alice@${thisHost})`)
    expect(r.stdout).toContain(`pause sent to run ${LIVE} (outlook-staged-return, run by alice on ${thisHost}`)
    expect(r.stdout).toContain('the run took it up: paused')
    expect(await store.controls(DEAD)).toEqual([])
  }, 60_000)

  it('promote still needs RUN, and abort with no RUN names the one live run rather than abort it (exit 2 both)', async () => {
    const {dir, store, env} = await stateWith([{runId: LIVE, life: 'running'}])
    const promote = await sluice(['promote'], {env})
    expect(promote.code, promote.stderr).toBe(2)
    expect(promote.stderr).toContain('Error: missing the RUN argument')
    const abort = await sluice(['abort'], {env})
    expect(abort.code, abort.stderr).toBe(2)
    expect(abort.stderr).toContain(
      `Error: sluice abort needs RUN: it does not pick a run to abort; 1 live run in local state ${dir}: ${LIVE} (outlook-staged-return, by alice@${thisHost}, in step 1: Freeze changes); name one: \`sluice abort RUN\``,
    )
    expect(await store.controls(LIVE)).toEqual([])
  })
})
