import {spawn} from 'node:child_process'
import {fileURLToPath} from 'node:url'

export const runJs = fileURLToPath(new URL('../../bin/run.js', import.meta.url))

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built CLI as a user would: a separate process, no TTY, its own environment. */
export function sluice(args: string[], options: {env?: Record<string, string>; cwd?: string} = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runJs, ...args], {
      cwd: options.cwd,
      env: {...process.env, NO_COLOR: '1', ...options.env},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({code, stdout, stderr}))
  })
}
