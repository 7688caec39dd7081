import {copyFileSync, mkdtempSync, readFileSync} from 'node:fs'
import {spawn} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {root, runJs, sluice} from '../helpers/cli.js'

// `tune --write F` once truncated F and then wrote it: a kill -9 in between left F empty. Only a
// process can be killed; the rest of --write (a full disk, links, CRLF, modes) is tested in
// process in test/cli/output-files.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'sluice-output-'))
const shipped = join(root, 'runbooks', 'outlook-staged-return.yaml')
const tune = (file: string, write: string) => sluice(['tune', file, '--seeds', '1', '--demand-margin', '0', '--no-slow-minority', '--write', write])

describe('tune --write F replaces F whole or not at all (spawned)', () => {
  it('killed at any moment: F is always the old file or the whole new one, never cut short', async () => {
    const file = join(dir, 'killed.yaml')
    copyFileSync(shipped, file)
    const before = readFileSync(file, 'utf8')
    const finished = await tune(file, join(dir, 'expected.yaml'))
    expect(finished.code, finished.stderr).toBe(0)
    const after = readFileSync(join(dir, 'expected.yaml'), 'utf8')
    for (const delay of [150, 300, 450, 600, 750, 900]) {
      copyFileSync(shipped, file)
      const child = spawn(process.execPath, [runJs, 'tune', file, '--seeds', '1', '--demand-margin', '0', '--write', file], {stdio: 'ignore'})
      setTimeout(() => child.kill('SIGKILL'), delay)
      await new Promise((r) => child.on('close', r))
      const now = readFileSync(file, 'utf8')
      expect([before, after], `after a kill at ${delay} ms`).toContain(now)
    }
  }, 120_000)
})
