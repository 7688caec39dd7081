import {spawn} from 'node:child_process'
import {appendFileSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {runJs} from '../helpers/cli.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {at, letGoOfRuns, stateWith} from '../helpers/live-runs.js'

// Commands whose reader goes away mid-output (`sluice journal RUN | head -1`): what they can no
// longer write is dropped, and they end quietly. Before, a write to a pipe with no reader on stderr
// (or EIO on either) was an unhandled 'error' event: a stack trace and exit 1.

const RUN = '20261204-060000-abcd'
let state: string

beforeAll(async () => {
  // Far more than a pipe holds (64 KiB), so sluice is still writing when its reader has gone; and
  // a torn last line, so it writes to stderr again (its warning) after its output.
  state = join(mkdtempSync(join(tmpdir(), 'sluice-lost-reader-')), 'state')
  const store = new LocalStore(state)
  await store.append(RUN, {seq: 1, at: at(1), type: 'run-start', ...runStartFields(RUN)})
  for (let seq = 2; seq < 3000; seq++)
    await store.append(RUN, {seq, at: at(2), type: 'step-start', step: seq, title: `Freeze changes, batch ${seq} of the fleet`})
  await store.release([], RUN)
  appendFileSync(join(state, 'runs', `${RUN}.jsonl`), '{"seq":3000,"at":"2026-12-04T06:00:03.000Z","type":"run-e')
})

afterEach(letGoOfRuns)

interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stderr: string
}

/**
 * Starts `command args` with stdout (and stderr, when it is not kept apart) in a pipe whose reader
 * lets go after its first chunk, as `| head -1` does; `then` runs once it has.
 */
function readFirstChunk(command: string, args: string[], env: Record<string, string>, then: () => unknown = () => undefined) {
  const child = spawn(command, args, {env: {...process.env, NO_COLOR: '1', SLUICE_STATE: state, ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  child.stdout.once('data', () => {
    child.stdout.destroy()
    then()
  })
  const ended = new Promise<Ended>((resolve) => child.on('close', (code, signal) => resolve({code, signal, stderr})))
  return {child, ended}
}

/** What an uncaught 'error' event prints: Node's banner and the stack under it. */
const crashed = /Unhandled 'error' event|Error: write E|\n\s+at /

describe('a reader that goes away mid-output', () => {
  it('`sluice journal RUN 2>&1 | head -1`: no crash when stderr, in the same pipe, is written after the reader went; exit 0 as before', async () => {
    const {ended} = readFirstChunk('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, runJs, 'journal', RUN], {})
    const end = await ended
    expect(end.signal).toBeNull()
    // 1 was the uncaught EPIPE on stderr (its stack trace went into the closed pipe with the rest).
    expect(end.code).toBe(0)
  })

  it('`sluice journal RUN | head -1`: no stack trace on stderr, exit 0', async () => {
    const {ended} = readFirstChunk(process.execPath, [runJs, 'journal', RUN], {})
    const end = await ended
    expect(end.stderr).not.toMatch(crashed)
    expect({code: end.code, signal: end.signal}, end.stderr).toEqual({code: 0, signal: null})
  })

  it('`sluice watch RUN | head -1` on a live run: ends at its next write instead of following the run unseen', async () => {
    const live = '20261204-061500-2c2c'
    const {store, env} = await stateWith([{runId: live, life: 'running'}])
    let gone = 0
    const {child, ended} = readFirstChunk(process.execPath, [runJs, 'watch', live], env, () => (gone = Date.now()))
    try {
      for (let i = 0; i < 300 && !gone; i++) await new Promise((r) => setTimeout(r, 100))
      expect(gone, 'watch never wrote').toBeGreaterThan(0)
      // What watch shows next, as the run goes on; the run itself never ends here.
      for (let seq = 3; seq < 6; seq++) await store.append(live, {seq, at: at(seq), type: 'step-start', step: seq - 1, title: `Step ${seq}`})
      const end = await Promise.race([ended, new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000))])
      expect(end, 'watch was still following the run 20 s after its reader went').not.toBeNull()
      expect(end!.stderr).not.toMatch(crashed)
      expect(end!.signal).toBeNull()
      expect(end!.code).toBe(0)
    } finally {
      child.kill('SIGKILL')
    }
  })
})
