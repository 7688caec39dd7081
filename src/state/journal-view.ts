import type {GateVerdict, Mutation} from '../ports/io.js'
import {mutationText, stepName, verdictText} from '../format.js'
import {runStatus, type RunStart} from './journal.js'
import type {JournalRead, StateStore} from '../ports/state-store.js'

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
      default:
        break
    }
  }
  if (read.torn) lines.push(`!!  line ${read.torn.line} is a torn write (${read.torn.bytes} bytes, cut off while it was written): ${JSON.stringify(read.torn.text.slice(0, 80))}`)
  lines.push(`status: ${status}`)
  return {status, lines}
}
