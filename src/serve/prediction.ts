import {existsSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {Worker} from 'node:worker_threads'
import {programFile} from '../program-file.js'
import {parseRunbook} from '../loader/load-runbook.js'
import type {Runbook} from '../loader/runbook.js'
import type {EngineIO} from '../ports/io.js'
import type {JournalRead} from '../ports/state-store.js'
import {rehearsalFigures} from '../report/rehearsal.js'
import {runStart, sha256} from '../state/journal.js'
import {rehearse} from '../wiring/rehearsal.js'

// What the rehearsal predicted for a run, beside what happened: the run's own runbook (the file
// its journal names, checked against the hash it started with) rehearsed from its start against
// its rehearsal scenario, once per run. The page draws its weights beside the observed ones.

export type Prediction =
  | {
      scenario: string
      outcome: string
      message: string
      /** Seconds from the runbook's start to its end, in the rehearsal. */
      seconds: number
      lostPercent: number
      /** Each pool's share of the weight, from the runbook's start (seconds). */
      weights: Array<{t: number; shares: Record<string, number>}>
    }
  | {none: string}

const shares = (weights: Record<string, number>): Record<string, number> => {
  const total = Object.values(weights).reduce((a, b) => a + b, 0)
  return Object.fromEntries(Object.entries(weights).map(([k, w]) => [k, total > 0 ? Math.round((w / total) * 1000) / 10 : 0]))
}

/**
 * The run's runbook, as it started, with a scenario to rehearse it against; or why there is none.
 * Cheap (a file read and a parse), so it is decided before any thread starts.
 */
function runbookToRehearse(read: JournalRead): {runbook: Runbook} | {none: string} {
  const start = runStart(read)
  if (!start.runbookFile) return {none: 'the run was started from flags, not a runbook file: there is no runbook to rehearse'}
  let text: string
  try {
    text = readFileSync(start.runbookFile, 'utf8')
  } catch {
    return {none: `its runbook ${start.runbookFile} cannot be read here (serve rehearses it from this machine)`}
  }
  if (sha256(text) !== start.runbookSha256)
    return {none: `its runbook ${start.runbookFile} has changed since the run started: a rehearsal of it would not be this run's`}
  const runbook = parseRunbook(start.runbookFile, text)
  if (!runbook.rehearsal?.scenario) return {none: `${runbook.name} names no rehearsal scenario to rehearse it against`}
  return {runbook}
}

/** The rehearsal of the run's runbook from its start, or why there is none. */
export async function predict(read: JournalRead): Promise<Prediction> {
  const found = runbookToRehearse(read)
  if ('none' in found) return found
  const {runbook} = found
  // Every weights change the rehearsal makes, as a run journals them: DNS weights and a load
  // balancer's own split alike (the rehearsal's report keeps only the first).
  const changes: Array<{at: number; after: Record<string, number>}> = []
  const asked = new Map<string, {at: number; after: unknown}>()
  const io: EngineIO = {
    confirm: async () => true,
    notify(event) {
      if (event.type !== 'mutation' || (event.mutation.kind !== 'weights' && event.mutation.kind !== 'pool-weights')) return
      const m = event.mutation
      const key = `${m.step}|${m.kind}|${m.resource}`
      if (m.phase === 'intent') asked.set(key, {at: event.at, after: m.after})
      else {
        const intent = asked.get(key)
        asked.delete(key)
        if (intent && m.ok !== false && typeof intent.after === 'object' && intent.after !== null)
          changes.push({at: intent.at, after: intent.after as Record<string, number>})
      }
    },
  }
  const {run, rehearsal} = await rehearse(
    runbook,
    {
      io,
      signal: new AbortController().signal,
      operator: 'sluice serve',
      approved: runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index),
    },
    {pace: null, seeds: 1},
  )
  return {
    scenario: rehearsal.scenario.name,
    outcome: run.outcome,
    message: run.message,
    seconds: Math.round(rehearsal.endAt - rehearsal.startAt),
    lostPercent: Math.round(rehearsalFigures(rehearsal).fromStart.lostPercent * 10) / 10,
    weights: changes.map((c) => ({t: Math.max(0, c.at - rehearsal.startAt), shares: shares(c.after)})),
  }
}

/**
 * The prediction worked out on a thread of its own (prediction-worker.js): a rehearsal takes
 * seconds of CPU, and on serve's own thread it would stop every page's stream while it ran.
 * From TypeScript (the tests), where there is no compiled worker, it runs here.
 */
export function predictApart(read: JournalRead, program = programFile('serve/prediction-worker.js')): Promise<Prediction> {
  // Only the run's start is needed, and only it crosses to the thread.
  const start: JournalRead = {entries: read.entries.slice(0, 1), torn: null}
  // A run with nothing to rehearse is answered here: a thread loads all of sluice first, a second
  // of CPU on a busy bastion, as the page opens.
  const found = runbookToRehearse(start)
  if ('none' in found) return Promise.resolve(found)
  if (!existsSync(fileURLToPath(program))) return predict(start)
  return new Promise((resolve) => {
    const worker = new Worker(program, {workerData: start})
    worker.once('message', (prediction: Prediction) => {
      resolve(prediction)
      void worker.terminate()
    })
    worker.once('error', (error) => resolve({none: `the rehearsal failed: ${error.message}`}))
    worker.once('exit', (code) => resolve({none: `the rehearsal's thread ended (exit ${code}) before it answered`}))
  })
}
