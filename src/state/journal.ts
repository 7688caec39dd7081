import {createHash} from 'node:crypto'
import {hostname, userInfo} from 'node:os'
import {escapeControls} from '../input/terminal-safe.js'
import type {ControlIntent, ControlSender} from '../ports/controls.js'
import type {BaselineTaken, Mutation, RecordedMutation, RunEvent, StepStatus} from '../ports/io.js'
import type {JournalEntry, JournalRead, StateStore} from '../ports/state-store.js'

/** What the first entry of a journal says about the run. */
export interface RunStart {
  runId: string
  /** The runbook file, for runs of `sluice run`; single-action commands keep their input instead. */
  runbookFile?: string
  runbookInput?: unknown
  runbookName: string
  /** sha256 of the runbook text, so a resume runs the same runbook. */
  runbookSha256: string
  operator: string
  host: string
  pid: number
  /** The AWS settings it ran with (never credentials). */
  aws: {region?: string; profile?: string; endpoint?: string}
  /** The account and principal its AWS calls acted as (STS GetCallerIdentity); absent for HAProxy runbooks and journals written before sluice asked. */
  identity?: {account: string; arn: string}
  resources: string[]
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Appends a run's entries in order, numbering them; each is durable before the next is written. */
export class JournalWriter {
  private seq: number
  private tail: Promise<void> = Promise.resolve()

  constructor(
    private readonly store: StateStore,
    readonly runId: string,
    nextSeq = 1,
  ) {
    this.seq = nextSeq
  }

  get nextSeq(): number {
    return this.seq
  }

  /**
   * Writes one entry once those before it are written: a control's entry, a verdict and a change
   * can come from different awaits, and each must get its own number, in order.
   */
  write(type: string, data: Record<string, unknown>): Promise<void> {
    const written = this.tail.then(async () => {
      const entry: JournalEntry = {...data, seq: this.seq, at: new Date().toISOString(), type}
      await this.store.append(this.runId, entry)
      // Numbered on success only: an entry that could not be written leaves no gap.
      this.seq++
    })
    this.tail = written.catch(() => undefined)
    return written
  }

  /**
   * Engine events as journal entries: who did what, before → after, every verdict, and what each
   * step is doing (its statuses and bakes), so that `sluice watch` shows from any machine what
   * the running terminal shows. eventOf() reads them back.
   */
  async record(event: RunEvent): Promise<void> {
    if (event.type === 'plan')
      return this.write('plan', {
        runbook: event.runbook,
        steps: event.steps.map((s) => ({index: s.index, action: s.action, title: s.title, details: s.details, ...(s.drift ? {drift: s.drift} : {})})),
      })
    // An event's `at` is the run's clock; the entry's own `at` is when it was written.
    const {type, ...rest} = event
    const {at, ...data} = rest as Record<string, unknown>
    return this.write(type, at === undefined ? data : {...data, clock: at})
  }
}

const eventTypes: ReadonlySet<string> = new Set<RunEvent['type']>([
  'plan',
  'placement',
  'baseline',
  'step-start',
  'progress',
  'bake',
  'verdict',
  'mutation',
  'warning',
  'step-end',
  'run-end',
  'control',
])

/**
 * A journal entry as the engine event it records (JournalWriter.record, reversed), or undefined
 * for entries that are not one (run-start, resume, rollback, lock-broken). Journals written before
 * plans kept their details read back with none.
 */
export function eventOf(entry: JournalEntry): RunEvent | undefined {
  if (!eventTypes.has(entry.type)) return undefined
  const {seq: _seq, at: _at, clock, found: _found, fence: _fence, ...data} = entry
  if (entry.type === 'plan') {
    const steps = (entry.steps as Array<{index: number; action: string; title: string; details?: string[]; drift?: string[]}>).map((s) => ({
      ...s,
      details: s.details ?? [],
    }))
    return {type: 'plan', runbook: String(entry.runbook), steps}
  }
  return (clock === undefined ? data : {...data, at: clock}) as unknown as RunEvent
}

export function runStart(read: JournalRead): RunStart {
  const first = read.entries[0]
  if (!first || first.type !== 'run-start') throw new Error('the journal does not begin with a run-start entry')
  return first as unknown as RunStart & JournalEntry
}

/**
 * A run's journal holds two kinds of attempt: forwards (its run-start, and each resume) and the
 * way back (each rollback-start). Each is closed by its own end (run-end, rollback-end); the last
 * attempt is what the run is doing now. docs/state.md draws the machine.
 */
export type Phase = 'forward' | 'back'

const opens: Record<string, Phase> = {'run-start': 'forward', resume: 'forward', 'rollback-start': 'back'}
const closes: Record<string, Phase> = {'run-end': 'forward', 'rollback-end': 'back'}

/** The run's last attempt, and its end when it has one: what the run is doing, or how it stopped. */
export function lastAttempt(read: JournalRead): {phase: Phase; start: JournalEntry | null; end: JournalEntry | null} {
  let phase: Phase = 'forward'
  let start: JournalEntry | null = null
  let end: JournalEntry | null = null
  for (const e of read.entries) {
    if (opens[e.type]) {
      phase = opens[e.type]
      start = e
      end = null
    } else if (closes[e.type]) {
      // An end closes the attempt of its own kind (a journal whose rollback-start was lost still ends rolled back).
      phase = closes[e.type]
      end = e
    }
  }
  return {phase, start, end}
}

/**
 * rolling-back: a rollback started and has not ended (it runs, or its process died); `sluice
 * resume` or `sluice rollback` goes on with it, never forwards. rollback-held: a rollback stopped
 * partway (a gate on the way back, a pause's abort, an interrupt); it too goes on only backwards.
 */
export type RunStatus =
  'completed' | 'gate-failed' | 'held' | 'refused' | 'interrupted' | 'failed' | 'rolled-back' | 'rollback-held' | 'rolling-back' | 'unfinished'

/** A run's status from its journal: how its last attempt ended, or unfinished / rolling-back while it has not (killed, or still going). */
export function runStatus(read: JournalRead): RunStatus {
  const {phase, end} = lastAttempt(read)
  if (phase === 'back') {
    if (!end) return 'rolling-back'
    return end.outcome === 'held' || end.outcome === 'interrupted' ? 'rollback-held' : 'rolled-back'
  }
  return end ? (end.outcome as RunStatus) : 'unfinished'
}

/**
 * Whether the run has started on its way back: a rollback started, or the run took an abort sent
 * by `abort --rollback` (whose rollback may have died before it could begin). From then on it
 * never goes forwards again.
 */
export function isOnWayBack(read: JournalRead): boolean {
  return read.entries.some(
    (e) => e.type === 'rollback-start' || (e.type === 'control' && e.effect === 'aborting' && (e.control as ControlIntent | undefined)?.rollback === true),
  )
}

/**
 * The baseline a step's gate relative to before measured before the last change the step made,
 * if the journal has one: a resume that finds that change made judges its bake against it. A
 * baseline with no change after it (the run died while watching) is not: the resume watches again.
 */
export function baselineBeforeLastChange(read: JournalRead, step: number): BaselineTaken | undefined {
  let taken: BaselineTaken | undefined
  let pending: BaselineTaken | undefined
  for (const e of read.entries) {
    if (e.type === 'baseline' && e.step === step) pending = e.baseline as BaselineTaken
    else if (e.type === 'mutation' && pending && (e.mutation as Mutation).step === step && (e.mutation as Mutation).phase === 'intent') {
      taken = pending
      pending = undefined
    }
  }
  return taken
}

/**
 * The pause a run was under when its journal stops, if any: a run that stopped (or died) while
 * paused resumes paused, so a crash never turns a pause into a go.
 */
export function pauseInForce(read: JournalRead): (ControlSender & {at: string}) | null {
  let paused: (ControlSender & {at: string}) | null = null
  for (const e of read.entries) {
    if (e.type !== 'control') continue
    const c = e.control as ControlIntent
    if (e.effect === 'paused') paused = {operator: c.operator, host: c.host, pid: c.pid, at: c.at}
    // A promote --full continues a pause as a promote does.
    else if (e.effect === 'continued' || e.effect === 'promoted fully' || e.effect === 'aborting') paused = null
  }
  return paused
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

export function mutations(read: JournalRead): RecordedMutation[] {
  const out: RecordedMutation[] = []
  for (const e of read.entries) {
    if (e.type !== 'mutation') continue
    const m = e.mutation as Mutation
    if (m.phase === 'intent') out.push({...m, seq: e.seq, at: e.at})
    else {
      // Changes of one step can be in flight together (a batch's hooks): an outcome is its own intent's.
      const open = [...out]
        .reverse()
        .find(
          (x) =>
            x.outcome === undefined &&
            x.kind === m.kind &&
            x.step === m.step &&
            x.resource === m.resource &&
            (m.after === undefined || sameJson(x.after, m.after)) &&
            (m.before === undefined || sameJson(x.before, m.before)),
        )
      if (open)
        open.outcome = {
          ok: m.ok ?? false,
          error: m.error,
          ...(typeof e.found === 'string' ? {found: e.found} : {}),
          ...(m.note ? {note: m.note} : {}),
          ...(m.produced ? {produced: m.produced} : {}),
        }
    }
  }
  return out
}

/** The step a resume starts at: the first whose last end was not 'done'. */
export function firstUnfinishedStep(read: JournalRead, steps: number): number {
  const status = new Map<number, StepStatus>()
  for (const e of read.entries) if (e.type === 'step-end') status.set(e.step as number, e.status as StepStatus)
  for (let i = 0; i < steps; i++) if (status.get(i) !== 'done') return i
  return steps
}

export const thisHost = escapeControls(hostname())

/** Who is operating: $SLUICE_OPERATOR, else the user; written into journals, locks and the freeze, so made terminal-safe. */
export function operatorName(): string {
  try {
    return escapeControls(process.env.SLUICE_OPERATOR ?? userInfo().username)
  } catch {
    return 'unknown'
  }
}
