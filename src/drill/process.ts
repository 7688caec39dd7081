import {spawn, type ChildProcess} from 'node:child_process'
import {rmSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {programFile} from '../program-file.js'
import {scratchDir, writeScratchFile} from '../platform/scratch-dir.js'
import type {FleetConfig, FleetInfo} from './fleet.js'
import type {LoadConfig, LoadRecord} from './load-generator.js'

/**
 * The drill's programs (the fleet, the load generator) in child processes, each on a core of its
 * own. A child gets its config as a JSON file and answers in JSON lines on stdout; its stdin is a
 * pipe from this process, so it exits if this one dies however it dies (kill -9 included). Every
 * path out (stop, a failed start) ends the child and removes its config file; after a kill -9, the
 * next scratch folder made sweeps it (scratch-dir.ts).
 */

/** Seconds a child gets to print its first line, and to exit after SIGTERM before SIGKILL. */
const startSeconds = 20
const stopSeconds = 5

interface Child {
  pid: number
  /** The next JSON line the child prints, within `seconds`; rejects with its first stderr line if it exits first. */
  nextLine(seconds?: number): Promise<unknown>
  /** SIGTERM, then SIGKILL after a few seconds; resolves once it has exited. Safe to call twice. */
  stop: () => Promise<void>
}

/** `name` names the config file; `label` says what the child is, in errors. */
function startChild(main: string, config: unknown, name: string, label: string): Child {
  const dir = scratchDir(name)
  const file = join(dir, `${name}.json`)
  writeScratchFile(file, JSON.stringify(config))
  const child = spawn(process.execPath, [main, '--config', file, '--exit-on-stdin-end'], {stdio: ['pipe', 'pipe', 'pipe']})
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  let buffered = ''
  const lines: string[] = []
  const waiting: Array<() => void> = []
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    let newline: number
    while ((newline = buffered.indexOf('\n')) >= 0) {
      lines.push(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
    }
    waiting.splice(0).forEach((wake) => wake())
  })
  child.once('exit', () => waiting.splice(0).forEach((wake) => wake()))
  const nextLine = async (seconds = startSeconds): Promise<unknown> => {
    const deadline = performance.now() + seconds * 1000
    while (lines.length === 0) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(stderr.trim().split('\n')[0] || `the ${label} exited with code ${child.exitCode} before answering`)
      const left = deadline - performance.now()
      if (left <= 0) throw new Error(`the ${label} printed nothing within ${seconds} s`)
      await new Promise<void>((resolve) => {
        // A timer past 2^31 ms would fire at once; the child's exit or line wakes this anyway.
        const timer = setTimeout(resolve, Math.min(left, 2 ** 31 - 1))
        waiting.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    const line = lines.shift()!
    try {
      return JSON.parse(line)
    } catch {
      throw new Error(`the ${label} printed ${JSON.stringify(line)}, not JSON`)
    }
  }
  let stopping: Promise<void> | null = null
  const stop = (): Promise<void> => {
    stopping ??= terminate(child, exited).finally(() => rmSync(dir, {recursive: true, force: true}))
    return stopping
  }
  return {pid: child.pid!, nextLine, stop}
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const killer = setTimeout(() => child.kill('SIGKILL'), stopSeconds * 1000)
  await exited
  clearTimeout(killer)
}

const beside = (file: string) => fileURLToPath(programFile(`drill/${file}`))

/** A fleet in a child process: its ports, its pid, and the one way to end it. */
export interface FleetProcess extends FleetInfo {
  pid: number
  /** SIGTERM, then SIGKILL if it has not exited within a few seconds; resolves once it has exited. Safe to call twice. */
  stop: () => Promise<void>
}

/**
 * Runs the fleet (fleet-main.js) in a child process and waits for its ports; if it fails to
 * start, the child is ended before the error is thrown. `main` is the compiled fleet-main.js
 * beside this module unless given (tests run this module from source).
 */
export async function spawnFleet(config: FleetConfig, main = beside('fleet-main.js')): Promise<FleetProcess> {
  const child = startChild(main, config, 'fleet', 'fleet')
  try {
    const info = (await child.nextLine()) as FleetInfo
    return {...info, pid: child.pid, stop: child.stop}
  } catch (error) {
    await child.stop()
    throw error
  }
}

/** The load generator in a child process. */
export interface LoadProcess {
  pid: number
  /** The record, once the run has ended and its attempts settled. */
  done: Promise<LoadRecord>
  /** Ends the run now and returns its record (SIGTERM; the child prints what it has and exits). */
  stop(): Promise<LoadRecord>
}

/** Runs the load generator (load-generator-main.js) in a child process, started once it says so. */
export async function spawnLoad(config: LoadConfig, main = beside('load-generator-main.js')): Promise<LoadProcess> {
  const child = startChild(main, config, 'load', 'load generator')
  try {
    await child.nextLine()
  } catch (error) {
    await child.stop()
    throw error
  }
  // JSON has no NaN: a bucket with no answers comes back as null.
  // The record comes when the run ends: its duration, and the settling of what is open then.
  const done = child.nextLine(config.duration + startSeconds + config.clients.timeout * config.clients.attempts * 2).then((record) => {
    const r = record as LoadRecord
    return {...r, latencyP99: r.latencyP99.map((v) => (v === null ? NaN : v))}
  })
  // Whoever reads the record, the child is gone by then.
  const finished = done.finally(() => child.stop())
  finished.catch(() => undefined)
  return {
    pid: child.pid,
    done: finished,
    stop: async () => {
      try {
        process.kill(child.pid, 'SIGTERM')
      } catch {
        // Already gone: its record, or why there is none, is in `finished`.
      }
      return finished
    },
  }
}
