import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {thisHost} from '../../src/state/journal.js'
import {sluiceInProcess} from '../helpers/command.js'
import {expectBadInput} from '../helpers/expect-cli.js'
import {letGoOfRuns, stateWith} from '../helpers/live-runs.js'

// Each test points SLUICE_STATE at a state directory of its own; put back afterwards, since the
// unit project shares its workers between files.
const saved = process.env.SLUICE_STATE
beforeAll(() => {
  delete process.env.SLUICE_STATE
})
afterEach(letGoOfRuns)
afterAll(() => {
  if (saved === undefined) delete process.env.SLUICE_STATE
  else process.env.SLUICE_STATE = saved
})

const OLD = '20261204-050000-0a0a'
const LIVE = '20261204-060000-1b1b'
const OTHER = '20261204-061500-2c2c'
const DEAD = '20261204-055000-3d3d'

async function inState(runs: Parameters<typeof stateWith>[0]) {
  const state = await stateWith(runs)
  process.env.SLUICE_STATE = state.dir
  return state
}

async function abort(args: string[]) {
  const {exit, stdout, stderr} = await sluiceInProcess(['abort', ...args])
  return {code: exit, stdout, stderr}
}

describe('abort --now without --rollback (in process)', () => {
  it('is bad input naming --now, before anything is sent to the live run', async () => {
    const {store} = await inState([{runId: LIVE, life: 'running'}])
    expectBadInput(
      await abort([LIVE, '--now']),
      '--now: needs --rollback; --now says how the rollback moves weights back (at once), and abort rolls the run back only with --rollback',
    )
    expect(await store.controls(LIVE)).toEqual([])
  })

  it('under --json: the error object, exit 2, and nothing sent', async () => {
    const {store} = await inState([{runId: LIVE, life: 'running'}])
    const r = await abort([LIVE, '--now', '--json'])
    expect(r.code, r.stderr).toBe(2)
    const json = JSON.parse(r.stdout) as {error: {message: string; exit: number}}
    expect(json.error.exit).toBe(2)
    expect(json.error.message).toMatch(/^--now: needs --rollback; .*abort rolls the run back only with --rollback$/)
    expect(await store.controls(LIVE)).toEqual([])
  })
})

describe('abort with no RUN names the live runs and sends nothing (in process)', () => {
  it('one live run among ended and dead ones: exit 2 naming it with its step, and how to name it; it is not aborted', async () => {
    const {dir, store} = await inState([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: DEAD, life: 'dead'},
    ])
    const r = await abort([])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(
      `Error: sluice abort needs RUN: it does not pick a run to abort; 1 live run in local state ${dir}: ${LIVE} (outlook-staged-return, by alice@${thisHost}, in step 1: Freeze changes); name one: \`sluice abort RUN\``,
    )
    expect(r.stderr).not.toContain(OLD)
    expect(r.stderr).not.toContain(DEAD)
    expect(await store.controls(LIVE)).toEqual([])
  })

  it('several live: exit 2 naming each (id, runbook, operator, host, step); none is aborted', async () => {
    const {dir, store} = await inState([
      {runId: LIVE, life: 'running'},
      {runId: OTHER, life: 'running', runbook: 'regional-dns-ramp', operator: 'bob'},
    ])
    await store.append(OTHER, {seq: 3, at: '2026-12-04T06:00:03.000Z', type: 'step-end', step: 0, status: 'done', message: 'frozen'})
    const r = await abort([])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(
      `Error: sluice abort needs RUN: it does not pick a run to abort; 2 live runs in local state ${dir}: ${LIVE} (outlook-staged-return, by alice@${thisHost}, in step 1: Freeze changes), ${OTHER} (regional-dns-ramp, by bob@${thisHost}, after step 1: Freeze changes); name one: \`sluice abort RUN\``,
    )
    expect(await store.controls(LIVE)).toEqual([])
    expect(await store.controls(OTHER)).toEqual([])
  })

  it('none live: exit 2 naming the store and `sluice journal`, as watch and pause say it', async () => {
    const {dir} = await inState([
      {runId: OLD, life: 'ended'},
      {runId: DEAD, life: 'dead'},
    ])
    const r = await abort([])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(`Error: no live run in local state ${dir}; \`sluice journal\` lists the runs`)
  })

  it('pause with no RUN still takes the one live run (abort alone refuses to guess)', async () => {
    const {dir} = await inState([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: OTHER, life: 'running'},
    ])
    // Two live runs: pause names them as before, in its own words (no steps), and asks for one.
    const r = await sluiceInProcess(['pause'])
    expect(r.exit, r.stderr).toBe(2)
    expect(r.stderr).toContain(`Error: 2 live runs in local state ${dir}: ${LIVE} (outlook-staged-return, by alice@${thisHost}), ${OTHER}`)
  })
})
