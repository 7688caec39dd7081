import type {Outcome} from '../errors.js'
import type {DrillReport} from '../drill/report.js'
import type {DrillScales} from '../drill/scale.js'
import {onStopSignals} from './stop-signals.js'
import {StatusLine} from './terminal/status-line.js'

/**
 * `sluice drill` for the command: finds HAProxy on the PATH (exit 2 without it), shows progress
 * on stderr (one redrawn line, and the runbook's steps as lines), stops at Ctrl-C, SIGTERM or
 * SIGHUP with every process it started stopped (a second signal quits at once; HAProxy and the
 * fleet go with this process), and returns the report with the outcome that decides the exit code.
 */
export async function runDrillCommand(
  ref: string,
  options: {setup?: string; scales: Partial<DrillScales>; queueSeconds?: number; json: boolean; note: (text: string) => void},
): Promise<{drill: DrillReport; outcome: Outcome}> {
  const [{loadDrillTarget}, {drillHaproxyBinary, runDrill}, {TerminalIO, chooseMode}] = await Promise.all([
    import('../wiring/drill-target.js'),
    import('../wiring/drill.js'),
    import('./terminal/terminal-io.js'),
  ])
  const haproxy = drillHaproxyBinary()
  const target = loadDrillTarget(ref, options.setup)
  const mode = chooseMode({json: options.json})
  const status = mode === 'silent' ? undefined : new StatusLine((text) => process.stderr.write(text), mode === 'tty')
  // The runbook's steps as lines: a redrawn task list would fight the drill's own progress line.
  const io = new TerminalIO({mode: mode === 'silent' ? 'silent' : 'lines', yes: true, interactive: false, clock: 'wall'})
  const stop = onStopSignals(options.note, 'stopping the drill and every process it started')
  let drill: DrillReport
  try {
    drill = await runDrill(target, {
      haproxy,
      scales: options.scales,
      ...(options.queueSeconds === undefined ? {} : {queueSeconds: options.queueSeconds}),
      signal: stop.signal,
      progress: (message) => status?.show(`drill: ${message}`),
      say: (line) => (status ? status.keep(line) : undefined),
      io,
    })
  } finally {
    stop.release()
    status?.end()
    await io.close()
  }
  const outcome: Outcome = drill.interrupted ? 'interrupted' : drill.real.runbook ? drill.real.runbook.outcome : 'completed'
  return {drill, outcome}
}
