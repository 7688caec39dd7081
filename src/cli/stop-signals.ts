import {exitCodeOf} from './exit-codes.js'

/**
 * The signals that stop a run at its next safe point: Ctrl-C, SIGTERM (what `kill`, CI runners
 * and container stops send) and SIGHUP (a closed terminal or a dropped SSH session), each of which
 * otherwise ends the process at once, with the weights unjudged, the locks held, or the processes
 * a drill started still running.
 */
const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * Listens for the stop signals: the first aborts the returned signal, after saying `stopping` (what
 * happens now); a second one, of any of them, quits at once. Install it before anything draws
 * (listr2's cursor handling re-raises SIGINT when it is alone), and call `release` when done.
 */
export function onStopSignals(note: (text: string) => void, stopping: string): {signal: AbortSignal; release: () => void} {
  const controller = new AbortController()
  let interrupts = 0
  const onSignal = (signal: NodeJS.Signals) => {
    interrupts++
    if (interrupts > 1) process.exit(exitCodeOf('interrupted'))
    note(`${signal === 'SIGINT' ? 'interrupt' : signal}: ${stopping} (Ctrl-C again to quit at once)`)
    controller.abort()
  }
  for (const signal of stopSignals) process.on(signal, onSignal)
  return {signal: controller.signal, release: () => stopSignals.forEach((signal) => process.off(signal, onSignal))}
}
