import {spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import type {FleetConfig, FleetInfo} from './fleet.js'

/** A fleet in a child process: its ports, its pid, and the one way to end it. */
export interface FleetProcess extends FleetInfo {
  pid: number
  /** SIGTERM, then SIGKILL if it has not exited within a few seconds; resolves once it has exited. Safe to call twice. */
  stop(): Promise<void>
}

/** Seconds a fleet gets to print its ports, and to exit after SIGTERM before SIGKILL. */
const startSeconds = 20
const stopSeconds = 5

/**
 * Runs the fleet (src/drill/fleet-main.ts, compiled) in a child process and waits for its ports.
 * Its stdin is a pipe from this process, so it exits if this one dies however it dies; on any
 * failure to start, the child is killed before the error is thrown. `main` is the compiled
 * fleet-main.js beside this module unless given (tests run this module from source).
 */
export async function spawnFleet(config: FleetConfig, main = fileURLToPath(new URL('fleet-main.js', import.meta.url))): Promise<FleetProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-fleet-'))
  const file = join(dir, 'fleet.json')
  writeFileSync(file, JSON.stringify(config))
  const child = spawn(process.execPath, [main, '--config', file, '--exit-on-stdin-end'], {stdio: ['pipe', 'pipe', 'pipe']})
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const cleanup = () => rmSync(dir, {recursive: true, force: true})
  let stopping: Promise<void> | null = null
  const stop = (): Promise<void> => {
    stopping ??= terminate(child, exited).finally(cleanup)
    return stopping
  }
  try {
    const info = await firstLine(child)
    return {...info, pid: child.pid!, stop}
  } catch (error) {
    await stop()
    throw error
  }
}

function firstLine(child: ChildProcess): Promise<FleetInfo> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(() => reject(new Error(`the fleet printed no ports within ${startSeconds} s`)), startSeconds * 1000)
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()))
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const newline = out.indexOf('\n')
      if (newline < 0) return
      clearTimeout(timer)
      try {
        resolve(JSON.parse(out.slice(0, newline)) as FleetInfo)
      } catch {
        reject(new Error(`the fleet printed ${JSON.stringify(out.slice(0, newline))}, not its ports`))
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(err.trim().split('\n')[0] || `the fleet exited with code ${code} before printing its ports`))
    })
  })
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  const killer = setTimeout(() => child.kill('SIGKILL'), stopSeconds * 1000)
  await exited
  clearTimeout(killer)
}
