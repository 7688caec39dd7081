import {chmodSync, closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, rmSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'
import {stateFileError} from '../state/records.js'

export const code = (error: unknown) => (error as NodeJS.ErrnoException).code

/** Creates a directory as 0700 whatever the umask (state holds who did what, and when). */
export function privateDir(dir: string): void {
  try {
    mkdirSync(dirname(dir), {recursive: true})
    mkdirSync(dir, {mode: 0o700})
    chmodSync(dir, 0o700)
  } catch (error) {
    if (code(error) !== 'EEXIST') throw stateFileError('create the directory', dir, error)
  }
}

/** Writes a new 0600 file whole, fsynced, then renames it into place: a reader sees all of it or none. */
export function writePrivateFile(file: string, text: string, flag: 'w' | 'wx' = 'w'): void {
  let fd: number
  try {
    fd = openSync(file, flag, 0o600)
  } catch (error) {
    throw stateFileError('create', file, error)
  }
  try {
    fchmodSync(fd, 0o600)
    const buf = Buffer.from(text)
    if (writeSync(fd, buf, 0, buf.length) !== buf.length) throw Object.assign(new Error('short write'), {code: 'ENOSPC'})
    fsyncSync(fd)
    closeSync(fd)
  } catch (error) {
    closeSync(fd)
    rmSync(file, {force: true})
    throw stateFileError('write', file, error)
  }
}
