import {controlName, formatEvent, formatMetric, mutationText, placeText, shortenArns, stepName, verdictMeasure} from '../format.js'
import type {ControlEffect, ControlIntent} from '../ports/controls.js'
import type {GateVerdict, Mutation} from '../ports/io.js'
import type {PoolPlace} from '../ports/pool-readings.js'
import type {JournalEntry, JournalRead, LockHolder, LockRecord} from '../ports/state-store.js'
import {eventOf, isOnWayBack, pauseInForce, runStart, runStatus} from '../state/journal.js'

// What `sluice serve`'s page shows of one run, made from its journal alone, in the words the
// terminal uses (src/format.ts): the same journal gives the same view, so a page that reconnects
// and draws the view again shows no row twice. Every string is text for the page to set as
// text, never markup.

export interface StepView {
  index: number
  /** "step 3", or "rollback" for the way back. */
  name: string
  title: string
  details: string[]
  state: 'waiting' | 'running' | 'done' | 'skipped' | 'stopped'
  /** The step's end in words (`HELD holding at 55% …`), once it ended. */
  end?: string
}

export interface ChangeView {
  seq: number
  at: string
  step: string
  kind: string
  resource: string
  /** The intent as the terminal says it; its outcome below. */
  text: string
  outcome: 'made' | 'failed' | 'unknown'
  error?: string
  /** The entry that last touched the row: its intent, then its outcome. */
  touched: number
}

export interface VerdictView {
  seq: number
  at: string
  step: string
  context: string
  gate: string
  outcome: GateVerdict['outcome']
  /** `0.40% of 1,203 requests`, or why there is no value. */
  measured: string
  value: number | null
  unit: string
  bound: number | null
  baseline: string | null
  requests: number | null
  why: string | null
}

export interface WeightsPoint {
  seq: number
  at: string
  /** Each key's share of the weight, in %. */
  shares: Record<string, number>
  resource: string
}

/** Where an assess step placed a pool on its map: the numbers, and the same in words. */
export interface PlacementView {
  seq: number
  at: string
  step: string
  pool: string
  text: string
  place: PoolPlace
}

export interface ControlView {
  seq: number
  at: string
  control: string
  by: string
  effect: ControlEffect
  did: string
}

/** What the list and the run's own page both say of a run. */
export interface RunHeader {
  runId: string
  runbook: string
  operator: string
  host: string
  startedAt: string
  /** How it ended, or running / unfinished: what the journal says (the server adds liveness). */
  status: string
  /** The last entry's number. */
  lastSeq: number
  /** Who paused it, while the pause is in force. */
  pausedBy: string | null
}

/** A lock as the page shows it: its holder and lease, not its record's version. */
export type LockRow = Pick<LockHolder, 'resource' | 'runId' | 'operator' | 'host' | 'pid' | 'since' | 'heartbeat' | 'leaseSeconds'>

export const lockRow = (l: LockHolder): LockRow => ({
  resource: l.resource,
  runId: l.runId,
  operator: l.operator,
  host: l.host,
  pid: l.pid,
  since: l.since,
  heartbeat: l.heartbeat,
  leaseSeconds: l.leaseSeconds,
})

/** What the journal says of a run at a glance: who started it, where it stands, who paused it. */
export function runHeader(runId: string, read: JournalRead): RunHeader {
  const start = runStart(read)
  const paused = pauseInForce(read)
  return {
    runId,
    runbook: start.runbookName,
    operator: start.operator,
    host: start.host,
    startedAt: read.entries[0].at,
    status: runStatus(read),
    lastSeq: read.entries.at(-1)?.seq ?? 0,
    pausedBy: paused ? `${paused.operator}@${paused.host} at ${paused.at}` : null,
  }
}

export interface RunView extends RunHeader {
  phase: 'forward' | 'back'
  steps: StepView[]
  /** Every line the terminal would have printed, in journal order, with its entry's number. */
  lines: Array<{seq: number; at: string; text: string}>
  changes: ChangeView[]
  verdicts: VerdictView[]
  weights: WeightsPoint[]
  controls: ControlView[]
  placements: PlacementView[]
  /** How many of each the run has journalled, when a view carries only the last of them. */
  counts: {lines: number; changes: number; verdicts: number; weights: number}
  locks: LockRow[]
  torn: string | null
}

const weightKinds = new Set(['weights', 'pool-weights'])

/**
 * What a view carries of a long run's journal: the last of each of its growing parts (a gate judged
 * every second for hours is tens of thousands of verdicts; a paced ramp left running makes
 * thousands of changes), so that what serve keeps and sends stays bounded however long the run.
 * `counts` says how many there were.
 */
export const viewKeeps = {lines: 500, verdicts: 2000, changes: 1000, weights: 2000}

/** Keeps the last `keep` of a list, trimmed now and then rather than at every entry: never past twice that. */
function bounded<T>(list: T[], keep: number): T[] {
  return list.length > 2 * keep ? list.slice(-keep) : list
}

/** Each key's share of a weights map, in %, or null when the value is not one. */
function sharesOf(value: unknown): Record<string, number> | null {
  if (typeof value !== 'object' || value === null) return null
  const entries = Object.entries(value as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number')
  const total = entries.reduce((sum, [, w]) => sum + w, 0)
  if (entries.length === 0) return null
  return Object.fromEntries(entries.map(([k, w]) => [k, total > 0 ? Math.round((w / total) * 1000) / 10 : 0]))
}

/** The entries that decide where a run stands: its start, each attempt's start and end, and every control. */
const decisive = new Set(['run-start', 'resume', 'rollback-start', 'run-end', 'rollback-end', 'control'])

/**
 * What a journal says of a run at a glance, kept as entries arrive rather than read whole each
 * time: the entries that decide its status, life and pause (few, however long the run), its last
 * entry and the step it is on. `read()` is a journal of just those, which every function that
 * judges a run from its journal reads alike.
 */
export class RunSummary {
  private readonly kept: JournalEntry[] = []
  private last: JournalEntry | null = null
  private torn: JournalRead['torn'] = null
  /** The step it is on, or was on when it ended. */
  step: string | null = null

  get lastSeq(): number {
    return this.last?.seq ?? 0
  }

  /** Takes the entries read after the last one it has. */
  add(read: JournalRead): void {
    for (const entry of read.entries) {
      if (entry.seq <= this.lastSeq) continue
      if (decisive.has(entry.type)) this.kept.push(entry)
      if (entry.type === 'step-start') this.step = `step ${Number(entry.step) + 1}: ${String(entry.title)}`
      this.last = entry
      this.entry(entry)
    }
    this.torn = read.torn
  }

  /** What a fold that keeps more takes from each entry. */
  protected entry(_entry: JournalEntry): void {}

  read(): JournalRead {
    const entries = this.last && this.kept.at(-1) !== this.last ? [...this.kept, this.last] : this.kept
    return {entries, torn: this.torn}
  }
}

/** The view of one run, folded entry by entry: a long run costs each look only what it wrote since. */
export class RunViewFold extends RunSummary {
  private readonly steps = new Map<number, StepView>()
  private lines: RunView['lines'] = []
  private changes: ChangeView[] = []
  private verdicts: VerdictView[] = []
  private weights: WeightsPoint[] = []
  private readonly counts = {lines: 0, changes: 0, verdicts: 0, weights: 0}
  private readonly controls: ControlView[] = []
  private readonly placements: PlacementView[] = []
  private readonly intents = new Map<string, ChangeView>()

  protected override entry(entry: JournalEntry): void {
    const event = eventOf(entry)
    for (const text of event ? formatEvent(event) : otherLines(entry)) {
      this.lines.push({seq: entry.seq, at: entry.at, text: shortenArns(text)})
      this.counts.lines++
    }
    this.lines = bounded(this.lines, viewKeeps.lines)
    if (!event) return
    switch (event.type) {
      case 'plan':
        // A resume writes the plan again: the steps keep what they did.
        for (const s of event.steps)
          this.steps.set(s.index, {
            ...(this.steps.get(s.index) ?? {state: 'waiting'}),
            index: s.index,
            name: stepName(s.index),
            title: s.title,
            details: s.details.map(shortenArns),
          })
        break
      case 'step-start': {
        const s = this.steps.get(event.step) ?? {index: event.step, name: stepName(event.step), title: event.title, details: [], state: 'waiting'}
        this.steps.set(event.step, {...s, state: 'running', end: undefined})
        break
      }
      case 'step-end': {
        const s = this.steps.get(event.step)
        const end = formatEvent(event)[0]?.replace(/^\[[^\]]+\] /, '')
        if (s) this.steps.set(event.step, {...s, state: event.status === 'done' ? 'done' : event.status === 'skipped' ? 'skipped' : 'stopped', end})
        break
      }
      case 'mutation': {
        const [changes, weights] = [this.changes.length, this.weights.length]
        change(entry, event.mutation, this.intents, this.changes, this.weights)
        this.counts.changes += this.changes.length - changes
        this.counts.weights += this.weights.length - weights
        this.changes = bounded(this.changes, viewKeeps.changes)
        this.weights = bounded(this.weights, viewKeeps.weights)
        break
      }
      case 'placement':
        this.placements.push({
          seq: entry.seq,
          at: entry.at,
          step: stepName(event.step),
          pool: event.pool,
          text: placeText(event.pool, event.place),
          place: event.place,
        })
        break
      case 'verdict':
        this.verdicts.push(verdictView(entry, event.verdict))
        this.counts.verdicts++
        this.verdicts = bounded(this.verdicts, viewKeeps.verdicts)
        break
      case 'control': {
        const c: ControlIntent = event.control
        this.controls.push({
          seq: entry.seq,
          at: entry.at,
          control: controlName(c),
          by: `${c.operator}@${c.host}`,
          effect: event.effect,
          did: event.did ?? event.effect,
        })
        break
      }
      default:
        break
    }
  }

  /** The view as it stands, with the locks its run holds. */
  view(runId: string, locks: LockRecord[]): RunView {
    const read = this.read()
    return {
      ...runHeader(runId, read),
      phase: isOnWayBack(read) ? 'back' : 'forward',
      steps: [...this.steps.values()].sort((a, b) => a.index - b.index).map((s) => ({...s})),
      lines: this.lines.slice(-viewKeeps.lines),
      changes: this.changes.slice(-viewKeeps.changes).map((c) => ({...c})),
      verdicts: this.verdicts.slice(-viewKeeps.verdicts),
      weights: this.weights.slice(-viewKeeps.weights),
      controls: [...this.controls],
      placements: [...this.placements],
      counts: {...this.counts},
      locks: locks.filter((l) => l.runId === runId).map(lockRow),
      torn: read.torn ? `line ${read.torn.line} of the journal was cut off mid-write (${read.torn.bytes} bytes)` : null,
    }
  }
}

/** The view of one run from its whole journal, with the locks its run holds. */
export function runView(runId: string, read: JournalRead, locks: LockRecord[]): RunView {
  const fold = new RunViewFold()
  fold.add(read)
  return fold.view(runId, locks)
}

/** A change's intent and its outcome as one row; weights changed are a point of the weights chart. */
function change(entry: JournalEntry, m: Mutation, intents: Map<string, ChangeView>, changes: ChangeView[], weights: WeightsPoint[]): void {
  const key = `${m.step}|${m.kind}|${m.resource}`
  if (m.phase === 'intent') {
    const row: ChangeView = {
      seq: entry.seq,
      at: entry.at,
      step: stepName(m.step),
      kind: m.kind,
      resource: shortenArns(m.resource),
      text: shortenArns(mutationText(m) ?? m.kind),
      outcome: 'unknown',
      touched: entry.seq,
    }
    intents.set(key, row)
    changes.push(row)
    return
  }
  const row = intents.get(key)
  intents.delete(key)
  if (row) {
    row.touched = entry.seq
    row.outcome = m.ok === false ? 'failed' : 'made'
    if (m.error) row.error = m.error
  }
  if (m.ok !== false && weightKinds.has(m.kind)) {
    const shares = sharesOf(m.after)
    if (shares) weights.push({seq: entry.seq, at: entry.at, shares, resource: shortenArns(m.resource)})
  }
}

function verdictView(entry: JournalEntry, v: GateVerdict): VerdictView {
  return {
    seq: entry.seq,
    at: entry.at,
    step: stepName(v.step),
    context: v.context,
    gate: v.gate,
    outcome: v.outcome,
    measured: verdictMeasure(v),
    value: v.value,
    unit: v.unit,
    // A counts verdict has no bound of one window's value: the line it is judged against is the baseline's rate plus the margin.
    bound: v.counts ? (v.baseline?.value == null ? null : v.baseline.value + v.counts.margin) : (v.bound ?? v.threshold),
    baseline: v.baseline
      ? `${v.baseline.of}: ${formatMetric(v.baseline.value, v.unit)}${v.baseline.requests == null ? '' : ` of ${v.baseline.requests} requests`}`
      : null,
    requests: v.requests ?? null,
    // A counts verdict says itself, numbers and all.
    why: v.said ?? v.why ?? null,
  }
}

const said = (value: unknown): string => (value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value))

/** The lines of entries that are not engine events: a run's start, a resume, a rollback, a lock broken. */
function otherLines(entry: JournalEntry): string[] {
  const who = typeof entry.operator === 'string' ? ` by ${entry.operator}${typeof entry.host === 'string' ? `@${entry.host}` : ''}` : ''
  switch (entry.type) {
    case 'run-start':
      return [`run ${said(entry.runId)} of ${said(entry.runbookName)} started${who}`]
    case 'resume':
      return [`resumed${who}`]
    case 'rollback-start':
      return [`rollback started${who}`]
    case 'rollback-end':
      return [`rollback ended: ${said(entry.outcome)} ${said(entry.message)}`.trimEnd()]
    default:
      return [`${entry.type}${who}`]
  }
}
