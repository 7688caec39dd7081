import {createHash, randomBytes} from 'node:crypto'
import {
  closeSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import {join} from 'node:path'
import type {FreezePort} from '../ports/control-plane.js'
import {FreezeFile} from './freeze-file.js'
import {code, privateDir, writePrivateFile} from './private-files.js'
import type {ControlIntent} from '../ports/controls.js'
import {RUN_ID_PATTERN, type JournalEntry, type JournalRead, type LockRecord} from '../ports/state-store.js'
import {fenceCheck, LeasingStore} from '../state/leases.js'
import {checkStart, DamagedStateError, parseControl, parseJournal, parseLock, stateFileError} from '../state/records.js'
import {processRuns} from '../platform/process-place.js'

/** A resource name as a file name: readable, and safe for ARNs' slashes and colons. */
function lockFile(resource: string): string {
  return `${resource.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 180)}.json`
}

/**
 * State in a local directory (`~/.local/state/sluice` by default, 0700, files 0600): one append-only JSON-lines journal
 * per run, fsynced after every entry, each entry written whole or not at all; one lock file per
 * resource, created exclusively and renewed by rewriting it atomically with a new version; the
 * freeze record.
 */
export class LocalStore extends LeasingStore {
  readonly label: string
  readonly freeze: FreezePort
  /** How long each journal was after this process last wrote it, and its last entry: anyone else's write shows. */
  private readonly written = new Map<string, {bytes: number; seq: number}>()
  /**
   * Where this process's last few reads of each journal stopped, for a follower's next look: a
   * few, since two followers of one run (the list's and its page's) stop at different entries.
   */
  private readonly readTo = new Map<string, Array<{seq: number; offset: number; line: number}>>()

  constructor(readonly dir: string) {
    super()
    this.label = `local state ${dir}`
    this.freeze = this.fencedFreeze(new FreezeFile(dir))
  }

  private runsDir(): string {
    return join(this.dir, 'runs')
  }

  private locksDir(): string {
    return join(this.dir, 'locks')
  }

  private journalFile(runId: string): string {
    return join(this.runsDir(), `${runId}.jsonl`)
  }

  protected async appendEntry(runId: string, entry: JournalEntry, holder: LockRecord | null): Promise<void> {
    privateDir(this.dir)
    privateDir(this.runsDir())
    const file = this.journalFile(runId)
    // The lock file read just before the write, in the same turn of the event loop: a holder whose
    // lock was taken while it was stopped finds another's token there, and writes nothing.
    if (holder) fenceCheck(holder, await this.readLock(holder.resource))
    let fd: number
    try {
      fd = openSync(file, entry.seq === 1 ? 'wx' : 'r+', 0o600)
    } catch (error) {
      if (code(error) === 'EEXIST') throw new DamagedStateError(`${file}: a journal for run ${runId} exists already; another process started this run`)
      if (code(error) === 'ENOENT') throw new DamagedStateError(`${file}: the journal of run ${runId} is gone`)
      throw stateFileError('open', file, error)
    }
    try {
      if (entry.seq === 1) fchmodSync(fd, 0o600)
      const before = fstatSync(fd).size
      const known = this.written.get(runId)
      if (known === undefined ? entry.seq > 1 && !this.followsOn(file, entry.seq) : known.bytes !== before)
        throw new DamagedStateError(
          `${file}: changed by another process since this one wrote entry ${entry.seq - 1}; stopped so as not to interleave two runs' entries`,
        )
      // As the team stores refuse a number that is taken: entries go one after another.
      if (known !== undefined && entry.seq !== known.seq + 1)
        throw new DamagedStateError(
          `${file}: the journal already has entry ${known.seq}, so the next is ${known.seq + 1}, not ${entry.seq}; another process is writing this run`,
        )
      const line = Buffer.from(`${JSON.stringify(entry)}\n`)
      try {
        // One write of the whole line; if it fails part-way the file goes back to its old length,
        // so a journal never holds a line sluice tore itself.
        const n = writeSync(fd, line, 0, line.length, before)
        if (n !== line.length) throw Object.assign(new Error(`wrote ${n} of ${line.length} bytes`), {code: 'ENOSPC'})
        fsyncSync(fd)
      } catch (error) {
        try {
          ftruncateSync(fd, before)
          fsyncSync(fd)
          // A first entry that could not be written leaves no journal at all.
          if (entry.seq === 1) rmSync(file, {force: true})
        } catch {
          // Nothing more to do: the reader reports a torn last line.
        }
        throw stateFileError(`append entry ${entry.seq} to`, file, error)
      }
      this.written.set(runId, {bytes: before + line.length, seq: entry.seq})
    } finally {
      closeSync(fd)
    }
  }

  /** Whether the journal's last entry is the one before `seq`. */
  private followsOn(file: string, seq: number): boolean {
    const read = parseJournal(file, this.readText(file) ?? '')
    return !read.torn && (read.entries.at(-1)?.seq ?? 0) === seq - 1
  }

  private readText(file: string): string | null {
    try {
      return readFileSync(file, 'utf8')
    } catch (error) {
      if (code(error) === 'ENOENT') return null
      throw stateFileError('read', file, error)
    }
  }

  protected async readJournal(runId: string): Promise<JournalRead | null> {
    const file = this.journalFile(runId)
    const text = this.readText(file)
    if (text === null) return null
    const read = checkStart(file, parseJournal(file, text))
    this.remember(runId, read, text)
    return read
  }

  /**
   * A journal's tail from where this process last read it to (its byte offset, entry number and
   * line), when the caller asks after that entry: a follower's look reads only what was appended.
   * Anything else (another entry asked after, a file shorter than before) reads it whole.
   */
  protected async readJournalAfter(runId: string, afterSeq: number): Promise<JournalRead | null> {
    const file = this.journalFile(runId)
    const mark = this.readTo.get(runId)?.find((m) => m.seq === afterSeq)
    if (mark) {
      let fd: number
      try {
        fd = openSync(file, 'r')
      } catch (error) {
        if (code(error) === 'ENOENT') return null
        throw stateFileError('read', file, error)
      }
      try {
        const size = fstatSync(fd).size
        if (size >= mark.offset) {
          const tail = Buffer.alloc(size - mark.offset)
          let got = 0
          while (got < tail.length) {
            const n = readSync(fd, tail, got, tail.length - got, mark.offset + got)
            if (n === 0) break
            got += n
          }
          const text = tail.subarray(0, got).toString('utf8')
          const read = parseJournal(file, text, {afterSeq, line: mark.line})
          this.remember(runId, read, text, mark)
          return read
        }
      } finally {
        closeSync(fd)
      }
    }
    const whole = await this.readJournal(runId)
    return whole && {...whole, entries: whole.entries.filter((e) => e.seq > afterSeq)}
  }

  /**
   * Where a read of a journal stopped: after its last whole line, so a torn one is read again next
   * time. A last entry with no newline (written by something else) is not a place to go on from.
   */
  private remember(runId: string, read: JournalRead, text: string, before = {seq: 0, offset: 0, line: 0}): void {
    const whole = read.torn ? text.slice(0, text.lastIndexOf('\n') + 1) : text
    if (!read.torn && !text.endsWith('\n') && text !== '') return
    const lines = whole.split('\n').length - 1
    const mark = {seq: read.entries.at(-1)?.seq ?? before.seq, offset: before.offset + Buffer.byteLength(whole), line: before.line + lines}
    const marks = (this.readTo.get(runId) ?? []).filter((m) => m.seq !== mark.seq)
    this.readTo.set(runId, [mark, ...marks].slice(0, 8))
  }

  async runIds(): Promise<string[]> {
    let files: string[]
    try {
      files = readdirSync(this.runsDir())
    } catch (error) {
      if (code(error) === 'ENOENT') return []
      throw stateFileError('list', this.runsDir(), error)
    }
    return files
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length))
      .filter((id) => RUN_ID_PATTERN.test(id))
      .sort()
  }

  private lockPath(resource: string): string {
    return join(this.locksDir(), lockFile(resource))
  }

  private parse(resource: string, text: string): LockRecord {
    return parseLock(resource, text, createHash('sha256').update(text).digest('hex'), this.lease)
  }

  protected async createLock(record: LockRecord): Promise<boolean> {
    privateDir(this.dir)
    privateDir(this.locksDir())
    try {
      writePrivateFile(this.lockPath(record.resource), JSON.stringify(record), 'wx')
      return true
    } catch (error) {
      if ((error as {code?: string}).code === 'EEXIST') return false
      throw error
    }
  }

  protected async readLock(resource: string): Promise<LockRecord | null> {
    const text = this.readText(this.lockPath(resource))
    return text === null ? null : this.parse(resource, text)
  }

  /**
   * Takes the lock file out of the way by renaming it (only one process can), then keeps it out
   * only if it is still at `version`; otherwise puts it back. Returns the claimed path, or null.
   */
  private claim(resource: string, version: string): string | null {
    const path = this.lockPath(resource)
    const claimed = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.claim`
    try {
      renameSync(path, claimed)
    } catch (error) {
      if (code(error) === 'ENOENT') return null
      throw stateFileError('claim the lock', path, error)
    }
    const text = this.readText(claimed) ?? ''
    if (this.parse(resource, text).version === version) return claimed
    try {
      linkSync(claimed, path)
    } catch {
      // Someone created a new lock meanwhile: theirs stands.
    }
    rmSync(claimed, {force: true})
    return null
  }

  protected async replaceLock(record: LockRecord, version: string): Promise<boolean> {
    const current = await this.readLock(record.resource)
    if (current?.version !== version) return false
    if (current.lockId === record.lockId) {
      // A renewal: a new version written beside it and renamed over it, so a reader never sees half.
      const path = this.lockPath(record.resource)
      const tmp = `${path}.${process.pid}.tmp`
      writePrivateFile(tmp, JSON.stringify(record))
      try {
        renameSync(tmp, path)
      } catch (error) {
        rmSync(tmp, {force: true})
        throw stateFileError('renew the lock', path, error)
      }
      return true
    }
    // A takeover: claim the unrenewed record, then create ours exclusively.
    const claimed = this.claim(record.resource, version)
    if (!claimed) return false
    rmSync(claimed, {force: true})
    return this.createLock(record)
  }

  protected async removeLock(resource: string, version: string): Promise<boolean> {
    const claimed = this.claim(resource, version)
    if (!claimed) return false
    rmSync(claimed, {force: true})
    return true
  }

  protected async listLocks(): Promise<LockRecord[]> {
    return this.readLocks(true)
  }

  /** The locks as they are, removing nothing: for a reader that must not write (shell completion). */
  async peekLocks(): Promise<LockRecord[]> {
    return this.readLocks(false)
  }

  private readLocks(sweep: boolean): LockRecord[] {
    let files: string[]
    try {
      files = readdirSync(this.locksDir())
    } catch (error) {
      if (code(error) === 'ENOENT') return []
      throw stateFileError('list', this.locksDir(), error)
    }
    if (sweep) this.sweepLeftovers(files)
    const out: LockRecord[] = []
    for (const f of files.filter((name) => name.endsWith('.json'))) {
      const text = this.readText(join(this.locksDir(), f))
      if (text !== null) out.push(this.parse(f.slice(0, -'.json'.length), text))
    }
    return out.sort((a, b) => a.resource.localeCompare(b.resource))
  }

  /**
   * Removes what a process killed between two steps of a lock change left behind: a renewal's
   * `LOCK.json.PID.tmp` or a takeover's `LOCK.json.PID.HEX.claim`. Only when that pid no longer
   * runs here and the file is older than any change takes (ten minutes), so a process on another
   * host sharing this directory is never cut off mid-change.
   */
  private sweepLeftovers(files: string[]): void {
    const now = Date.now()
    for (const f of files) {
      const m = /\.json\.(\d+)(?:\.[0-9a-f]+\.claim|\.tmp)$/.exec(f)
      if (!m || processRuns(Number(m[1]))) continue
      const file = join(this.locksDir(), f)
      try {
        if (now - statSync(file).mtimeMs > 10 * 60_000) rmSync(file, {force: true})
      } catch {
        // Gone already, or not ours to remove: it stays, and harms nothing.
      }
    }
  }

  /** A run's controls: one file per control, `controls/RUN/SEQ.json`, created exclusively. */
  private controlsDir(runId: string): string {
    return join(this.dir, 'controls', runId)
  }

  protected async createControl(runId: string, control: ControlIntent): Promise<boolean> {
    privateDir(this.dir)
    privateDir(join(this.dir, 'controls'))
    privateDir(this.controlsDir(runId))
    const file = join(this.controlsDir(runId), `${String(control.seq).padStart(6, '0')}.json`)
    try {
      writePrivateFile(file, JSON.stringify(control), 'wx')
      return true
    } catch (error) {
      if (code(error) === 'EEXIST') return false
      throw stateFileError('write', file, error)
    }
  }

  protected async listControls(runId: string): Promise<ControlIntent[]> {
    let files: string[]
    try {
      files = readdirSync(this.controlsDir(runId))
    } catch (error) {
      if (code(error) === 'ENOENT') return []
      throw stateFileError('list', this.controlsDir(runId), error)
    }
    const out: ControlIntent[] = []
    for (const f of files.filter((name) => /^\d+\.json$/.test(name)).sort()) {
      const file = join(this.controlsDir(runId), f)
      const text = this.readText(file)
      if (text !== null) out.push(parseControl(file, text))
    }
    return out.sort((a, b) => a.seq - b.seq)
  }
}
