import type {AwsOptions} from '../aws/clients.js'
import type {Outcome} from '../errors.js'
import type {RollbackResult} from '../live/rollback.js'
import type {StateStore} from '../ports/state-store.js'
import {operator} from './run-runbook.js'

/**
 * `sluice rollback` at a terminal, for `rollback` and `abort --rollback` alike: the plan shown and
 * asked about (--yes answers), Ctrl-C holding at the weights reached, each undo printed, and the
 * exit code of how it ended.
 */
export async function rollBackAtTerminal(
  store: StateStore,
  runId: string,
  aws: AwsOptions,
  options: {yes: boolean; now: boolean; fromLive?: boolean; ungated?: boolean; json: boolean},
  out: {log: (text: string) => void; endWith: (outcome: Outcome) => void},
): Promise<RollbackResult> {
  const [{rollbackRun}, {TerminalIO, chooseMode}, {onStopSignals}] = await Promise.all([
    import('../live/rollback.js'),
    import('./terminal/terminal-io.js'),
    import('./stop-signals.js'),
  ])
  const stop = onStopSignals((text) => process.stderr.write(`${text}\n`), 'holding at the weights reached')
  const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY)
  const io = new TerminalIO({mode: chooseMode({json: options.json}), yes: options.yes, interactive, stop: stop.signal})
  let result: RollbackResult
  try {
    result = await rollbackRun(store, runId, aws, io, operator(), {now: options.now, fromLive: options.fromLive, ungated: options.ungated, signal: stop.signal})
  } finally {
    stop.release()
    await io.close()
  }
  out.log(result.message)
  for (const u of result.undone) out.log(`  undone: ${u.describe}`)
  for (const why of result.leftAlone) out.log(`  left alone: ${why}`)
  for (const d of result.drift ?? []) out.log(`  not as the run left it: ${d}`)
  // Stopped at the question (a signal, a terminal that hung up): nothing was changed, and it was no person's no.
  if (result.outcome === 'refused') out.endWith(stop.signal.aborted ? 'interrupted' : 'refused')
  if (result.outcome === 'held') out.endWith('gate-failed')
  if (result.outcome === 'interrupted') out.endWith('interrupted')
  return result
}
