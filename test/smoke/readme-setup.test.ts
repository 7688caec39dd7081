import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, realpathSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {spawnCollected} from '../helpers/cli.js'
import {codeBlocks, repoRoot} from '../helpers/docs.js'

// The README's set-up, followed as a new user follows it: its first command, step by step, then
// `sluice` in a fresh shell. npm's global prefix is a temporary one, so the machine's is never touched.
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8')
const setup = codeBlocks({path: 'README.md', text: readme}).find((b) => b.lang === 'sh')!
const steps = setup.lines[0].split('&&').map((s) => s.trim())

/** What says whether the checkout's dependencies were installed again: the lock files npm writes when it does. */
const installed = () =>
  ['package-lock.json', 'node_modules/.package-lock.json'].map((f) =>
    existsSync(join(repoRoot, f))
      ? createHash('sha256')
          .update(readFileSync(join(repoRoot, f)))
          .digest('hex')
      : null,
  )

describe('the README set-up leaves `sluice` on the PATH (spawned)', () => {
  it('its first command is npm ci, then npm link, then sluice', () => {
    expect(steps[0]).toBe('npm ci')
    expect(steps[1]).toBe('npm link')
    expect(steps[2]).toMatch(/^sluice run /)
    // One spelling throughout: no ./bin/run.js, npx or node bin/… where a user reads a command.
    expect(readme).not.toMatch(/\.\/bin\/run\.js|node bin\/run|npx sluice/)
  })

  it('after `npm link` (as the README says, into a temporary prefix), a fresh shell runs `sluice --help` from anywhere', async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'sluice-prefix-'))
    const before = installed()
    // `npm ci`, the first step, is what this checkout was set up with (its dependencies are here,
    // and the suite has built it): not repeated. `npm link` runs as written; its `prepare` would
    // build the checkout a second time, rewriting dist/ under the other spawned tests, so scripts
    // are off, and it stays off the network.
    const link = await spawnCollected('bash', ['-c', steps[1]], {
      cwd: repoRoot,
      env: {npm_config_prefix: prefix, npm_config_ignore_scripts: 'true', npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false'},
      timeoutMs: 120_000,
    })
    expect(link.code, link.stderr).toBe(0)
    // Linked, not installed: the checkout's dependencies were not installed again.
    expect(installed()).toEqual(before)
    expect(realpathSync(join(prefix, 'lib', 'node_modules', 'sluice'))).toBe(realpathSync(repoRoot))
    // A fresh shell: no startup files, nothing of this process's environment but HOME and a PATH
    // of the prefix's bin, the directory node is in, and the system's.
    const home = mkdtempSync(join(tmpdir(), 'sluice-home-'))
    const shell = await spawnCollected(
      'env',
      [
        '-i',
        `HOME=${home}`,
        `PATH=${join(prefix, 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`,
        'bash',
        '--norc',
        '--noprofile',
        '-c',
        'cd / && command -v sluice && sluice --help',
      ],
      {timeoutMs: 60_000},
    )
    expect(shell.code, shell.stderr).toBe(0)
    expect(shell.stdout.split('\n')[0]).toBe(join(prefix, 'bin', 'sluice'))
    expect(shell.stdout).toMatch(/^USAGE\n {2}\$ sluice \[COMMAND\]$/m)
    expect(shell.stdout).toContain('haproxy-config')
  }, 150_000)
})
