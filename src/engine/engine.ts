import {setMaxListeners} from 'node:events'
import type {ActionContext, ResumedMutation, StepOutcome} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import type {ControlPlane, Reading} from '../ports/control-plane.js'
import type {Gate} from '../runbook/gate.js'
import type {RunControls} from '../ports/controls.js'
import {InputError, RefusedError} from '../errors.js'
import type {Step} from '../actions/registry.js'
import type {Runbook} from '../loader/runbook.js'
import type {BaselineTaken, EngineIO, GateVerdict, RunEvent, RunOutcome, StepStatus} from '../ports/io.js'
import {watchBefore, watchGate} from './gate.js'
import {holdFor} from './hold.js'
import {stepName} from '../format.js'
import {planRunbook} from './plan.js'

export interface StepResult {
  index: number
  action: Step['action']
  title: string
  status: StepStatus
  message: string
  verdicts: GateVerdict[]
  startedAt: number | null
  endedAt: number | null
}

export interface RunResult {
  runbook: string
  outcome: RunOutcome
  message: string
  steps: StepResult[]
  /** The step the run stopped at, when it did not complete. */
  stoppedAt: {step: number; title: string; message: string} | null
}

export interface RunOptions {
  control: ControlPlane
  io: EngineIO
  /** Aborted on SIGINT: the run stops at the next safe point. */
  signal: AbortSignal
  /**
   * Records every event durably, in order. A change is made only after its intent is recorded,
   * and its outcome is recorded before the run goes on.
   */
  journal?: (event: RunEvent) => Promise<void>
  /**
   * Continue an earlier run: steps before `fromStep` are done; `mutations` are what that step
   * already changed; `baseline`, what its gate relative to before measured before the last of them.
   */
  resume?: {fromStep: number; mutations: ResumedMutation[]; baseline?: BaselineTaken}
  /** A live run's controls (`sluice pause`, `promote`, `abort`): each one received is recorded as a `control` event. */
  controls?: RunControls
  /** Indexes of the approve steps approved in advance (`--approve STEP`). */
  approved?: number[]
}

/** Events go to the journal (in order, durably) and then to the person. */
class Emitter {
  private queue: Promise<void> = Promise.resolve()
  private readonly titles = new Map<number, string>()
  constructor(
    private readonly io: EngineIO,
    private readonly journal?: (event: RunEvent) => Promise<void>,
    private readonly controls?: RunControls,
  ) {}

  emit(event: RunEvent): void {
    this.tellControls(event)
    if (this.journal) {
      const journal = this.journal
      this.queue = this.queue.then(() => journal(event))
    }
    this.io.notify(event)
  }

  /**
   * Shown only once it is on record: what a person reads as done (a pause taking hold) must
   * survive a kill -9 the moment they read it, and a resume acts on the journal.
   */
  emitRecorded(event: RunEvent): void {
    const journal = this.journal
    this.queue = this.queue.then(async () => {
      if (journal) await journal(event)
      this.io.notify(event)
    })
  }

  /** What the run is doing, for a control that finds nothing waiting for it ("nothing was waiting: step 4 …"). */
  private tellControls(event: RunEvent): void {
    if (!this.controls) return
    if (event.type === 'plan') for (const s of event.steps) this.titles.set(s.index, s.title)
    const step = 'step' in event && typeof event.step === 'number' ? `${stepName(event.step)} (${this.titles.get(event.step) ?? ''})` : ''
    if (event.type === 'step-start') this.controls.doing(`the run is at ${stepName(event.step)} (${event.title})`)
    else if (event.type === 'progress') this.controls.doing(`the run is at ${step}: ${event.message}`)
    else if (event.type === 'step-end') this.controls.doing(`the run is between steps: ${stepName(event.step)} ${event.status}`)
    else if (event.type === 'run-end') this.controls.doing(`the run is ending (${event.outcome})`)
  }

  /** Resolves when everything emitted so far is recorded. */
  flush(): Promise<void> {
    return this.queue
  }
}

/** How a run ends when a step does not finish: the CLI turns the outcome into an exit code. */
const outcomeOf: Record<Exclude<StepStatus, 'done' | 'skipped'>, RunOutcome> = {
  failed: 'gate-failed',
  held: 'held',
  refused: 'refused',
  interrupted: 'interrupted',
  error: 'failed',
}

/**
 * Runs a runbook's steps in order against a control plane. It knows nothing of terminals or of
 * AWS: it talks to ports and to an I/O port, waits on the control plane's clock, and emits events.
 */
export async function runRunbook(runbook: Runbook, options: RunOptions): Promise<RunResult> {
  const out = new Emitter(options.io, options.journal, options.controls)
  options.controls?.subscribe((control, effect, did) => out.emitRecorded({type: 'control', control, effect, did}))
  const result = await runSteps(runbook, options, out)
  await out.flush()
  return result
}

async function runSteps(runbook: Runbook, options: RunOptions, out: Emitter): Promise<RunResult> {
  const {control, signal} = options
  const fromStep = options.resume?.fromStep ?? 0
  out.emit({type: 'plan', runbook: runbook.name, steps: planRunbook(runbook, undefined, fromStep)})
  const results: StepResult[] = runbook.steps.map((s) => ({
    index: s.index,
    action: s.action,
    title: s.title,
    status: 'skipped',
    message: 'not run',
    verdicts: [],
    startedAt: null,
    endedAt: null,
  }))
  const history: string[] = []

  for (const step of runbook.steps) {
    const result = results[step.index]
    if (step.index < fromStep) {
      result.status = 'done'
      result.message = 'done in the run this one resumes'
      history.push(step.title)
      continue
    }
    if (signal.aborted) {
      result.message = 'not run: interrupted before it started'
      return finish(runbook, out, results, step, 'interrupted', `interrupted before step ${step.index + 1} (${step.title})`)
    }
    // A pause holds between steps too.
    if (options.controls?.pausedBy) {
      out.emit({
        type: 'progress',
        step: step.index,
        message: `paused by ${options.controls.pausedBy.operator} on ${options.controls.pausedBy.host}: holding before this step`,
        at: control.clock.now(),
      })
      await options.controls.whilePaused(signal)
      if (signal.aborted) {
        result.message = 'not run: interrupted before it started'
        return finish(runbook, out, results, step, 'interrupted', `interrupted before step ${step.index + 1} (${step.title})`)
      }
    }
    result.startedAt = control.clock.now()
    out.emit({type: 'step-start', step: step.index, title: step.title, at: result.startedAt})
    const previous = step.index === fromStep ? options.resume?.mutations : undefined
    const outcome = await runStep(step, control, options, out, history, previous)
    result.status = outcome.status
    result.message = outcome.message
    result.verdicts = outcome.verdicts ?? []
    result.endedAt = control.clock.now()
    out.emit({type: 'step-end', step: step.index, status: outcome.status, message: outcome.message, at: result.endedAt})
    if (outcome.status === 'done') {
      history.push(step.title)
      continue
    }
    const runOutcome = outcome.status === 'skipped' ? 'failed' : outcomeOf[outcome.status]
    return finish(runbook, out, results, step, runOutcome, `step ${step.index + 1} (${step.title}): ${outcome.message}`)
  }
  const n = runbook.steps.length
  const message = `${runbook.name}: ${n === 1 ? 'its step is' : `all ${n} steps`} done`
  out.emit({type: 'run-end', outcome: 'completed', message})
  return {runbook: runbook.name, outcome: 'completed', message, steps: results, stoppedAt: null}
}

function finish(runbook: Runbook, out: Emitter, steps: StepResult[], at: Step, outcome: RunOutcome, message: string): RunResult {
  out.emit({type: 'run-end', outcome, message})
  return {runbook: runbook.name, outcome, message, steps, stoppedAt: {step: at.index, title: at.title, message: steps[at.index].message}}
}

/** One step, with its timeout: when it runs out the step is stopped at its next safe point and fails. */
async function runStep(
  step: Step,
  control: ControlPlane,
  options: RunOptions,
  out: Emitter,
  history: string[],
  previous?: ResumedMutation[],
): Promise<StepOutcome> {
  const runSignal = options.signal
  // The step stops on the run's signal or on its own timeout. Listeners are removed when the step
  // ends, so a long runbook does not pile them up on the run's signal.
  const stop = new AbortController()
  // A batch runs one hook per target at once, each listening for the stop: not a leak.
  setMaxListeners(10_000, stop.signal)
  const forward = () => stop.abort()
  runSignal.addEventListener('abort', forward, {once: true})
  const idle = new AbortController()
  let timedOut = false
  if (step.timeout !== undefined && !actionOf(step).endsAtTimeout) {
    void control.clock.sleep(step.timeout, idle.signal).then(() => {
      if (idle.signal.aborted || stop.signal.aborted) return
      timedOut = true
      stop.abort()
    })
  }
  const ctx = actionContext(step, control, options, out, stop.signal, history, previous)
  try {
    let outcome: StepOutcome
    try {
      outcome = await actionOf(step).run(step, ctx)
    } catch (error) {
      if (error instanceof RefusedError) return {status: 'refused', message: error.message}
      if (error instanceof InputError) throw error
      // A call the stop cut short (its adapter aborts it and throws): the step stopped where it was.
      if (!stop.signal.aborted) return {status: 'error', message: (error as Error).message}
      outcome = {status: 'interrupted', message: `stopped during the step: ${(error as Error).message}`}
    }
    if (timedOut && outcome.status === 'interrupted')
      return {...outcome, status: step.onFailure === 'hold' ? 'held' : 'failed', message: `timed out after ${step.timeout} s: ${outcome.message}`}
    return outcome
  } finally {
    idle.abort()
    runSignal.removeEventListener('abort', forward)
  }
}

function actionContext(
  step: Step,
  control: ControlPlane,
  options: RunOptions,
  out: Emitter,
  signal: AbortSignal,
  history: string[],
  previous?: ResumedMutation[],
): ActionContext {
  const {io, controls} = options
  const at = () => control.clock.now()
  const need = <T>(part: T | undefined, what: string): T => {
    if (part === undefined) throw new Error(`step ${step.index + 1} needs ${what}, and this run has none`)
    return part
  }
  // A gate relative to `before` is judged against the window before the step's change: read at the
  // first change since the last watch, or as the watch starts when nothing changed (a check).
  const stepGate = 'gate' in step ? step.gate : undefined
  // The threshold judge's is one reading of the window; the counts judge's, the window's intervals, watched.
  // Resumed with the step's change already made, the one journalled before it: the pool now is the pool after it.
  let baseline: BaselineTaken | undefined = previous ? options.resume?.baseline : undefined
  let resumedBaseline = baseline !== undefined
  let reverting = false
  const readBaseline = async (gate: Gate): Promise<BaselineTaken> => {
    const taken = await measureBaseline(gate)
    out.emit({type: 'baseline', step: step.index, baseline: taken, at: at()})
    return taken
  }
  const measureBaseline = async (gate: Gate): Promise<BaselineTaken> => {
    const metrics = need(control.metrics, 'metrics (targets.metrics)')
    if (gate.judge === 'counts') {
      const of = gate.pool ?? 'the pool'
      out.emit({
        type: 'progress',
        step: step.index,
        message: `watching ${of} for ${gate.window} s before the change, a look every ${gate.interval} s: the counts judge's baseline`,
        at: at(),
      })
      const intervals = await watchBefore(metrics, gate, control.clock, signal, (look, looks) =>
        out.emit({type: 'progress', step: step.index, message: `baseline: ${look} of ${looks} intervals of ${of} before the change`, at: at()}),
      )
      return {intervals}
    }
    out.emit({type: 'progress', step: step.index, message: `measuring the baseline: ${gate.metric} over the ${gate.window} s before the change`, at: at()})
    return {reading: await metrics.read(gate.metric, gate.window, gate.pool, signal)}
  }
  return {
    control,
    io,
    signal,
    history,
    resumed: previous,
    controls,
    preApproved: options.approved?.includes(step.index) ?? false,
    async checkpoint(where) {
      const by = controls?.pausedBy
      if (!controls || !by || signal.aborted) return
      out.emit({
        type: 'progress',
        step: step.index,
        message: `paused by ${by.operator} on ${by.host}: holding ${where} (\`sluice promote ${controls.runId}\` continues)`,
        at: at(),
      })
      await controls.whilePaused(signal)
    },
    async hold(seconds, where) {
      const clock = control.clock
      // Without controls (a rehearsal) nothing can pause or promote: one sleep, in virtual time.
      if (!controls) {
        out.emit({type: 'bake', step: step.index, seconds, at: at()})
        await clock.sleep(seconds, signal)
        return signal.aborted ? 'interrupted' : 'done'
      }
      out.emit(bakeOrFull(step.index, seconds, controls, at(), 'it ends at once'))
      return holdFor(seconds, {
        clock,
        signal,
        controls,
        paused: async (left) => {
          await this.checkpoint(`${where}, ${Math.ceil(left)} s left`)
          out.emit({type: 'bake', step: step.index, seconds: left, at: at()})
        },
        did: (left) => `ended the wait of ${stepName(step.index)} ${where} early, ${Math.ceil(left)} s before its end`,
      })
    },
    progress: (message) => out.emit({type: 'progress', step: step.index, message, at: at()}),
    placed: (pool, place) => out.emit({type: 'placement', step: step.index, pool, place, at: at()}),
    warn: (message) => out.emit({type: 'warning', step: step.index, message}),
    verdict: (verdict) => out.emit({type: 'verdict', verdict}),
    async change(kind, resource, before, after, apply, report) {
      // A change of its own: the window before it, not one a killed run took before its last.
      if (stepGate?.baseline === 'before' && !reverting && (baseline === undefined || resumedBaseline)) {
        baseline = await readBaseline(stepGate)
        resumedBaseline = false
      }
      out.emit({type: 'mutation', at: at(), mutation: {step: step.index, phase: 'intent', kind, resource, before, after}})
      // Nothing changes before its intent is on record: that is what makes a resume possible.
      await out.flush()
      try {
        const value = await apply()
        const {note, produced} = report?.(value) ?? {}
        out.emit({
          type: 'mutation',
          at: at(),
          mutation: {
            step: step.index,
            phase: 'outcome',
            kind,
            resource,
            before,
            after,
            ok: true,
            ...(note ? {note} : {}),
            ...(produced?.length ? {produced} : {}),
          },
        })
        await out.flush()
        return value
      } catch (error) {
        out.emit({
          type: 'mutation',
          at: at(),
          mutation: {step: step.index, phase: 'outcome', kind, resource, before, after, ok: false, error: (error as Error).message},
        })
        await out.flush()
        throw error
      }
    },
    watch: (gate, bake, context) => {
      if (bake > 0)
        out.emit(
          bakeOrFull(
            step.index,
            bake,
            controls,
            at(),
            `it ends as soon as its gate has passed ${gate.successes} time${gate.successes === 1 ? '' : 's'} in a row`,
          ),
        )
      const before = baseline
      baseline = undefined
      resumedBaseline = false
      // Read when the step changed nothing (a check), or was read for a gate judged the other way.
      const measured = async () => (before && 'intervals' in before === (gate.judge === 'counts') ? before : await readBaseline(gate))
      return watchGate({
        ...(gate.baseline === 'before'
          ? {
              before: async () => (measured as () => Promise<{reading: Reading}>)().then((m) => m.reading),
              beforeCounts: async () => (measured as () => Promise<{intervals: Array<{requests: number; errors: number}>}>)().then((m) => m.intervals),
            }
          : {}),
        gate,
        bake,
        context,
        step: step.index,
        signal,
        clock: control.clock,
        controls,
        metrics: need(control.metrics, 'metrics (targets.metrics)'),
        onVerdict: (verdict) => out.emit({type: 'verdict', verdict}),
      }).then((result) => {
        // After a gate that did not pass, the step's next change puts something back: made at once, judged by nothing.
        reverting = result.outcome !== 'pass'
        return result
      })
    },
    weights: () => need(control.weights, 'a weighted DNS record (targets.dns) or a HAProxy ramp map (targets.haproxy.rampMap)'),
    restrictions: () => need(control.restrictions, 'a listener (targets.listener) or a HAProxy restriction map (targets.haproxy.restrictMap)'),
    metrics: () => need(control.metrics, 'metrics (targets.metrics)'),
  }
}

/**
 * A bake's start: its countdown, or after a `promote --full` a line saying who ended it and how
 * it ends (no countdown: there is no bake to count down).
 */
function bakeOrFull(step: number, seconds: number, controls: RunControls | undefined, at: number, ends: string): RunEvent {
  const by = controls?.fullyPromotedBy
  if (!by) return {type: 'bake', step, seconds, at}
  return {type: 'progress', step, message: `promoted fully by ${by.operator} on ${by.host} (sluice promote --full): no bake of ${seconds} s; ${ends}`, at}
}
