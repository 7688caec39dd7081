import {chmodSync, chownSync, copyFileSync, linkSync, mkdtempSync, readFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it, vi} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

const outlook = 'runbooks/outlook-staged-return.yaml'
const root = process.getuid?.() === 0
/** Someone else: a user and group no file here belongs to. */
const OTHER = {uid: 4321, gid: 4322}

afterEach(() => void vi.restoreAllMocks())

/** The shipped runbook copied into a directory of its own, to tune in place. */
function runbookCopy(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-tune-write-')), 'outlook.yaml')
  copyFileSync(outlook, file)
  return file
}

const tune = (file: string, out = file) => sluiceInProcess(['tune', file, '--seeds', '1', '--demand-margin', '0', '--write', out])

describe('tune --write keeps the file it replaces as it was, but for the ramps, or refuses', () => {
  it('keeps a group-writable mode the umask would take away', async () => {
    const file = runbookCopy()
    chmodSync(file, 0o664)
    const r = await tune(file)
    expect(r.exit, r.stderr).toBe(0)
    expect(r.stderr).toContain(`tuned runbook saved to ${file}`)
    expect(readFileSync(file, 'utf8')).not.toBe(readFileSync(outlook, 'utf8'))
    expect(statSync(file).mode & 0o7777).toBe(0o664)
  })

  it.skipIf(!root)("run as root, another user's runbook stays theirs (owner and group), not root's", async () => {
    const file = runbookCopy()
    chownSync(file, OTHER.uid, OTHER.gid)
    chmodSync(file, 0o640)
    const r = await tune(file)
    expect(r.exit, r.stderr).toBe(0)
    expect(readFileSync(file, 'utf8')).not.toBe(readFileSync(outlook, 'utf8'))
    const after = statSync(file)
    expect({uid: after.uid, gid: after.gid, mode: after.mode & 0o7777}).toEqual({...OTHER, mode: 0o640})
  })

  it('a runbook with another hard link is refused before the search (exit 2), and both names keep one file and its text', async () => {
    const file = runbookCopy()
    const other = join(file, '..', 'also-outlook.yaml')
    linkSync(file, other)
    const before = readFileSync(file, 'utf8')
    const r = await tune(file)
    expect(r.exit).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(
      `Error: --write: ${file} has 1 other hard link; sluice replaces a file whole, which would leave it with the old text: write it elsewhere with --write NEW and copy it over with \`cp NEW ${file}\` (cp writes into the file in place)`,
    )
    expect(statSync(file).nlink).toBe(2)
    expect(statSync(file).ino).toBe(statSync(other).ino)
    expect(readFileSync(other, 'utf8')).toBe(before)
  })

  it.skipIf(!root)('a user who cannot give the new file the old one’s owner is refused before the search (exit 2), the file untouched', async () => {
    const file = runbookCopy()
    chownSync(file, OTHER.uid, OTHER.gid)
    chmodSync(file, 0o666)
    // This process as an ordinary user (uid 1000) who may write the file but not give a file away.
    vi.spyOn(process, 'getuid').mockReturnValue(1000)
    const r = await tune(file)
    expect(r.exit).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim()).toBe(
      `Error: --write: ${file} belongs to uid ${OTHER.uid}, which this user (uid 1000) cannot give the new file sluice writes in its place: write it elsewhere with --write NEW and copy it over with \`cp NEW ${file}\` (cp writes into the file in place)`,
    )
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(outlook, 'utf8'))
    expect(statSync(file).uid).toBe(OTHER.uid)
  })
})
