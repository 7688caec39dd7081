import {statSync} from 'node:fs'
import {dirname} from 'node:path'
import {z} from 'zod'
import {parseJsonSafely} from '../input/terminal-safe.js'
import {FailedError, RefusedError} from '../errors.js'
import type {FreezeRecord} from '../ports/control-plane.js'
import {MAX_LEASE_SECONDS, type JournalEntry, type JournalRead, type LockRecord} from '../ports/state-store.js'
import {controlKinds, type ControlIntent} from '../ports/controls.js'

/**
 * What sluice reads back from its state store is checked before anything uses it: a damaged
 * journal line, freeze record or lock record is reported as `FILE:LINE: what is wrong`, never
 * met later as a TypeError, and never skipped.
 */
export class DamagedStateError extends RefusedError {}

/** A state file sluice could not read or write: names the file, what it tried, and why. */
export class StateFileError extends FailedError {
  constructor(
    readonly file: string,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message)
  }
}

const uid = (): string => (typeof process.getuid === 'function' ? `uid ${process.getuid()}` : 'this user')

function ownerOf(path: string): string {
  for (const p of [path, dirname(path)]) {
    try {
      const s = statSync(p)
      return `; ${p} belongs to uid ${s.uid} with mode 0${(s.mode & 0o777).toString(8)}`
    } catch {
      // try the directory
    }
  }
  return ''
}

/** An fs error as a sentence that names the file and, for permissions, who needs what. */
export function stateFileError(what: string, file: string, error: unknown): Error {
  if (error instanceof StateFileError || !(error instanceof Error)) return error as Error
  const code = (error as NodeJS.ErrnoException).code
  const why: Record<string, string> = {
    EACCES: `permission denied (EACCES): ${uid()} needs read and write permission on it and on its directory${ownerOf(file)}`,
    EPERM: `operation not permitted (EPERM): ${uid()} needs read and write permission on it and on its directory${ownerOf(file)}`,
    ENOSPC: 'no space left on device (ENOSPC)',
    EDQUOT: 'disk quota exceeded (EDQUOT)',
    EROFS: 'the file system is read-only (EROFS)',
    ENOTDIR: `a part of its path is not a directory (ENOTDIR), or cannot be searched by ${uid()}${ownerOf(file)}`,
    EISDIR: 'it is a directory (EISDIR)',
    EIO: 'an I/O error (EIO)',
  }
  return new StateFileError(file, code, `cannot ${what} ${file}: ${code && why[code] ? why[code] : error.message}`)
}

const iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 time')
const int = z.number().int()

const mutation = z.looseObject({
  step: int,
  phase: z.enum(['intent', 'outcome']),
  kind: z.string(),
  resource: z.string(),
  ok: z.boolean().optional(),
  error: z.string().optional(),
})

/** What each kind of entry must carry; kinds sluice does not know need only the common fields. */
const bodies: Record<string, z.ZodType> = {
  'run-start': z
    .looseObject({
      runId: z.string(),
      runbookName: z.string(),
      runbookSha256: z.string(),
      operator: z.string(),
      host: z.string(),
      pid: int,
      resources: z.array(z.string()),
      // Since sluice asks STS who the run acts as; journals from before have none.
      identity: z.looseObject({account: z.string(), arn: z.string()}).optional(),
    })
    .refine((e) => (typeof e.runbookFile === 'string') !== (e.runbookInput !== undefined && e.runbookInput !== null), {
      message: 'expected the runbook it ran: a runbookFile (a path) or a runbookInput (the input its flags made), one of the two',
      path: ['runbookFile'],
    }),
  resume: z.looseObject({operator: z.string(), host: z.string(), fromStep: int}),
  plan: z.looseObject({runbook: z.string(), steps: z.array(z.unknown())}),
  'step-start': z.looseObject({step: int, title: z.string()}),
  baseline: z.looseObject({step: int, baseline: z.looseObject({})}),
  'step-end': z.looseObject({step: int, status: z.string(), message: z.string()}),
  mutation: z.looseObject({mutation}),
  verdict: z.looseObject({verdict: z.looseObject({})}),
  warning: z.looseObject({message: z.string()}),
  'run-end': z.looseObject({outcome: z.string(), message: z.string()}),
  'rollback-start': z.looseObject({operator: z.string(), host: z.string()}),
  'rollback-end': z.looseObject({}),
  'lock-broken': z.looseObject({resource: z.string(), lockId: z.string(), operator: z.string(), host: z.string()}),
}

const common = z.looseObject({seq: int.positive(), at: iso, type: z.string().min(1)})

function problem(error: z.ZodError): string {
  const issue = error.issues[0]
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''
  return `${where}${issue.message}`
}

/**
 * Change kinds earlier versions of sluice wrote, by what they are called now: a journal written
 * before a rename still resumes, rolls back and shows its changes under today's names.
 */
const renamedKinds: Record<string, string> = {'dns-weights': 'weights'}

/** One journal entry, checked: the message says what is wrong with it. */
export function checkEntry(value: unknown): JournalEntry | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `not a journal entry: expected a JSON object, got ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`
  const head = common.safeParse(value)
  if (!head.success) return `not a journal entry: ${problem(head.error)}`
  const body = bodies[head.data.type]?.safeParse(value)
  if (body && !body.success) return `a ${head.data.type} entry without what it needs: ${problem(body.error)}`
  const entry = value as JournalEntry
  const mutation = entry.mutation as {kind?: string} | undefined
  if (mutation?.kind !== undefined && Object.hasOwn(renamedKinds, mutation.kind)) return {...entry, mutation: {...mutation, kind: renamedKinds[mutation.kind]}}
  return entry
}

/**
 * Journal text, every line checked: JSON, a known shape, and numbered one after another. A last
 * line without its newline that does not parse is a torn write; anything else wrong is reported
 * as `source:LINE: what is wrong`. `from` reads a journal's tail: the entry number and line the
 * text follows on.
 */
export function parseJournal(source: string, text: string, from: {afterSeq: number; line: number} = {afterSeq: 0, line: 0}): JournalRead {
  const lines = text.split('\n')
  const last = lines.pop() ?? ''
  const entries: JournalEntry[] = []
  const take = (line: string, n: number): void => {
    let value: unknown
    try {
      value = parseJsonSafely(line)
    } catch {
      throw new DamagedStateError(`${source}:${n}: not JSON; the journal was changed after it was written`)
    }
    const entry = checkEntry(value)
    if (typeof entry === 'string') throw new DamagedStateError(`${source}:${n}: ${entry}`)
    const expected = (entries.at(-1)?.seq ?? from.afterSeq) + 1
    if (entry.seq !== expected)
      throw new DamagedStateError(
        `${source}:${n}: entry number ${entry.seq} where ${expected} was expected; two processes wrote this journal, or it was edited`,
      )
    entries.push(entry)
  }
  lines.forEach((line, i) => {
    if (line.trim() !== '') take(line, from.line + i + 1)
  })
  if (last === '') return {entries, torn: null}
  try {
    JSON.parse(last)
  } catch {
    return {entries, torn: {line: from.line + lines.length + 1, bytes: Buffer.byteLength(last), text: last.slice(0, 200)}}
  }
  // A complete entry written without its newline (unusual, but not a torn write).
  take(last, from.line + lines.length + 1)
  return {entries, torn: null}
}

/**
 * A journal begins with its run-start entry, written whole before anything else: an empty one,
 * or one that begins otherwise, is damaged at line 1 (not a run with nothing to say).
 */
export function checkStart(source: string, read: JournalRead): JournalRead {
  // A journal whose only line is torn is reported as torn, by whoever reads it for recovery.
  if (read.entries.length === 0 && read.torn) return read
  const first = read.entries[0]
  if (!first)
    throw new DamagedStateError(
      `${source}:1: the journal is empty; a run's journal begins with its run-start entry (it was emptied, or a crash cut it off as it was created)`,
    )
  if (first.type !== 'run-start') throw new DamagedStateError(`${source}:1: the journal begins with a ${first.type} entry, not run-start; it was edited or cut`)
  return read
}

const freezeSchema = z.looseObject({
  by: z.string(),
  reason: z.string(),
  since: iso,
  expires: iso.optional(),
  runId: z.string().optional(),
  byHand: z.boolean().optional(),
})

/** Where in the text a JSON.parse error points, as a line number. */
function lineOfJsonError(text: string, error: Error): number {
  const at = /position (\d+)/.exec(error.message)
  const offset = at ? Number(at[1]) : text.length
  return text.slice(0, offset).split('\n').length
}

/** A freeze record, checked. */
export function parseFreeze(source: string, text: string): FreezeRecord {
  let value: unknown
  try {
    value = parseJsonSafely(text)
  } catch (error) {
    throw new DamagedStateError(
      `${source}:${lineOfJsonError(text, error as Error)}: the freeze record is not JSON (${(error as Error).message}); \`sluice unfreeze --force\` clears it`,
    )
  }
  const record = freezeSchema.safeParse(value)
  if (!record.success) throw new DamagedStateError(`${source}:1: not a freeze record: ${problem(record.error)}; \`sluice unfreeze --force\` clears it`)
  return record.data
}

const lockSchema = z.looseObject({
  resource: z.string(),
  runId: z.string(),
  operator: z.string(),
  host: z.string(),
  since: z.string(),
  pid: int.optional(),
  heartbeat: z.string().optional(),
  leaseSeconds: z.number().positive().optional(),
  lockId: z.string().optional(),
  version: z.string().optional(),
  place: z.string().optional(),
  started: z.string().optional(),
  fence: z.number().int().nonnegative().optional(),
})

/**
 * A lock record. One that is damaged, or written before locks were leases, still counts as held
 * (by whoever is named, or 'unknown'), with a version made from its text: it expires like any
 * lease once nobody renews it.
 */
export function parseLock(resource: string, text: string, fingerprint: string, defaultLease: number): LockRecord {
  let value: unknown
  try {
    value = parseJsonSafely(text)
  } catch {
    value = null
  }
  const parsed = lockSchema.safeParse(value)
  const d = parsed.success ? parsed.data : {resource, runId: 'unknown', operator: 'unknown', host: 'unknown', since: 'unknown'}
  // A lease no sluice writes (once 1e12 s, which held a run "watching" for ever) is damage, not a
  // promise: judged by the reader's own lease, and said so wherever the lock is shown.
  const claimed = d.leaseSeconds
  const damaged =
    claimed !== undefined && claimed > MAX_LEASE_SECONDS
      ? `a lease of ${claimed} s, past the ${MAX_LEASE_SECONDS} s at most that sluice writes; judged by a ${defaultLease} s lease`
      : undefined
  return {
    resource: d.resource,
    runId: d.runId,
    operator: d.operator,
    host: d.host,
    since: d.since,
    pid: d.pid ?? 0,
    heartbeat: d.heartbeat ?? 'unknown',
    leaseSeconds: damaged || claimed === undefined ? defaultLease : claimed,
    ...(damaged ? {damaged} : {}),
    lockId: d.lockId ?? `legacy-${fingerprint.slice(0, 12)}`,
    version: d.version ?? fingerprint,
    ...(d.place === undefined ? {} : {place: d.place}),
    ...(d.started === undefined ? {} : {started: d.started}),
    // A record written before fencing has none: as good as the oldest.
    fence: d.fence ?? 0,
  }
}

const controlSchema = z.object({
  seq: int.positive(),
  kind: z.enum(controlKinds),
  at: iso,
  operator: z.string(),
  host: z.string(),
  pid: int,
  rollback: z.boolean().optional(),
  full: z.boolean().optional(),
})

/** A control record (`sluice pause`, `promote`, `abort`), checked. */
export function parseControl(source: string, text: string): ControlIntent {
  let value: unknown
  try {
    value = parseJsonSafely(text)
  } catch (error) {
    throw new DamagedStateError(`${source}:1: the control record is not JSON (${(error as Error).message})`)
  }
  const record = controlSchema.safeParse(value)
  if (!record.success) throw new DamagedStateError(`${source}:1: not a control record: ${problem(record.error)}`)
  return record.data
}
