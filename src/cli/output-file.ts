import {closeSync, fsyncSync, lstatSync, openSync, readlinkSync, readSync, renameSync, rmSync, writeSync} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {basename, dirname, join} from 'node:path'
import {InputError} from '../errors.js'

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

/**
 * Writes a report or runbook a command has already built, whole or not at all: into a new file
 * beside the target, fsynced, then renamed over it. A full disk or a kill mid-write leaves the
 * target as it was (never truncated), and only a failed write is reported as one: bad input
 * naming the flag and the file, with the system's reason. A symbolic link is refused rather than
 * written through (replacing it would cut the link; writing through it edits a file elsewhere).
 * New files are at most 0644 whatever the umask (a tuned runbook carries hook commands); a file
 * replaced keeps its own mode.
 */
export function writeOutput(flag: string, file: string, content: string | Buffer): void {
  checkOutputName(flag, file)
  let mode = 0o644 & ~currentUmask()
  try {
    const existing = lstatSync(file)
    if (existing.isSymbolicLink())
      throw new InputError(
        `${flag}: ${file} is a symbolic link (to ${readlinkSync(file)}); sluice replaces a file whole and will not write through a link: give the file it points to`,
      )
    if (!existing.isFile()) throw new InputError(`${flag}: ${file} is not a regular file; give a file to write`)
    mode = existing.mode & 0o777
  } catch (error) {
    if (error instanceof InputError) throw error
    if (code(error) !== 'ENOENT') throw new InputError(`${flag}: cannot write ${file}: ${code(error) ?? String(error)}`)
  }
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  let fd: number | undefined
  try {
    fd = openSync(temp, 'wx', mode)
    const bytes = typeof content === 'string' ? Buffer.from(content) : content
    for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at)
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
