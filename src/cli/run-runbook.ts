import {writeFileSync} from 'node:fs'
import {userInfo} from 'node:os'
import type {RunResult, StepResult} from '../engine/engine.js'
import {InputError} from '../errors.js'
import {exitCodeOf} from './exit-codes.js'
import {rehearse, type Rehearsal} from '../rehearsal/rehearse.js'
import {rehearsalFigures, rehearsalHtml, rehearsalSvg, renderLiveRun, renderRehearsal, type RehearsalFigures} from '../report/rehearsal.js'
import {openStore} from '../state/open.js'
import type {LiveOptions} from '../live/run.js'
import type {Runbook} from '../runbook/load.js'

export interface RunFlags {
  dryRun: boolean
  profile?: string
  region?: string
  endpointUrl?: string
  state?: string
  /** Break a dead run's locks first. */
  breakLock?: string
  /** For `sluice resume`: the run to continue. */
  resume?: LiveOptions['resume']
  scenario?: string
  setup?: string
  pace?: number
  yes: boolean
  json: boolean
  svg?: string
  html?: string
}

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
  steps: Array<Omit<StepResult, 'startedAt' | 'endedAt'> & {startedAt: number | null; endedAt: number | null}>
  /** Figures of the rehearsal; null for a live run. */
  report: RehearsalFigures | null
}

export interface Printer {
  log(text: string): void
  note(text: string): void
  color: boolean
}

export function operator(): string {
  try {
    return process.env.SLUICE_OPERATOR ?? userInfo().username
  } catch {
    return 'unknown'
  }
}

/**
 * Runs a runbook for a command: picks the terminal I/O, handles Ctrl-C (stop at a safe point,
 * not listr2's process.exit), rehearses or refuses live mode, then prints the report. The exit
 * code is left in process.exitCode so --json still prints its result.
 */
export async function executeRunbook(runbook: Runbook, flags: RunFlags, out: Printer): Promise<RunJson> {
  const {TerminalIO, chooseMode} = await import('./terminal/terminal-io.js')
  const interactive = Boolean(process.stdin.isTTY && process.stderr.isTTY)
  const io = new TerminalIO({mode: chooseMode({json: flags.json}), yes: flags.yes, interactive})
  const controller = new AbortController()
  let interrupts = 0
  const onInterrupt = () => {
    interrupts++
    if (interrupts > 1) process.exit(130) // a second Ctrl-C means now
    out.note('interrupt: stopping at the next safe point (Ctrl-C again to quit at once)')
    controller.abort()
  }
  // Installed before anything draws: listr2's cursor handling re-raises SIGINT when it is alone.
  process.on('SIGINT', onInterrupt)
  let rehearsal: Rehearsal | null = null
  let run: RunResult
  let runId: string | null = null
  try {
    if (flags.dryRun) {
      rehearsal = await rehearse(runbook, {
        scenario: flags.scenario, setup: flags.setup, pace: flags.pace ?? null, operator: operator(), io, signal: controller.signal,
      })
      run = rehearsal.run
    } else {
      const {runLive} = await import('../live/run.js')
      const aws = {region: flags.region, profile: flags.profile, endpoint: flags.endpointUrl}
      const store = await openStore(flags.state, aws)
      if (flags.breakLock) {
        const broken = await store.breakLocks(flags.breakLock)
        out.note(broken.length > 0 ? `broke ${broken.length} lock${broken.length === 1 ? '' : 's'} of run ${flags.breakLock}: ${broken.join(', ')}` : `run ${flags.breakLock} holds no locks in ${store.label}`)
      }
      const live = await runLive(runbook, {aws, store, operator: operator(), io, signal: controller.signal, resume: flags.resume})
      runId = live.runId
      run = live
    }
  } finally {
    process.off('SIGINT', onInterrupt)
    await io.close()
  }
  if (run.outcome === 'interrupted') out.note(`interrupted: ${run.message}`)
  if (runId && run.outcome !== 'completed' && run.outcome !== 'refused')
    out.note(`run ${runId}: see what it did with \`sluice journal ${runId}\`; continue with \`sluice resume ${runId}\`, or undo it with \`sluice rollback ${runId}\``)
  if (rehearsal) {
    if (flags.svg) save(flags.svg, '--svg', rehearsalSvg(rehearsal), out)
    if (flags.html) save(flags.html, '--html', rehearsalHtml(rehearsal), out)
  }
  if (!flags.json) {
    const width = Math.max(40, Math.min(100, (process.stdout.columns ?? 100) - 16))
    out.log(rehearsal ? renderRehearsal(rehearsal, {color: out.color, width}) : renderLiveRun(run))
  }
  process.exitCode = exitCodeOf(run.outcome)
  return {
    runbook: run.runbook,
    mode: rehearsal ? 'rehearsal' : 'live',
    runId,
    outcome: run.outcome,
    exitCode: exitCodeOf(run.outcome),
    message: run.message,
    stoppedAt: run.stoppedAt,
    steps: run.steps,
    report: rehearsal ? rehearsalFigures(rehearsal) : null,
  }
}

function save(file: string, flag: string, content: string, out: Printer): void {
  try {
    writeFileSync(file, content)
  } catch (error) {
    throw new InputError(`${flag}: cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  out.note(`report saved to ${file}`)
}
