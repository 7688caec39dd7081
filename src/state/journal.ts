import {createHash} from 'node:crypto'
import {hostname, userInfo} from 'node:os'
import {escapeControls} from '../input/terminal-safe.js'
import type {ControlIntent, ControlSender} from '../ports/controls.js'
import type {Mutation, RecordedMutation, RunEvent, StepStatus} from '../ports/io.js'
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
  resources: string[]
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Appends a run's entries in order, numbering them; each is durable before the next is written. */
export class JournalWriter {
  private seq: number

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

  async write(type: string, data: Record<string, unknown>): Promise<void> {
    const entry: JournalEntry = {...data, seq: this.seq, at: new Date().toISOString(), type}
    await this.store.append(this.runId, entry)
    // Numbered on success only: an entry that could not be written leaves no gap.
    this.seq++
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
  const {seq: _seq, at: _at, clock, found: _found, ...data} = entry
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

/** rollback-held: a rollback stopped partway (a gate on the way back, or an interrupt); another rollback goes on. */
export type RunStatus = 'completed' | 'gate-failed' | 'held' | 'refused' | 'interrupted' | 'failed' | 'rolled-back' | 'rollback-held' | 'unfinished'

/** A run's status from its journal: its last end, or unfinished when it never ended (killed, or still going). */
export function runStatus(read: JournalRead): RunStatus {
  const ends = read.entries.filter((e) => e.type === 'run-end' || e.type === 'rollback-end')
  const last = ends.at(-1)
  if (!last) return 'unfinished'
  if (last.type === 'rollback-end') return last.outcome === 'held' || last.outcome === 'interrupted' ? 'rollback-held' : 'rolled-back'
  return last.outcome as RunStatus
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
    else if (e.effect === 'continued' || e.effect === 'aborting') paused = null
  }
  return paused
}

export function mutations(read: JournalRead): RecordedMutation[] {
  const out: RecordedMutation[] = []
  for (const e of read.entries) {
    if (e.type !== 'mutation') continue
    const m = e.mutation as Mutation
    if (m.phase === 'intent') out.push({...m, seq: e.seq, at: e.at})
    else {
      const open = [...out].reverse().find((x) => x.outcome === undefined && x.kind === m.kind && x.step === m.step)
      if (open) open.outcome = {ok: m.ok ?? false, error: m.error, ...(typeof e.found === 'string' ? {found: e.found} : {})}
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
