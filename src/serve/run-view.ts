import {controlName, formatEvent, formatMetric, mutationText, shortenArns, stepName, verdictMeasure} from '../format.js'
import type {ControlEffect, ControlIntent} from '../ports/controls.js'
import type {GateVerdict, Mutation} from '../ports/io.js'
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
  locks: LockRow[]
  torn: string | null
}

const weightKinds = new Set(['weights', 'pool-weights'])

/**
 * What a view carries of a long run's journal: its last lines and verdicts (a gate judged every
 * second for hours is tens of thousands), so that what is sent at every entry stays bounded. Every
 * change and weight is kept: a run makes few.
 */
export const viewKeeps = {lines: 500, verdicts: 2000}

/** Each key's share of a weights map, in %, or null when the value is not one. */
function sharesOf(value: unknown): Record<string, number> | null {
  if (typeof value !== 'object' || value === null) return null
  const entries = Object.entries(value as Record<string, unknown>).filter((e): e is [string, number] => typeof e[1] === 'number')
  const total = entries.reduce((sum, [, w]) => sum + w, 0)
  if (entries.length === 0) return null
  return Object.fromEntries(entries.map(([k, w]) => [k, total > 0 ? Math.round((w / total) * 1000) / 10 : 0]))
}

/** The view of one run from its journal, with the locks its run holds. */
export function runView(runId: string, read: JournalRead, locks: LockRecord[]): RunView {
  const steps = new Map<number, StepView>()
  const lines: RunView['lines'] = []
  const changes: ChangeView[] = []
  const verdicts: VerdictView[] = []
  const weights: WeightsPoint[] = []
  const controls: ControlView[] = []
  const intents = new Map<string, ChangeView>()
  for (const entry of read.entries) {
    const event = eventOf(entry)
    for (const text of event ? formatEvent(event) : otherLines(entry)) lines.push({seq: entry.seq, at: entry.at, text: shortenArns(text)})
    if (!event) continue
    switch (event.type) {
      case 'plan':
        // A resume writes the plan again: the steps keep what they did.
        for (const s of event.steps)
          steps.set(s.index, {
            ...(steps.get(s.index) ?? {state: 'waiting'}),
            index: s.index,
            name: stepName(s.index),
            title: s.title,
            details: s.details.map(shortenArns),
          })
        break
      case 'step-start': {
        const s = steps.get(event.step) ?? {index: event.step, name: stepName(event.step), title: event.title, details: [], state: 'waiting'}
        steps.set(event.step, {...s, state: 'running', end: undefined})
        break
      }
      case 'step-end': {
        const s = steps.get(event.step)
        const end = formatEvent(event)[0]?.replace(/^\[[^\]]+\] /, '')
        if (s) steps.set(event.step, {...s, state: event.status === 'done' ? 'done' : event.status === 'skipped' ? 'skipped' : 'stopped', end})
        break
      }
      case 'mutation':
        change(entry, event.mutation, intents, changes, weights)
        break
      case 'verdict':
        verdicts.push(verdictView(entry, event.verdict))
        break
      case 'control': {
        const c: ControlIntent = event.control
        controls.push({
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
  return {
    ...runHeader(runId, read),
    phase: isOnWayBack(read) ? 'back' : 'forward',
    steps: [...steps.values()].sort((a, b) => a.index - b.index),
    lines: lines.slice(-viewKeeps.lines),
    changes,
    verdicts: verdicts.slice(-viewKeeps.verdicts),
    weights,
    controls,
    locks: locks.filter((l) => l.runId === runId).map(lockRow),
    torn: read.torn ? `line ${read.torn.line} of the journal was cut off mid-write (${read.torn.bytes} bytes)` : null,
  }
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
    }
    intents.set(key, row)
    changes.push(row)
    return
  }
  const row = intents.get(key)
  intents.delete(key)
  if (row) {
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
    bound: v.bound ?? v.threshold,
    baseline: v.baseline
      ? `${v.baseline.of}: ${formatMetric(v.baseline.value, v.unit)}${v.baseline.requests == null ? '' : ` of ${v.baseline.requests} requests`}`
      : null,
    requests: v.requests ?? null,
    why: v.why ?? null,
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
