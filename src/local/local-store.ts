import {closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import type {FreezePort} from '../ports/control-plane.js'
import {FreezeFile} from './freeze-file.js'
import {LockedError, parseJournal, type JournalEntry, type JournalRead, type LockHolder, type StateStore} from '../ports/state-store.js'

/** A resource name as a file name: readable, and safe for ARNs' slashes and colons. */
function lockFile(resource: string): string {
  return `${resource.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 180)}.json`
}

/**
 * State in a local directory (`./.sluice`): one append-only JSON-lines journal per run, fsynced
 * after every entry; one lock file per resource, created exclusively; the freeze record.
 */
export class LocalStore implements StateStore {
  readonly label: string
  readonly freeze: FreezePort

  constructor(readonly dir: string) {
    this.label = `local state ${dir}`
    this.freeze = new FreezeFile(dir)
  }

  private runsDir(): string {
    return join(this.dir, 'runs')
  }

  private locksDir(): string {
    return join(this.dir, 'locks')
  }

  async append(runId: string, entry: JournalEntry): Promise<void> {
    mkdirSync(this.runsDir(), {recursive: true})
    const fd = openSync(join(this.runsDir(), `${runId}.jsonl`), 'a')
    try {
      writeSync(fd, `${JSON.stringify(entry)}\n`)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
  }

  async read(runId: string): Promise<JournalRead> {
    let text: string
    try {
      text = readFileSync(join(this.runsDir(), `${runId}.jsonl`), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`no run ${runId} in ${this.label}`)
      throw error
    }
    return parseJournal(runId, text)
  }

  async runIds(): Promise<string[]> {
    try {
      return readdirSync(this.runsDir()).filter((f) => f.endsWith('.jsonl')).map((f) => f.slice(0, -'.jsonl'.length)).sort()
    } catch {
      return []
    }
  }

  private holderOf(resource: string): LockHolder | null {
    try {
      return JSON.parse(readFileSync(join(this.locksDir(), lockFile(resource)), 'utf8')) as LockHolder
    } catch {
      return null
    }
  }

  async acquire(resources: string[], holder: Omit<LockHolder, 'resource'>): Promise<void> {
    mkdirSync(this.locksDir(), {recursive: true})
    const taken: string[] = []
    for (const resource of resources) {
      const record: LockHolder = {...holder, resource}
      try {
        const fd = openSync(join(this.locksDir(), lockFile(resource)), 'wx')
        writeSync(fd, JSON.stringify(record))
        fsyncSync(fd)
        closeSync(fd)
        taken.push(resource)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const current = this.holderOf(resource)
        if (current?.runId === holder.runId) continue
        await this.release(taken, holder.runId)
        throw new LockedError(current ?? {...record, runId: 'unknown', operator: 'unknown', host: 'unknown', since: 'unknown'})
      }
    }
  }

  async release(resources: string[], runId: string): Promise<void> {
    for (const resource of resources) {
      if (this.holderOf(resource)?.runId === runId) rmSync(join(this.locksDir(), lockFile(resource)), {force: true})
    }
  }

  async breakLocks(runId: string): Promise<string[]> {
    let files: string[] = []
    try {
      files = readdirSync(this.locksDir())
    } catch {
      return []
    }
    const broken: string[] = []
    for (const f of files) {
      const path = join(this.locksDir(), f)
      try {
        const holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder
        if (holder.runId === runId) {
          rmSync(path, {force: true})
          broken.push(holder.resource)
        }
      } catch {
        // A lock file being written right now: not ours to judge.
      }
    }
    return broken
  }
}
