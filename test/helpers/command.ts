import {run} from '@oclif/core'
import {captureOutput} from '@oclif/test'
import {fileURLToPath} from 'node:url'

/** The package root: oclif loads the built commands (dist/commands) from its package.json. */
export const root = fileURLToPath(new URL('../../', import.meta.url))

export interface InProcessResult<T> {
  /** The exit code the command ends with: from the error it threw, or the one it set on the process. */
  exit: number
  stdout: string
  stderr: string
  result?: T
  error?: Error
}

/**
 * Runs a sluice command in this process, as `sluice ARGS...` would, capturing stdout and stderr
 * with oclif's own test helper. (runCommand would join the argv and split it again on spaces,
 * which breaks a flag value such as `--restart '/usr/local/bin/restart-api {id}'`; this passes
 * the argv to oclif as given, which is what runCommand does after splitting.) Commands that end with an outcome set process.exitCode;
 * it is read here and put back, so the test process keeps its own.
 */
export async function sluiceInProcess<T = unknown>(args: string[]): Promise<InProcessResult<T>> {
  const saved = process.exitCode
  process.exitCode = undefined
  try {
    const {stdout, stderr, result, error} = await captureOutput<T>(() => run(args, {root}))
    const thrown = error?.oclif?.exit
    const exit = error ? (thrown ?? 1) : Number(process.exitCode ?? 0)
    return {exit, stdout, stderr, result, ...(error ? {error} : {})}
  } finally {
    process.exitCode = saved
  }
}
