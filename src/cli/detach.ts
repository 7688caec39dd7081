import {spawn} from 'node:child_process'
import {closeSync, mkdirSync, openSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {FailedError} from '../errors.js'
import {packageRoot} from '../package-root.js'
import {journalLock, newRunId, type StateStore} from '../ports/state-store.js'
import {chooseState, userStateDir} from '../state/home.js'

// `sluice run … --detach`: the run as a process of its own, in a session of its own, so that it
// keeps going when the terminal that started it goes (a dropped VPN to a bastion host, a closed
// laptop). It is the same `sluice run`, with its output in a log beside the journal; the journal,
// `watch`, `pause`, `promote`, `abort` and `serve` are how anyone follows and steers it.

export interface Detached {
  runId: string
  pid: number
  log: string
  /** Set when the run ended before it was under way: how, and the log's last lines. */
  ended?: {code: number | null; tail: string}
}

/** How long the starting terminal waits for the run to be under way (its identity and first reads can take a while). */
const startSeconds = 120

/** Where a detached run's output goes: beside the journals of a state directory, else in the user's state directory. */
function logDirectory(state: string | undefined): string {
  const choice = chooseState(state)
  const base = choice.address.kind === 'directory' ? choice.address.path : userStateDir().dir
  return join(base, 'detached')
}

/**
 * Starts `sluice run ARGS` detached, under a run id minted here, and waits until it is under way
 * (its journal begun and its lock held) or has ended, so the id it prints is a run that exists.
 */
export async function detachRun(args: string[], store: StateStore, state: string | undefined): Promise<Detached> {
  const runId = newRunId()
  const dir = logDirectory(state)
  mkdirSync(dir, {recursive: true})
  const log = join(dir, `${runId}.log`)
  const fd = openSync(log, 'a')
  let exited: {code: number | null} | null = null
  let child
  try {
    // The package's own launcher, whoever started this one (a test runs commands in process).
    child = spawn(process.execPath, [join(packageRoot, 'bin', 'run.js'), 'run', ...args, '--run-id', runId], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: {...process.env, NO_COLOR: '1'},
    })
  } finally {
    closeSync(fd)
  }
  child.on('exit', (code) => (exited = {code}))
  child.unref()
  const pid = child.pid ?? 0
  const until = performance.now() + startSeconds * 1000
  for (;;) {
    if (exited !== null) return {runId, pid, log, ended: {code: (exited as {code: number | null}).code, tail: tailOf(log)}}
    if (await underWay(store, runId)) return {runId, pid, log}
    if (performance.now() > until)
      throw new FailedError(
        `run ${runId} (pid ${pid}) is not under way after ${startSeconds} s: its output so far is in ${log}; \`sluice journal ${runId}\` shows what it wrote`,
      )
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** Its journal begun and its lock taken, or already ended. */
async function underWay(store: StateStore, runId: string): Promise<boolean> {
  if (!(await store.runIds()).includes(runId)) return false
  const read = await store.read(runId)
  if (read.entries.some((e) => e.type === 'run-end')) return true
  return (await store.locks()).some((l) => l.resource === journalLock(runId))
}

function tailOf(log: string): string {
  try {
    return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-15).join('\n')
  } catch {
    return ''
  }
}
