import type {DefaultRenderer, Listr, ListrDefaultRendererLogLevels, ListrTaskWrapper} from 'listr2'
import {formatEvent, planLines, statusWithMessage, terminalMutationText, verdictText, type ClockKind} from '../../format.js'
import type {GateVerdict, PlannedStep, RunEvent, StepStatus} from '../../ports/io.js'
import {ask, confirmAdapter} from './prompt.js'

// The live view: one listr2 task per planned step, driven by the engine's events. listr2 is only
// loaded when a run draws: `--json` and CI runs never pay for it, hence the type-only import
// above and the dynamic import in plan().
type Listr2 = typeof import('listr2')
type Renderer = typeof DefaultRenderer
type TaskHandle = ListrTaskWrapper<unknown, Renderer, Renderer>
type StepList = Listr<unknown, Renderer, Renderer>

interface Deferred<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  settled: boolean
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      if (d.settled) return
      d.settled = true
      resolve(value)
    },
  }
  return d
}

type StepEnd = {status: StepStatus | 'not-run'; message: string}

interface Slot {
  planned: PlannedStep
  /** Settles on the step's step-end, or as not run at run-end; listr2 may start the task later. */
  end: Deferred<StepEnd>
  /** Settles true when a later step starts, false when the run ends first: whether the step folds to one line. */
  followed: Deferred<boolean>
  /** Settles when listr2 starts the task: only then can it show output or a prompt. */
  started: Deferred<TaskHandle>
  task?: TaskHandle
  /** What the step last said (a status, a change, a verdict), without the countdown. */
  text?: string
  /** The latest line as shown, held until listr2 starts the task. */
  output?: string
  /** The latest gate verdict, kept under the task after it ends. */
  verdict?: string
  /** The bake (or wait) in progress: from when, for how long. Anything else the step says ends it. */
  bake?: {since: number; seconds: number; pausedAt?: number}
  /**
   * The latest control that reached the step (a pause, a promote), on a line of its own above: a paused
   * step keeps measuring its gate, and each verdict would otherwise overwrite "paused" at once.
   */
  control?: string
}

/** How often the countdown moves between a live run's events (ms). */
const TICK_MS = 1000

/**
 * At most one frame per this many ms. listr2 redraws the whole frame, measuring and wrapping every
 * line to the terminal's width (about 10 ms a frame), on each change of a task's state, title or
 * output; a rehearsal in virtual time changes them hundreds of times a second, and drawn one by
 * one they made a terminal run 3 to 5 times slower than a piped one. Its spinner moves every 100 ms,
 * so a person sees no less.
 */
const FRAME_MS = 100

/**
 * listr2's default renderer, drawing at most one frame per FRAME_MS: a change schedules the next
 * frame rather than drawing at once, and the last frame is drawn whole at the end. A frame is drawn
 * at once when the tasks are all enabled, and when a prompt starts or ends: listr2 starts listening
 * to a task's output, and to a prompt's, only when a frame first draws it, so what was said before
 * that frame would be lost.
 */
function throttledRenderer(m: Listr2): Renderer {
  return class ThrottledRenderer extends m.DefaultRenderer {
    private next?: NodeJS.Timeout
    private readonly listed: ConstructorParameters<Renderer>[0]
    private enabledDrawn = 0
    private promptDrawn?: string

    constructor(...args: ConstructorParameters<Renderer>) {
      super(...args)
      this.listed = args[0]
    }

    override update(): void {
      const enabled = this.listed.filter((t) => t.isEnabled()).length
      const prompting = this.listed.find((t) => t.isPrompt())?.id
      // Every task is enabled before any runs (listr2 checks them all first): one frame then sets them all up.
      if ((enabled === this.listed.length && enabled > this.enabledDrawn) || prompting !== this.promptDrawn) {
        this.enabledDrawn = enabled
        this.promptDrawn = prompting
        clearTimeout(this.next)
        this.next = undefined
        return super.update()
      }
      this.next ??= setTimeout(() => {
        this.next = undefined
        super.update()
      }, FRAME_MS)
    }

    override end(): void {
      clearTimeout(this.next)
      this.next = undefined
      super.end()
    }
  }
}

/** The task's line once the step is over: failures and skips replace the title in listr2. */
function endText(title: string, end: StepEnd): string {
  switch (end.status) {
    case 'not-run':
      return `${title}: not run`
    case 'skipped':
      return `${title}: ${end.message || 'skipped'}`
    default:
      return `${title}: ${statusWithMessage(end.status, end.status, end.message, ', ')}`
  }
}

/**
 * The task's last lines. A step done, once a later one has started, folds to one line, its title and
 * what it ended with, so the frame stays a line a step and fits the screen however long the
 * runbook; the step the run ends on, and any step not done, keeps its lines under it.
 */
function finishTask(slot: Slot, task: TaskHandle, end: StepEnd, followed: boolean): void {
  if (followed && end.status === 'done') {
    task.title = end.message ? `${slot.planned.title}: ${end.message}` : slot.planned.title
    task.output = ''
    return
  }
  const kept = [slot.control ?? '', end.status === 'done' ? end.message : '', slot.verdict ?? ''].filter(Boolean)
  task.output = kept.join('\n')
  if (end.status === 'done') return
  // Held and not-run steps did nothing wrong; listr2's skip mark says "stopped here" without red.
  if (end.status === 'skipped' || end.status === 'held' || end.status === 'not-run') return task.skip(endText(slot.planned.title, end))
  throw new Error(endText(slot.planned.title, end))
}

export class ListrView {
  private readonly slots = new Map<number, Slot>()
  private module?: Promise<Listr2 | undefined>
  private running?: Promise<void>
  private tail: Promise<void> = Promise.resolve()
  private adapter?: ReturnType<typeof confirmAdapter>
  private ticker?: NodeJS.Timeout

  /** `clock`: whose seconds events carry; on the wall clock the bake counts down every second, not only on each verdict. */
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly clock: ClockKind = 'wall',
  ) {}

  notify(event: RunEvent): void {
    switch (event.type) {
      case 'plan':
        return this.plan(event.steps, event.runId)
      case 'step-start':
        for (const slot of this.slots.values()) if (slot.planned.index < event.step) slot.followed.resolve(true)
        return this.slots.has(event.step) ? this.start() : this.print(formatEvent(event))
      case 'progress':
        return this.show(event.step, event.message, event)
      case 'bake':
        return this.baking(event.step, event.at, event.seconds)
      case 'verdict':
        return this.verdict(event.verdict, event)
      case 'mutation': {
        const text = terminalMutationText(event.mutation)
        return text === undefined ? undefined : this.show(event.mutation.step, text, event)
      }
      case 'control': {
        // Under the step it reached (a pause, a promote), and printed to stay on record.
        const slot = this.current()
        if (slot) {
          slot.control = formatEvent(event).join(' ')
          this.pauseBake(slot, event.effect)
          this.redraw(slot, slot.bake ? Date.now() / 1000 : undefined)
        }
        return this.print(formatEvent(event))
      }
      case 'warning':
        // Also printed, to stay on record once the task's output line has moved on.
        if (event.step !== undefined) this.show(event.step, `warning: ${event.message}`)
        return this.print(formatEvent(event))
      case 'step-end':
        return this.end(event.step, {status: event.status, message: event.message}, event)
      case 'run-end':
        return this.runEnd(formatEvent(event))
      case 'placement':
      case 'baseline':
        return
    }
  }

  /** A note about the step now running, e.g. an approval by --yes; also written to the stream. */
  note(line: string): void {
    const slot = this.current()
    if (slot?.task) slot.task.output = line
    this.print([line])
  }

  /**
   * The running task a prompt can attach to, once listr2 has started it; undefined when listr2 is
   * not drawing (before the first step, after the last), so the caller may ask plainly.
   */
  async promptHost(): Promise<TaskHandle | undefined> {
    if (!this.running) return undefined
    const slot = this.current()
    if (!slot) {
      await this.running
      return undefined
    }
    return Promise.race([slot.started.promise, this.running.then(() => undefined)])
  }

  async askInTask(task: TaskHandle, question: string, context: string[], input?: NodeJS.ReadableStream, signal?: AbortSignal): Promise<boolean> {
    const m = await this.module
    if (!m) throw new Error('listr2 is not loaded')
    this.adapter ??= confirmAdapter(m)
    // The context goes under the asking step, where the person is looking.
    task.output = context.join('\n')
    const yes = await task.prompt(this.adapter).run((output) => ask(question, output, input, signal))
    task.output = `${yes ? 'approved' : 'not approved'}: ${question}`
    return yes
  }

  /** Resolves once the final frame is out; steps still open (the run stopped short) show as not run. */
  async close(): Promise<void> {
    clearInterval(this.ticker)
    this.settleAll()
    await this.module
    await this.running
    await this.tail
  }

  /** Lines above the task list, e.g. what a question is about; held until the final frame once it draws. */
  say(lines: string[]): void {
    this.print(lines)
  }

  private plan(steps: PlannedStep[], runId?: string): void {
    if (this.module) return
    // The plan is read before anything runs; listr2 then shows the same steps as tasks.
    this.print(planLines(steps, runId))
    for (const planned of steps) this.slots.set(planned.index, {planned, end: deferred(), followed: deferred(), started: deferred()})
    this.module = import('listr2').catch((error: Error) => {
      this.write([`progress display unavailable: ${error.message}`])
      return undefined
    })
  }

  // listr2 starts drawing at the first step, not at the plan, so that a question asked before
  // anything runs (approve the plan?) is a plain prompt with nothing redrawing around it.
  private start(): void {
    if (this.running || !this.module) return
    this.running = this.module.then((m) => (m ? this.draw(m) : undefined)).catch((error: Error) => this.write([`progress display failed: ${error.message}`]))
  }

  private async draw(m: Listr2): Promise<void> {
    // listr2 draws on process.stdout unless its logger gets a ProcessOutput; stdout is for
    // results, so both of its channels are our stream. While drawing it also swaps that stream's
    // write() to hold back anyone else's output until the final frame.
    const out = this.stream as NodeJS.WriteStream
    const processOutput = new m.ProcessOutput(out, out)
    try {
      await this.build(m, processOutput).run()
    } catch (error) {
      // A renderer that died mid-frame would leave stderr swallowed for the rest of the process.
      processOutput.release()
      throw error
    }
  }

  private build(m: Listr2, processOutput: InstanceType<Listr2['ProcessOutput']>): StepList {
    const rendererOptions = {logger: new m.ListrLogger<ListrDefaultRendererLogLevels>({useIcons: true, processOutput})}
    // listr2's own timer shows each step's elapsed time on its line once it ends.
    const taskOptions = {outputBar: true, persistentOutput: true, timer: m.PRESET_TIMER}
    const tasks = [...this.slots.values()].map((slot) => ({
      title: slot.planned.title,
      task: (_ctx: unknown, task: TaskHandle) => this.runTask(slot, task),
      rendererOptions: taskOptions,
      fallbackRendererOptions: taskOptions,
    }))
    const renderer = throttledRenderer(m)
    return new m.Listr<unknown, Renderer, Renderer>(tasks, {
      renderer,
      rendererOptions,
      // listr2 falls back when process.stdout is not a TTY, but we draw on stderr and chooseMode
      // has checked that one; forceTTY would instead overwrite process.stdout.isTTY for everyone.
      fallbackRenderer: renderer,
      fallbackRendererOptions: rendererOptions,
      // Its SIGINT handler calls process.exit; the engine handles SIGINT.
      registerSignalListeners: false,
      exitOnError: false,
      concurrent: false,
    })
  }

  private async runTask(slot: Slot, task: TaskHandle): Promise<void> {
    slot.task = task
    slot.started.resolve(task)
    if (slot.output) task.output = slot.output
    const end = await slot.end.promise
    // listr2 stops listening to a task's output once it completes, so the task waits to learn
    // whether its lines fold (a later step started) or stay (the run ended on it).
    finishTask(slot, task, end, await slot.followed.promise)
  }

  /** The first step not yet over: the one running, or the one listr2 is about to start. */
  private current(): Slot | undefined {
    return [...this.slots.values()].find((s) => !s.end.settled)
  }

  /** A status or a change: the step has moved on from any bake. */
  private show(step: number, text: string, event?: RunEvent): void {
    const slot = this.slots.get(step)
    if (!slot) return event ? this.print(formatEvent(event)) : undefined
    if (slot.end.settled) return
    slot.bake = undefined
    this.setText(slot, text)
  }

  /** Returns the step's line as now shown, without the control under it. */
  private setText(slot: Slot, text: string, now?: number): string {
    slot.text = text
    return this.redraw(slot, now)
  }

  /**
   * A pause stops the bake's count on screen as it stops it in the engine (time paused does not
   * count), and a promote that continues the run starts it again from where it stood.
   */
  private pauseBake(slot: Slot, effect: string): void {
    const bake = slot.bake
    if (!bake || this.clock !== 'wall') return
    const now = Date.now() / 1000
    if (effect === 'paused' && bake.pausedAt === undefined) bake.pausedAt = now
    else if ((effect === 'continued' || effect === 'promoted fully' || effect === 'aborting') && bake.pausedAt !== undefined) {
      bake.since += now - bake.pausedAt
      bake.pausedAt = undefined
    }
  }

  /** The step's line with the bake's countdown, as of `now` (the event's time, or the wall clock's on a tick). */
  private redraw(slot: Slot, now?: number): string {
    const bake = slot.bake
    const at = bake?.pausedAt ?? now
    const baked = bake && at !== undefined ? Math.min(bake.seconds, Math.max(0, Math.round(at - bake.since))) : undefined
    const line = `${slot.text ?? ''}${bake && baked !== undefined ? `${slot.text ? ', ' : ''}bake ${baked}/${Math.round(bake.seconds)} s${bake.pausedAt === undefined ? '' : ', paused'}` : ''}`
    const output = [slot.control ?? '', line].filter(Boolean).join('\n')
    slot.output = output
    if (slot.task) slot.task.output = output
    return line
  }

  /** A bake begins: the step's verdicts count it down (`bake 20/90 s`), and on the wall clock so does every second. */
  private baking(step: number, at: number, seconds: number): void {
    const slot = this.slots.get(step)
    if (!slot || slot.end.settled) return
    slot.bake = {since: at, seconds}
    // A watch that joins late reads bakes that began minutes ago: on the wall clock, count from now.
    this.redraw(slot, this.clock === 'wall' ? Math.max(Date.now() / 1000, at) : at)
    if (this.clock === 'wall') this.ticker ??= setInterval(() => this.tick(), TICK_MS).unref()
  }

  private tick(): void {
    const slot = this.current()
    if (slot?.bake) this.redraw(slot, Math.max(Date.now() / 1000, slot.bake.since))
  }

  private verdict(verdict: GateVerdict, event: RunEvent): void {
    const slot = this.slots.get(verdict.step)
    if (!slot) return this.print(formatEvent(event))
    if (slot.end.settled) return
    slot.verdict = this.setText(slot, verdictText(verdict), verdict.at)
  }

  private end(step: number, end: StepEnd, event: RunEvent): void {
    const slot = this.slots.get(step)
    if (!slot) return this.print(formatEvent(event))
    this.start()
    slot.end.resolve(end)
  }

  private runEnd(lines: string[]): void {
    clearInterval(this.ticker)
    this.settleAll()
    this.start()
    this.afterDrawing(lines)
  }

  /**
   * Lines outside the task list. Once listr2 draws, a write would land between its frames (or,
   * once it has swapped the stream's write(), be held back with ANSI stripped), so they wait
   * for the final frame instead, in order.
   */
  private print(lines: string[]): void {
    if (this.running) this.afterDrawing(lines)
    else this.write(lines)
  }

  private afterDrawing(lines: string[]): void {
    this.tail = this.tail.then(() => this.running).then(() => this.write(lines))
  }

  private settleAll(): void {
    for (const slot of this.slots.values()) {
      slot.end.resolve({status: 'not-run', message: ''})
      slot.followed.resolve(false)
    }
  }

  private write(lines: string[]): void {
    if (lines.length) this.stream.write(lines.map((l) => `${l}\n`).join(''))
  }
}
