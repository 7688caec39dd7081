import {stepName} from '../format.js'
import {InputError} from '../errors.js'
import {escapeControls} from '../input/terminal-safe.js'
import type {JournalRead, StateStore} from '../ports/state-store.js'
import {listRuns, type RunListing} from './run-life.js'

/** How a run is named when sluice picks it or asks which: `ID (runbook, by operator@host)`. */
export function runLabel(run: RunListing): string {
  return `${run.runId} (${run.runbook}, by ${run.operator}@${run.host})`
}

/**
 * The run `sluice watch` or `sluice pause` means when given no RUN: the one run in the store
 * whose process is alive. Liveness is judged as `sluice journal` judges it: a run held on another
 * host is watched for up to one lease until it is known running or dead, so an `unfinished` run
 * never counts as live by default, nor is ignored while it may be. None, or several, is bad
 * input (exit 2) saying which runs there are and how to name one.
 */
export async function theLiveRun(store: StateStore, command: string, notify: (message: string) => void = () => undefined): Promise<RunListing> {
  return onlyLiveRun(await listRuns(store, notify), store.label, command)
}

/** The one `running` run among `runs`, or bad input naming what there is instead. */
export function onlyLiveRun(runs: RunListing[], storeLabel: string, command: string): RunListing {
  const live = runs.filter((r) => r.status === 'running')
  if (live.length === 1) return live[0]
  if (live.length === 0) throw noLiveRun(storeLabel)
  throw new InputError(`${live.length} live runs in ${storeLabel}: ${live.map(runLabel).join(', ')}; name one: \`sluice ${command} RUN\``)
}

function noLiveRun(storeLabel: string): InputError {
  return new InputError(`no live run in ${storeLabel}; \`sluice journal\` lists the runs`)
}

/**
 * What a command that never picks a run for the operator (`abort`: stopping a run is not undone
 * by a promote) says when given no RUN: always bad input (exit 2), naming the live runs as
 * `watch` and `pause` would find them, each with where it is, and how to name one; with none, as
 * they say it. The runs' journals are read once more for their steps.
 */
export async function nameTheRun(store: StateStore, command: string, notify: (message: string) => void = () => undefined): Promise<never> {
  const live = (await listRuns(store, notify)).filter((r) => r.status === 'running')
  if (live.length === 0) throw noLiveRun(store.label)
  const labels = await Promise.all(
    live.map(async (run) => {
      let where: string
      try {
        where = whereItIs(await store.read(run.runId))
      } catch {
        where = 'step unknown'
      }
      return `${run.runId} (${run.runbook}, by ${run.operator}@${run.host}, ${where})`
    }),
  )
  throw new InputError(
    `sluice ${command} needs RUN: it does not pick a run to ${command}; ${live.length === 1 ? '1 live run' : `${live.length} live runs`} in ${store.label}: ${labels.join(', ')}; name one: \`sluice ${command} RUN\``,
  )
}

/** Where a run is, by its journal: in the step it last started, after it once that step ended, or before its first. */
export function whereItIs(read: JournalRead): string {
  let step: {index: number; title: string; ended: boolean} | null = null
  for (const e of read.entries) {
    if (e.type === 'step-start') step = {index: Number(e.step), title: escapeControls(String(e.title)), ended: false}
    else if (e.type === 'step-end' && step && Number(e.step) === step.index) step.ended = true
  }
  if (!step) return 'before its first step'
  return `${step.ended ? 'after' : 'in'} ${stepName(step.index)}: ${step.title}`
}
