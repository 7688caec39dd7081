import {run} from '@oclif/core'
import {isolatedEnv, root, type CliResult} from './cli.js'

/** The package root: oclif loads the built commands (dist/bundle/commands) from its package.json. */
export {root}

export interface InProcessResult<T> {
  /** The exit code the command ends with: from the error it threw, or the one it set on the process. */
  exit: number
  stdout: string
  stderr: string
  result?: T
  error?: Error
  /** Node's process warnings emitted while the command ran (a spawned CLI prints them as `(node:PID) …` on stderr). */
  warnings: Error[]
}

export interface InProcessOptions {
  /** Variables set for the command's run and put back after; one given as undefined is taken out meanwhile. */
  env?: Record<string, string | undefined>
  /** The directory the command runs in, as a spawned CLI's cwd; the test's own is put back after. */
  cwd?: string
  /** Told each write as it is made, for a test that acts on what a command has said so far (a spawned CLI's 'data' events). */
  onWrite?: (stream: 'stdout' | 'stderr', text: string) => void
}

// One command at a time per process: stdout, stderr, the environment and the working directory are
// the process's own, so two commands at once would take each other's output. Promise.all over
// several in-process commands is safe: they run one after another.
let queue: Promise<unknown> = Promise.resolve()

/**
 * Runs a sluice command in this process, as `sluice ARGS...` would in a process of its own with no
 * terminal: stdout and stderr captured apart, exactly as written (colour codes included, so a test
 * can see there are none), stdin, stdout and stderr not terminals for its run (as a spawned CLI's
 * pipes are not, however vitest itself was started), and `options.env` and `options.cwd` in force
 * meanwhile. The argv reaches oclif as given (oclif's runCommand would join it and split it again on
 * spaces, breaking a value such as `--restart '/usr/local/bin/restart-api {id}'`). Commands that end
 * with an outcome set process.exitCode; it is read here and put back, so the test process keeps its own.
 */
export function sluiceInProcess<T = unknown>(args: string[], options: InProcessOptions = {}): Promise<InProcessResult<T>> {
  const next = queue.then(() => runNow<T>(args, options))
  queue = next.catch(() => undefined)
  return next
}

async function runNow<T>(args: string[], options: InProcessOptions): Promise<InProcessResult<T>> {
  const saved = {exitCode: process.exitCode, cwd: process.cwd(), env: {...process.env}}
  const undoTerminals = asIfPiped()
  const out = {stdout: [] as string[], stderr: [] as string[]}
  // Put back as found: vitest's own write may be the stream's or one it set on it.
  const writes = {stdout: Object.getOwnPropertyDescriptor(process.stdout, 'write'), stderr: Object.getOwnPropertyDescriptor(process.stderr, 'write')}
  const warnings: Error[] = []
  const onWarning = (warning: Error) => warnings.push(warning)
  process.exitCode = undefined
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  if (options.cwd) process.chdir(options.cwd)
  process.on('warning', onWarning)
  for (const name of ['stdout', 'stderr'] as const) {
    process[name].write = (chunk: string | Uint8Array, encoding?: unknown, done?: unknown) => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
      out[name].push(text)
      options.onWrite?.(name, text)
      const callback = typeof encoding === 'function' ? encoding : done
      if (typeof callback === 'function') callback()
      return true
    }
  }
  try {
    let result: T | undefined
    let error: (Error & {oclif?: {exit?: number}}) | undefined
    try {
      result = (await run(args, {root})) as T
    } catch (thrown) {
      error = thrown as Error & {oclif?: {exit?: number}}
    }
    // Warnings are emitted on the next tick: let any the command caused arrive before the count.
    await new Promise((r) => setImmediate(r))
    // The commands come from the bundle with its own copy of oclif, so its errors are known by their `oclif.exit`, not their class.
    const exit = error ? (error.oclif?.exit ?? 1) : Number(process.exitCode ?? 0)
    return {exit, stdout: out.stdout.join(''), stderr: out.stderr.join(''), result, warnings, ...(error ? {error} : {})}
  } finally {
    for (const name of ['stdout', 'stderr'] as const) {
      const own = writes[name]
      if (own) Object.defineProperty(process[name], 'write', own)
      else delete (process[name] as unknown as Record<string, unknown>).write
    }
    process.off('warning', onWarning)
    if (options.cwd) process.chdir(saved.cwd)
    for (const k of Object.keys(process.env)) if (!(k in saved.env)) delete process.env[k]
    Object.assign(process.env, saved.env)
    undoTerminals()
    process.exitCode = saved.exitCode
  }
}

/** Makes stdin, stdout and stderr say they are no terminal, as a spawned CLI's pipes are; returns how to put them back. */
function asIfPiped(): () => void {
  const undo: Array<() => void> = []
  for (const stream of [process.stdin, process.stdout, process.stderr] as Array<NodeJS.ReadStream | NodeJS.WriteStream>) {
    for (const key of ['isTTY', 'columns', 'rows'] as const) {
      const own = Object.getOwnPropertyDescriptor(stream, key)
      Object.defineProperty(stream, key, {value: undefined, configurable: true, writable: true})
      undo.push(() => {
        if (own) Object.defineProperty(stream, key, own)
        else delete (stream as unknown as Record<string, unknown>)[key]
      })
    }
  }
  return () => undo.reverse().forEach((f) => f())
}

/** A command in this process, its result shaped as a spawned one's (test/helpers/cli.ts `sluice`): no colour, exit code as `code`. */
export async function inProcess(args: string[], options: InProcessOptions = {}): Promise<CliResult & {warnings: Error[]}> {
  const {exit, stdout, stderr, warnings} = await sluiceInProcess(args, {...options, env: {NO_COLOR: '1', ...options.env}})
  return {code: exit, stdout, stderr, warnings}
}

/**
 * `isolatedSluice` (test/helpers/cli.ts) in this process: no AWS credentials, config files or
 * instance metadata, and a state directory of its own, for each command's run only.
 */
export function isolatedInProcess(name: string) {
  const env = isolatedEnv(name)
  return (args: string[], options: InProcessOptions = {}): Promise<CliResult & {warnings: Error[]}> =>
    inProcess(args, {...options, env: {...env, ...options.env}})
}
