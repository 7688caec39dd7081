import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {inProcess as sluice, root} from '../helpers/command.js'

// `tune --write F` once truncated F and then wrote it: a full disk or a kill -9 in between left
// F empty. It also wrote through symlinks, lost a BOM and CRLF endings, and took --write ''.
// Through the CLI in this process; a kill -9 at any moment is test/e2e/kill-write.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'sluice-output-'))
const shipped = join(root, 'runbooks', 'outlook-staged-return.yaml')
const tune = (file: string, write: string, env: Record<string, string> = {}) =>
  sluice(['tune', file, '--seeds', '1', '--demand-margin', '0', '--no-slow-minority', '--write', write], {env})

/** A small file system of its own, mounted for the disk-full case (needs root; said and skipped otherwise). */
const small = join(dir, 'small')
let mounted = false
try {
  mkdirSync(small)
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small], {stdio: 'ignore'})
  mounted = true
} catch {
  console.log('disk-full case skipped: cannot mount a tmpfs here (it needs root)')
}
afterAll(() => {
  if (mounted) execFileSync('umount', [small])
})

describe('tune --write F replaces F whole or not at all (in process)', () => {
  it.skipIf(!mounted)(
    'on a full disk: exit 2 naming the file and the reason, F byte-identical, no temporary file left',
    async () => {
      const file = join(small, 'runbook.yaml')
      copyFileSync(shipped, file)
      const before = readFileSync(file)
      // Fill what is left, so the tuned text cannot be written beside it.
      try {
        writeFileSync(join(small, 'filler'), Buffer.alloc(64 * 1024))
      } catch {
        // ENOSPC once full: what is wanted.
      }
      const result = await tune(file, file)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain(`Error: --write: cannot write ${file}: ENOSPC (no space left on the device); it is as it was`)
      expect(readFileSync(file).equals(before)).toBe(true)
      expect(readdirSync(small).sort()).toEqual(['filler', 'runbook.yaml'])
    },
    60_000,
  )

  it("refuses a symbolic link and an empty --write, --svg or --html (exit 2), and leaves the link's target alone", async () => {
    const target = join(dir, 'real.yaml')
    copyFileSync(shipped, target)
    const link = join(dir, 'link.yaml')
    symlinkSync(target, link)
    const linked = await tune(shipped, link)
    expect(linked.code, linked.stderr).toBe(2)
    expect(linked.stderr).toContain(`Error: --write: ${link} is a symbolic link (to ${target}); sluice replaces a file whole and will not write through a link`)
    expect(readFileSync(target).equals(readFileSync(shipped))).toBe(true)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    const empty = await tune(shipped, '')
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('Error: --write: expected a file name, got an empty value')
    for (const [args, flag] of [
      [['run', 'naive-full-return', '--dry-run', '--svg', ''], '--svg'],
      [['simulate', '--html', ''], '--html'],
      [['simulate', '--svg', ' '], '--svg'],
    ] as const) {
      const refused = await sluice([...args])
      expect(refused.code, refused.stderr).toBe(2)
      expect(refused.stderr).toContain(`Error: ${flag}: expected a file name, got an empty value`)
    }
  }, 60_000)

  it('keeps a CRLF file CRLF and its byte order mark; a new file is 0644 under umask 000', async () => {
    const crlf = join(dir, 'windows.yaml')
    writeFileSync(crlf, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(readFileSync(shipped, 'utf8').replace(/\n/g, '\r\n'))]))
    const out = join(dir, 'windows-tuned.yaml')
    const result = await tune(crlf, out)
    expect(result.code, result.stderr).toBe(0)
    const bytes = readFileSync(out)
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const text = bytes.subarray(3).toString('utf8')
    expect(text).toMatch(/\r\n/)
    expect(text).not.toMatch(/(^|[^\r])\n/)
    expect((await sluice(['validate', out])).code).toBe(0)

    const fresh = join(dir, 'fresh-tuned.yaml')
    const umask = process.umask(0o000)
    try {
      expect((await tune(shipped, fresh)).code).toBe(0)
    } finally {
      process.umask(umask)
    }
    expect(existsSync(fresh)).toBe(true)
    expect((statSync(fresh).mode & 0o777).toString(8)).toBe('644')
  }, 60_000)
})
