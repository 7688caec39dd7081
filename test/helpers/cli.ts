import {spawn} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** The package root, where a user in the repository runs sluice from. */
export const root = fileURLToPath(new URL('../../', import.meta.url))
export const runJs = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a program to its end and collects what it wrote and its exit code. A variable given as
 * undefined is taken out of the environment; a program killed at its timeout says so on stderr.
 */
export function spawnCollected(
  command: string,
  args: string[],
  options: {env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number} = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = {...process.env, ...options.env}
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k]
    const child = spawn(command, args, {cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({code, stdout, stderr: signal ? `${stderr}\nkilled by ${signal} after ${options.timeoutMs} ms` : stderr}))
  })
}

/** Runs the built CLI as a user would: a separate process, no TTY, no colour, its own environment. */
export function sluice(args: string[], options: {env?: Record<string, string | undefined>; cwd?: string} = {}): Promise<CliResult> {
  return spawnCollected(process.execPath, [runJs, ...args], {cwd: options.cwd, env: {NO_COLOR: '1', ...options.env}})
}

/** An environment with no AWS credentials, config files or instance metadata, and a state directory of its own. */
export function isolatedEnv(name: string): Record<string, string> {
  const sandbox = mkdtempSync(join(tmpdir(), `sluice-${name}-env-`))
  return {
    AWS_CONFIG_FILE: join(sandbox, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(sandbox, 'no-aws-credentials'),
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
    AWS_SESSION_TOKEN: '',
    AWS_EC2_METADATA_DISABLED: 'true',
    SLUICE_STATE: join(sandbox, 'state'),
  }
}

/**
 * A `sluice` for tests that must not reach AWS or write into the repository: no credentials, no
 * config files, no instance metadata, and a state directory of its own.
 */
export function isolatedSluice(name: string) {
  const env = isolatedEnv(name)
  return (args: string[], options: {cwd?: string; env?: Record<string, string>} = {}): Promise<CliResult> =>
    sluice(args, {...options, env: {...env, ...options.env}})
}
