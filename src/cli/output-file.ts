import {
  closeSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
  type Stats,
} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {basename, dirname, join} from 'node:path'
import {InputError} from '../errors.js'

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

/**
 * Writes a report or runbook a command has already built, whole or not at all: into a new file
 * beside the target, fsynced, then renamed over it. A full disk or a kill mid-write leaves the
 * target as it was (never truncated), and only a failed write is reported as one: bad input
 * naming the flag and the file, with the system's reason. New files are at most 0644 whatever the
 * umask (a tuned runbook carries hook commands).
 *
 * A file replaced keeps what a rename would lose, or is refused before anything is written
 * (checkOutputTarget): its mode and its owner and group are put on the new file before the
 * rename, and a file with other hard links, or one whose owner this process cannot give the new
 * file (not root, someone else's), is refused. Writing in place would keep both, but a crash
 * half-way would leave a runbook cut short; a refusal leaves it whole and says what to do.
 */
export function writeOutput(flag: string, file: string, content: string | Buffer): void {
  checkOutputName(flag, file)
  const existing = checkOutputTarget(flag, file)
  const mode = existing ? existing.mode & 0o7777 : 0o644 & ~currentUmask()
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  let fd: number | undefined
  try {
    fd = openSync(temp, 'wx', 0o600)
    const bytes = typeof content === 'string' ? Buffer.from(content) : content
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
    // The owner first: a change of owner clears the set-id bits the mode then puts back.
    if (existing) {
      const made = fstatSync(fd)
      if (made.uid !== existing.uid || made.gid !== existing.gid) fchownSync(fd, existing.uid, existing.gid)
    }
    // Set, not asked of open(): the umask would take bits off a group-writable runbook.
    fchmodSync(fd, mode)
    fsyncSync(fd)
    closeSync(fd)
    fd = undefined
    renameSync(temp, file)
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    rmSync(temp, {force: true})
    throw new InputError(
      `${flag}: cannot write ${file}: ${code(error) ?? String(error)}${code(error) === 'ENOSPC' ? ' (no space left on the device); it is as it was' : ''}`,
    )
  }
  syncDirectory(dirname(file))
}

/** A file name a flag names for output: an empty one is bad input, said before any work is done. */
export function checkOutputName(flag: string, file: string | undefined): void {
  if (file !== undefined && file.trim() === '') throw new InputError(`${flag}: expected a file name, got an empty value`)
  if (file !== undefined) checkOutputTarget(flag, file)
}

/**
 * What is at an output file today (undefined for nothing), refused when replacing it would change
 * more than its content: a symbolic link (replacing it cuts the link; writing through it edits a
 * file elsewhere), something other than a regular file, a file with other hard links (a rename
 * leaves them holding the old text), or a file this process cannot keep the owner and group of.
 * Checked before a command's work and again just before the write.
 */
export function checkOutputTarget(flag: string, file: string): Stats | undefined {
  let existing: Stats
  try {
    existing = lstatSync(file)
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined
    throw new InputError(`${flag}: cannot write ${file}: ${code(error) ?? String(error)}`)
  }
  const elsewhere = `write it elsewhere with ${flag} NEW and copy it over with \`cp NEW ${file}\` (cp writes into the file in place)`
  if (existing.isSymbolicLink())
    throw new InputError(
      `${flag}: ${file} is a symbolic link (to ${readlinkSync(file)}); sluice replaces a file whole and will not write through a link: give the file it points to`,
    )
  if (!existing.isFile()) throw new InputError(`${flag}: ${file} is not a regular file; give a file to write`)
  if (existing.nlink > 1)
    throw new InputError(
      `${flag}: ${file} has ${existing.nlink - 1} other hard link${existing.nlink > 2 ? 's' : ''}; sluice replaces a file whole, which would leave ${existing.nlink > 2 ? 'them' : 'it'} with the old text: ${elsewhere}`,
    )
  const uid = process.getuid?.()
  if (uid !== undefined && uid !== 0) {
    const groups = new Set([process.getgid?.(), ...(process.getgroups?.() ?? [])])
    const whose = existing.uid !== uid ? `uid ${existing.uid}` : !groups.has(existing.gid) ? `group ${existing.gid}` : null
    if (whose)
      throw new InputError(
        `${flag}: ${file} belongs to ${whose}, which this user (uid ${uid}) cannot give the new file sluice writes in its place: ${elsewhere}`,
      )
  }
  return existing
}

/** Whether a file begins with a UTF-8 byte order mark (false when it cannot be read). */
export function startsWithBom(file: string): boolean {
  try {
    const fd = openSync(file, 'r')
    try {
      const head = Buffer.alloc(3)
      return readSync(fd, head, 0, 3, 0) === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

/** The process's umask, read without changing it for longer than the call. */
function currentUmask(): number {
  const mask = process.umask(0o022)
  process.umask(mask)
  return mask
}

/** Makes the rename itself durable; some file systems cannot open a directory, and then it is skipped. */
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r')
    try {
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Best effort: the file's own data is already on disk.
  }
}
