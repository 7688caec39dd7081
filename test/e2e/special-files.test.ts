import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runJs} from '../helpers/cli.js'

// Inputs that are not regular files, through the real CLI: once, /dev/zero grew sluice to
// gigabytes (its size says 0) and a FIFO with no writer hung it at the open.

const dir = mkdtempSync(join(tmpdir(), 'sluice-special-'))
const fifo = join(dir, 'runbook.fifo')
execFileSync('mkfifo', [fifo])
// GNU time reports the child's peak resident memory; without it the bound on time still holds.
const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : null

function run(args: string[]): Promise<{code: number | null; stderr: string; ms: number; peakKb: number | null}> {
  const started = performance.now()
  const argv = gnuTime ? ['-f', 'peak %M', process.execPath, runJs, ...args] : [runJs, ...args]
  const child = spawn(gnuTime ?? process.execPath, argv, {env: {...process.env, NO_COLOR: '1'}, stdio: ['ignore', 'ignore', 'pipe']})
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000)
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer)
      const peak = /^peak (\d+)$/m.exec(stderr)
      // GNU time exits with its child's code.
      resolve({code, stderr, ms: performance.now() - started, peakKb: peak ? Number(peak[1]) : null})
    }),
  )
}

describe('input that is not a regular file is refused before it is read (spawned)', () => {
  it.each([
    ['validate', (f: string) => ['validate', f]],
    ['simulate --scenario', (f: string) => ['simulate', '--scenario', f]],
    ['tune', (f: string) => ['tune', f]],
  ])(
    '%s on /dev/zero and on a FIFO with no writer: exit 2 naming the file and what it is, in about as long as it takes to start, with no more memory than a good file',
    async (_name, argsFor) => {
      // The same command on a good file, measured in the same run: the CLI's own start-up memory.
      const good = await run(['validate', 'naive-full-return'])
      expect(good.code, good.stderr).toBe(0)
      for (const [file, kind] of [
        ['/dev/zero', 'a character device'],
        [fifo, 'a FIFO'],
      ]) {
        const result = await run(argsFor(file))
        expect(result.code, result.stderr).toBe(2)
        expect(result.stderr).toContain(`${file}:1:1: ${kind}, not a regular file; expected a YAML file`)
        // A hang detector with room for a busy machine's start-up: the refusal itself reads nothing.
        expect(result.ms, result.stderr).toBeLessThan(15_000)
        // Once 6.5 GB in 20 s; now what starting the CLI takes, give or take a little.
        if (result.peakKb !== null && good.peakKb !== null)
          expect(result.peakKb - good.peakKb, `peak resident memory over a good file's (${good.peakKb} KB), KB`).toBeLessThan(30 * 1024)
      }
    },
    60_000,
  )
})
