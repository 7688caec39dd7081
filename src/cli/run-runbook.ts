import {checkOutputName, writeOutput} from './output-file.js'
import type {StepResult} from '../engine/engine.js'
import {rehearsalFigures, rehearsalHtml, rehearsalSvg, renderLiveRun, renderRehearsal, renderSingleAction, type RehearsalFigures} from '../report/rehearsal.js'
import type {Runbook} from '../loader/runbook.js'
import {runIn, type Mode} from '../runner.js'
import {exitCodeOf} from './exit-codes.js'
import {operatorName} from '../state/journal.js'
import {openStateStore} from './state-store.js'
import {checkLockId} from '../state/leases.js'
import {onStopSignals} from './stop-signals.js'
import {
  awsOptionsOf,
  type awsFlags,
  type detachFlags,
  type FlagValues,
  type lockFlags,
  type rehearsalFlags,
  type reportFlags,
  type runFlags,
  type stateFlags,
} from './flags.js'
import {checkRunId} from '../ports/state-store.js'

/** What `--json` prints for `run` and the single-action commands. */
export interface RunJson {
  runbook: string
  mode: 'rehearsal' | 'live'
  /** The live run's id, for journal, resume and rollback; null for a rehearsal. */
  runId: string | null
  outcome: string
  exitCode: number
  message: string
  stoppedAt: {step: number; title: string; message: string} | null
  steps: StepResult[]
  /** Figures of the rehearsal; null for a live run. */
  report: RehearsalFigures | null
}

export interface Printer {
  log(text: string): void
  note(text: string): void
  color: boolean
}

export const operator = operatorName

type ModeFlags = Pick<FlagValues<typeof runFlags>, 'dry-run'> &
  Partial<FlagValues<typeof rehearsalFlags & typeof reportFlags & typeof awsFlags & typeof stateFlags & typeof lockFlags & typeof detachFlags>> & {
    'start-at'?: number
  }

/**
 * The one place a command's flags pick between a rehearsal and a live run. A flag only a
 * rehearsal reads needs --dry-run (rehearsalOnly in flags.ts): oclif has refused one given live.
 */
export function modeOf(flags: ModeFlags): Mode {
  if (flags['dry-run'])
    return {
      kind: 'rehearsal',
      scenario: flags.scenario,
      setup: flags.setup,
      pace: flags.pace ?? null,
      ...(flags.rollback ? {rollback: flags.rollback} : {}),
      ...(flags.randomness ? {randomness: flags.randomness} : {}),
      ...(flags.seeds ? {seeds: flags.seeds} : {}),
    }
  return {
    kind: 'live',
    aws: awsOptionsOf(flags),
    state: flags.state,
    // Checked here, so a mistyped lock id is bad input before anything else is looked at.
    breakLock: flags['break-lock'] === undefined ? undefined : checkLockId(flags['break-lock']),
    newRun: flags['new-run'],
    ...(flags['run-id'] === undefined ? {} : {runId: checkRunId(flags['run-id'])}),
  }
}

/**
 * Runs a runbook for a command: picks the terminal I/O, handles Ctrl-C, SIGTERM and SIGHUP (stop at a safe
 * point, not listr2's process.exit), runs it in the mode the flags chose, then prints the report.
 * The exit code is left in process.exitCode so --json still prints its result.
 */
export async function executeRunbook(
  runbook: Runbook,
  mode: Mode,
  options: {yes: boolean; json: boolean; approve?: string[]; svg?: string; html?: string; single?: {name: string; changesTraffic: boolean}},
  out: Printer,
): Promise<RunJson> {
  checkOutputName('--svg', options.svg)
  checkOutputName('--html', options.html)
  const {approvedSteps} = await import('../loader/approvals.js')
  const approved = approvedSteps(runbook, options.approve)
  const {TerminalIO, chooseMode} = await import('./terminal/terminal-io.js')
  // A live run says first which state store holds its journal, locks and freeze.
  if (mode.kind === 'live') await openStateStore(mode.state, mode.aws)
  const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY)
  const live = mode.kind === 'live'
  // A live run's notes (how to resume, where it stopped) go to stderr under --json too.
  const note = live ? (text: string) => void process.stderr.write(`${text}\n`) : (text: string) => out.note(text)
  // The first signal aborts the run: calls in flight are cut short, and the run stops at its next
  // safe point (a ramp goes back to its last good weights); a question still open is withdrawn.
  const stop = onStopSignals(note, 'stopping at the next safe point')
  const io = new TerminalIO({mode: chooseMode({json: options.json, live}), yes: options.yes, interactive, clock: live ? 'wall' : 'scenario', stop: stop.signal})
  let report
  try {
    report = await runIn(mode, runbook, {io, signal: stop.signal, operator: operator(), approved})
  } finally {
    stop.release()
    await io.close()
  }
  const {run, runId, rehearsal} = report
  if (run.outcome === 'interrupted') note(`interrupted: ${run.message}`)
  if (runId && run.outcome !== 'completed' && run.outcome !== 'refused')
    note(
      `run ${runId}: see what it did with \`sluice journal ${runId}\`; continue with \`sluice resume ${runId}\`, or undo it with \`sluice rollback ${runId}\``,
    )
  if (rehearsal) {
    if (options.svg) save(options.svg, '--svg', rehearsalSvg(rehearsal), out)
    if (options.html) save(options.html, '--html', rehearsalHtml(rehearsal), out)
  }
  if (!options.json) {
    const width = Math.max(40, Math.min(100, (process.stdout.columns ?? 100) - 16))
    // A single action rehearsed says what it does, not the scenario's whole story (--svg and --html still draw it).
    const text = !rehearsal
      ? renderLiveRun(run)
      : options.single
        ? renderSingleAction(rehearsal, options.single)
        : renderRehearsal(rehearsal, {color: out.color, width})
    out.log(text)
  }
  // A rehearsed rollback that held on a failing gate is what `sluice rollback` would exit 3 for.
  const shown = run.outcome === 'completed' && rehearsal?.rollback?.outcome === 'held' ? exitCodeOf('held') : exitCodeOf(run.outcome)
  // Over seeds, a seed that stopped (or whose rollback held) is what the rehearsal exits for when the one shown did not.
  const stopped = rehearsal?.overSeeds?.seeds.find((s) => s.outcome !== 'completed' || s.rollback === 'held')
  const exitCode = shown === 0 && stopped ? (stopped.outcome !== 'completed' ? exitCodeOf(stopped.outcome) : exitCodeOf('held')) : shown
  process.exitCode = exitCode
  return {
    runbook: run.runbook,
    mode: report.mode,
    runId,
    outcome: run.outcome,
    exitCode,
    message: run.message,
    stoppedAt: run.stoppedAt,
    steps: run.steps,
    report: rehearsal ? rehearsalFigures(rehearsal) : null,
  }
}

function save(file: string, flag: string, content: string, out: Printer): void {
  writeOutput(flag, file, content)
  out.note(`report saved to ${file}`)
}
