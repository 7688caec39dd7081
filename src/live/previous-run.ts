import {RefusedError} from '../errors.js'
import type {StateStore} from '../ports/state-store.js'
import {mutations, runStart, type RunStart} from '../state/journal.js'
import {leaseSeconds} from '../state/leases.js'
import {judgeRun, lifeLabel} from '../state/run-life.js'

/**
 * One run per runbook at a time. A new run of a runbook whose latest run never ended (it runs, or
 * its process died half-way) is refused: going again would redo changes over the half-done ones
 * and take the dead run's locks without anyone deciding to; a run that ended without changing
 * anything (a `--new-run` refused on a lock) does not hide the dead one before it. `--new-run` starts afresh anyway,
 * but only once that run's process is provably dead, and says so. Returns the run it supersedes.
 */
export async function checkPreviousRun(store: StateStore, runbookName: string, newRun: boolean, notify: (message: string) => void): Promise<string | null> {
  // Newest first: the latest run of this runbook that got as far as changing something decides.
  for (const runId of [...(await store.runIds())].reverse()) {
    let start: RunStart
    let read
    try {
      read = await store.read(runId)
      start = runStart(read)
    } catch {
      continue
    }
    if (start.runbookName !== runbookName) continue
    const by = `${start.operator} on ${start.host}`
    // A run writes its first entry before it takes its locks: one with nothing more, a lease old at
    // most, is starting, not dead (ten runs of one runbook started at once saw each other so).
    const age = Date.now() - Date.parse(read.entries[0].at)
    if (read.entries.length === 1 && age < leaseSeconds() * 1000)
      throw new RefusedError(
        `run ${runId} of ${runbookName} (by ${by}) is starting: one run per runbook at a time. \`sluice watch ${runId}\` follows it; \`sluice pause|promote|abort ${runId}\` control it`,
      )
    const life = await judgeRun(store, runId, read)
    // A run that ended having changed nothing (refused on a lock, not confirmed) settles nothing
    // about the runs before it: a dead run's half-done changes are still there to be dealt with.
    if (life.state === 'ended') {
      if (mutations(read).some((m) => m.outcome?.ok)) return null
      continue
    }
    if (life.state === 'running' || life.state === 'unknown')
      throw new RefusedError(
        `run ${runId} of ${runbookName} (by ${by}) is running: one run per runbook at a time. \`sluice watch ${runId}\` follows it; \`sluice pause|promote|abort ${runId}\` control it`,
      )
    if (!newRun)
      throw new RefusedError(
        `run ${runId} of ${runbookName} (by ${by}) never finished: its process is ${lifeLabel(life, read)}. ` +
          `\`sluice resume ${runId}\` continues it, \`sluice rollback ${runId}\` undoes what it changed (\`sluice journal ${runId}\` shows what that was); ` +
          `--new-run starts afresh over what it left`,
      )
    notify(
      `--new-run: run ${runId} of ${runbookName} (by ${by}) never finished and its process is ${lifeLabel(life, read)}; starting a new run over what it left (its journal stays, for \`sluice rollback ${runId}\`)`,
    )
    return runId
  }
  return null
}
