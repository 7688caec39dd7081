import {InputError, type Outcome} from '../errors.js'
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
  options: {
    setup?: string
    scales: Partial<DrillScales>
    queueSeconds?: number
    repeat: number
    seeds?: number
    rollback?: 'ramped' | 'now'
    settle?: number
    /** A scenario file or name to predict from (drill --model). */
    model?: string
    socket?: string
    json: boolean
    note: (text: string) => void
  },
): Promise<{drills: DrillReport[]; outcome: Outcome}> {
  const [{loadDrillTarget}, {drillHaproxyBinary, runDrill}, {TerminalIO, chooseMode}, {loadScenario}] = await Promise.all([
    import('../wiring/drill-target.js'),
    import('../wiring/drill.js'),
    import('./terminal/terminal-io.js'),
    import('../sim/scenario/load-scenario.js'),
  ])
  const haproxy = drillHaproxyBinary()
  const loaded = loadDrillTarget(ref, options.setup)
  // Not declared with oclif: whether TARGET is a runbook or a scenario is known only once it is loaded.
  if (options.rollback && loaded.kind !== 'runbook')
    throw new InputError(`--rollback: rolls back what a runbook changed, and ${ref} is a scenario; drill a runbook`)
  if (options.settle !== undefined && loaded.kind !== 'runbook')
    throw new InputError(`--settle: how long a drill runs on after its runbook ends, and ${ref} is a scenario, which runs its own duration; drill a runbook`)
  const target =
    loaded.kind === 'runbook'
      ? {...loaded, ...(options.rollback ? {rollback: options.rollback} : {}), ...(options.settle === undefined ? {} : {settle: options.settle})}
      : loaded
  const model = options.model === undefined ? undefined : {scenario: loadScenario(options.model, {}, '--model').scenario, name: options.model}
  const mode = chooseMode({json: options.json})
  const status = mode === 'silent' ? undefined : new StatusLine((text) => process.stderr.write(text), mode === 'tty')
  // The runbook's steps as lines: a redrawn task list would fight the drill's own progress line.
  const io = new TerminalIO({mode: mode === 'silent' ? 'silent' : 'lines', yes: true, interactive: false, clock: 'wall'})
  const stop = onStopSignals(options.note, 'stopping the drill and every process it started')
  const drills: DrillReport[] = []
  try {
    // Each repeat is a drill of its own from a clean start; the scales the first one chose hold for the rest.
    let scales = options.scales
    for (let i = 0; i < options.repeat && !stop.signal.aborted; i++) {
      const run = options.repeat > 1 ? `run ${i + 1} of ${options.repeat}: ` : ''
      const drill = await runDrill(target, {
        haproxy,
        scales,
        ...(options.queueSeconds === undefined ? {} : {queueSeconds: options.queueSeconds}),
        signal: stop.signal,
        run: i,
        ...(options.seeds === undefined ? {} : {seeds: options.seeds}),
        ...(model ? {model} : {}),
        ...(options.socket === undefined ? {} : {socket: options.socket}),
        progress: (message) => status?.show(`drill: ${run}${message}`),
        say: (line) => (status && i === 0 ? status.keep(line) : undefined),
        io,
      })
      drills.push(drill)
      scales = drill.scales
    }
  } finally {
    stop.release()
    status?.end()
    await io.close()
  }
  return {drills, outcome: outcomeOf(drills)}
}

/** A runbook's real runs decide the exit, as `sluice run` does: the first that did not complete; an interrupt above all. */
function outcomeOf(drills: DrillReport[]): Outcome {
  if (drills.some((d) => d.interrupted)) return 'interrupted'
  return drills.map((d) => d.real.runbook?.outcome ?? 'completed').find((o) => o !== 'completed') ?? 'completed'
}
