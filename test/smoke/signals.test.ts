import {spawn} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {root, runJs} from '../helpers/cli.js'

// Only a process of its own can be sent a signal: Ctrl-C (SIGINT), `kill` and CI runners (SIGTERM)
// and a closed terminal (SIGHUP) each stop a rehearsal at its next safe point, not where it stands.

const braille = /[\u2801-\u28ff]/

describe.concurrent('a stop signal during a rehearsal (spawned)', () => {
  it.each([
    ['SIGINT', 'interrupt'],
    ['SIGTERM', 'SIGTERM'],
    ['SIGHUP', 'SIGHUP'],
  ] as const)(
    '%s stops at a safe point, says where, prints the report and exits 130',
    async (sent, said) => {
      const child = spawn(process.execPath, [runJs, 'run', 'runbooks/outlook-staged-return.yaml', '--dry-run', '--pace', '200'], {
        cwd: root,
        env: {...process.env, NO_COLOR: '1', SLUICE_STATE: mkdtempSync(join(tmpdir(), 'sluice-int-'))},
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d) => (stdout += d))
      const closed = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve) =>
        child.on('close', (code, signal) => resolve({code, signal})),
      )
      // Resolves true once step 4 or later has started, false if the run ended first.
      const reached = new Promise<boolean>((resolve) => {
        child.stderr.on('data', (d) => {
          stderr += d
          if (/^\[\+\d\d:\d\d\] \[step ([4-9]|10)\] start /m.test(stderr)) resolve(true)
        })
        void closed.then(() => resolve(false))
      })
      try {
        const midRun = await reached
        expect(midRun, `the run ended before step 4 started:\n${stderr}`).toBe(true)
        child.kill(sent)
        const {code, signal} = await closed
        expect(signal).toBeNull()
        expect(code, stderr).toBe(130)
        expect(stderr).toContain(`${said}: `)
        expect(stderr).toMatch(/^interrupted: step \d+ \(/m)
        expect(stderr).toMatch(/^\[\+\d\d:\d\d\] run: interrupted /m)
        expect(stderr).not.toMatch(/^\[\+\d\d:\d\d\] run: completed/m)
        expect(stdout).toMatch(/^Outcome: interrupted — step \d+ /m)
        expect(stdout).toMatch(/^\s+\d+\. \[interrupted\] /m)
        expect(stdout).toMatch(braille)
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
    },
    120_000,
  )
})
