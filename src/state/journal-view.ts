import type {GateVerdict, Mutation} from '../ports/io.js'
import {mutationText, stepName, verdictText} from '../format.js'
import {runStatus, type RunStart} from './journal.js'
import type {ControlIntent} from '../ports/controls.js'
import type {JournalEntry, JournalRead, StateStore} from '../ports/state-store.js'

export interface RunListing {
  runId: string
  status: string
  runbook: string
  operator: string
  host: string
  startedAt: string
}

export async function listRuns(store: StateStore): Promise<RunListing[]> {
  const out: RunListing[] = []
  for (const runId of await store.runIds()) {
    try {
      const read = await store.read(runId)
      const start = read.entries[0] as unknown as RunStart & {at: string}
      out.push({runId, status: read.torn ? 'torn' : runStatus(read), runbook: start?.runbookName ?? '?', operator: start?.operator ?? '?', host: start?.host ?? '?', startedAt: start?.at ?? '?'})
    } catch (error) {
      out.push({runId, status: `unreadable: ${(error as Error).message}`, runbook: '?', operator: '?', host: '?', startedAt: '?'})
    }
  }
  return out
}

/** A run's timeline as a person reads it. */
export function describeJournal(runId: string, read: JournalRead): {status: string; lines: string[]} {
  const status = read.torn ? 'torn' : runStatus(read)
  const lines: string[] = []
  for (const e of read.entries) {
    const line = entryLine(runId, e)
    if (line !== null) lines.push(line)
  }
  if (read.torn) lines.push(`!!  line ${read.torn.line} is a torn write (${read.torn.bytes} bytes, cut off while it was written): ${JSON.stringify(read.torn.text.slice(0, 80))}`)
  lines.push(`status: ${status}`)
  return {status, lines}
}

/** One journal entry as a timeline line, or null for entries not worth one. */
export function entryLine(runId: string, e: JournalEntry): string | null {
  const lines: string[] = []
  {
    const time = e.at.slice(11, 19)
    switch (e.type) {
      case 'run-start':
        lines.push(`${time}  run ${runId} of ${e.runbookName} by ${e.operator} on ${e.host} (pid ${e.pid})`)
        break
      case 'resume':
        lines.push(`${time}  resumed by ${e.operator} on ${e.host} from ${stepName(e.fromStep as number)}`)
        break
      case 'step-start':
        lines.push(`${time}  ${stepName(e.step as number)} started: ${e.title}`)
        break
      case 'step-end':
        lines.push(`${time}  ${stepName(e.step as number)} ${e.status}: ${e.message}`)
        break
      case 'mutation': {
        // The journal keeps every outcome, so a success that the terminal passes over gets a line.
        const text = mutationText(e.mutation as Mutation) ?? 'done'
        lines.push(`${time}    ${text}${e.found ? ` (${e.found})` : ''}`)
        break
      }
      case 'verdict':
        lines.push(`${time}    ${verdictText(e.verdict as GateVerdict)}`)
        break
      case 'warning':
        lines.push(`${time}    warning: ${e.message}`)
        break
      case 'run-end':
        lines.push(`${time}  run ${e.outcome}: ${e.message}`)
        break
      case 'rollback-start':
        lines.push(`${time}  rollback by ${e.operator} on ${e.host}`)
        break
      case 'lock-broken':
        lines.push(`${time}  lock ${e.lockId} on ${e.resource} broken by ${e.operator} on ${e.host}`)
        break
      case 'rollback-end':
        lines.push(`${time}  rolled back`)
        break
      case 'control': {
        const c = e.control as ControlIntent
        lines.push(`${time}  ${c.kind} by ${c.operator} on ${c.host} (pid ${c.pid}): ${String(e.effect)}`)
        break
      }
      default:
        break
    }
  }
  return lines[0] ?? null
}
