import {mkdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import type {FreezePort, FreezeRecord} from '../ports/control-plane.js'

/**
 * The change freeze in a local state directory (`./.sluice` by default). Written to a temporary
 * file and renamed, so a reader never sees half a record.
 */
export class FreezeFile implements FreezePort {
  private readonly file: string

  constructor(readonly dir: string) {
    this.file = join(dir, 'freeze.json')
  }

  async get(): Promise<FreezeRecord | null> {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
    const record = JSON.parse(text) as FreezeRecord
    if (record.expires && Date.parse(record.expires) <= Date.now()) return null
    return record
  }

  async set(record: FreezeRecord): Promise<void> {
    mkdirSync(this.dir, {recursive: true})
    const tmp = `${this.file}.${process.pid}.tmp`
    writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`)
    renameSync(tmp, this.file)
  }

  async clear(): Promise<void> {
    rmSync(this.file, {force: true})
  }
}
