import {InputError} from '../errors.js'
import type {StateStore} from '../ports/state-store.js'
import {listRuns, type RunListing} from './journal-view.js'

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
  if (live.length === 0) throw new InputError(`no live run in ${storeLabel}; \`sluice journal\` lists the runs`)
  throw new InputError(`${live.length} live runs in ${storeLabel}: ${live.map(runLabel).join(', ')}; name one: \`sluice ${command} RUN\``)
}
