import {readFileSync, renameSync, rmSync} from 'node:fs'
import {join} from 'node:path'
import type {FreezePort, FreezeRecord} from '../ports/control-plane.js'
import {parseFreeze, stateFileError} from '../state/records.js'
import {privateDir, writePrivateFile} from './private-files.js'

/**
 * The change freeze in a local state directory (`~/.local/state/sluice` by default). Written to a temporary
 * 0600 file and renamed, so a reader never sees half a record; read back checked, so a damaged one
 * is reported with its file and line.
 */
export class FreezeFile implements FreezePort {
  readonly file: string

  constructor(readonly dir: string) {
    this.file = join(dir, 'freeze.json')
  }

  async get(): Promise<FreezeRecord | null> {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw stateFileError('read', this.file, error)
    }
    const record = parseFreeze(this.file, text)
    if (record.expires && Date.parse(record.expires) <= Date.now()) return null
    return record
  }

  async set(record: FreezeRecord): Promise<void> {
    privateDir(this.dir)
    const tmp = `${this.file}.${process.pid}.tmp`
    writePrivateFile(tmp, `${JSON.stringify(record, null, 2)}\n`)
    try {
      renameSync(tmp, this.file)
    } catch (error) {
      rmSync(tmp, {force: true})
      throw stateFileError('write', this.file, error)
    }
  }

  /** Removes whatever is there, damaged or not. */
  async clear(): Promise<void> {
    try {
      rmSync(this.file, {force: true})
    } catch (error) {
      throw stateFileError('remove', this.file, error)
    }
  }
}
