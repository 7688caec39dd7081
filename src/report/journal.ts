import type {BaselineTaken, GateVerdict, Mutation} from '../ports/io.js'
import {baselineText, controlName, mutationText, stepName, verdictText} from '../format.js'
import {formatTable} from './table.js'
import {runStatus} from '../state/journal.js'
import type {RunListing} from '../state/run-life.js'
import type {ControlIntent} from '../ports/controls.js'
import type {JournalEntry, JournalRead} from '../ports/state-store.js'

/**
 * `sluice journal`'s list, fitted to `width`: the run id whole (it is what every other command
 * takes, and it is the run's start, in UTC, to the second) and the status whole (`dead (pid N
 * gone)` is what tells an operator to resume or roll back); the runbook and who ran it where are
 * cut when the terminal is narrow. --json has every field whole.
 */
export function runsTable(runs: RunListing[], width: number): string {
  return formatTable(
    ['run (UTC start)', 'status', 'runbook', 'by'],
    runs.map((r) => [r.runId, r.detail ? `${r.status} (${r.detail})` : r.status, r.runbook, `${r.operator}@${r.host}`]),
    {width, free: [2, 3]},
  )
}

/** A run's timeline as a person reads it. */
export function describeJournal(runId: string, read: JournalRead): {status: string; lines: string[]} {
  const status = read.torn ? 'torn' : runStatus(read)
  const lines: string[] = []
  for (const e of read.entries) {
    const line = entryLine(runId, e)
    if (line !== null) lines.push(line)
  }
  if (read.torn)
    lines.push(
      `!!  line ${read.torn.line} is a torn write (${read.torn.bytes} bytes, cut off while it was written): ${JSON.stringify(read.torn.text.slice(0, 80))}`,
    )
  lines.push(`status: ${status}`)
  return {status, lines}
}

/** One journal entry as a timeline line, or null for entries not worth one. */
export function entryLine(runId: string, e: JournalEntry): string | null {
  const said = entryText(runId, e)
  return said === null ? null : `${e.at.slice(11, 19)}  ${said.detail ? '  ' : ''}${said.text}`
}

/** A field of a checked entry as text: the schema makes these strings and numbers; anything else is shown as JSON, never as [object Object]. */
function said(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** What a journal entry says, without its time; `detail` for what happens inside a step (a change, a verdict). */
export function entryText(runId: string, e: JournalEntry): {text: string; detail: boolean} | null {
  switch (e.type) {
    case 'run-start':
      return {text: `run ${runId} of ${said(e.runbookName)} by ${said(e.operator)} on ${said(e.host)} (pid ${said(e.pid)})`, detail: false}
    case 'resume':
      return {text: `resumed by ${said(e.operator)} on ${said(e.host)} from ${stepName(e.fromStep as number)}`, detail: false}
    case 'step-start':
      return {text: `${stepName(e.step as number)} started: ${said(e.title)}`, detail: false}
    case 'step-end':
      return {text: `${stepName(e.step as number)} ${said(e.status)}: ${said(e.message)}`, detail: false}
    case 'mutation':
      // The journal keeps every outcome, so a success that the terminal passes over gets a line.
      return {text: `${mutationText(e.mutation as Mutation) ?? 'done'}${e.found ? ` (${said(e.found)})` : ''}`, detail: true}
    case 'verdict':
      return {text: verdictText(e.verdict as GateVerdict), detail: true}
    case 'warning':
      return {text: `warning: ${said(e.message)}`, detail: true}
    case 'baseline':
      return {text: `baseline: ${baselineText(e.baseline as BaselineTaken)}`, detail: true}
    case 'run-end':
      return {text: `run ${said(e.outcome)}: ${said(e.message)}`, detail: false}
    case 'rollback-start':
      return {text: `rollback by ${said(e.operator)} on ${said(e.host)}`, detail: false}
    case 'lock-broken':
      return {text: `lock ${said(e.lockId)} on ${said(e.resource)} broken by ${said(e.operator)} on ${said(e.host)}`, detail: false}
    case 'rollback-end':
      return {text: 'rolled back', detail: false}
    case 'control': {
      const c = e.control as ControlIntent
      return {text: `${controlName(c)} by ${c.operator} on ${c.host} (pid ${c.pid}): ${said(e.did ?? e.effect)}`, detail: false}
    }
    default:
      return null
  }
}
