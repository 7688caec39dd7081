import {Writable} from 'node:stream'
import type {DefaultRenderer, Listr, ListrDefaultRendererLogLevels, ListrTaskWrapper} from 'listr2'
import {formatValue} from '../engine/gate.js'
import {RefusedError} from '../errors.js'
import {type EngineIO, type GateVerdict, type Mutation, type PlannedStep, type RunEvent, type StepStatus} from '../ports/io.js'

// listr2 and inquirer are only loaded when a run draws or asks: `--json` and CI runs never pay for
// them, hence the type-only import above and the dynamic imports below.
type Listr2 = typeof import('listr2')
type Renderer = typeof DefaultRenderer
type TaskHandle = ListrTaskWrapper<unknown, Renderer, Renderer>
type StepList = Listr<unknown, 'default', 'default'>

export type TerminalMode = 'tty' | 'lines' | 'silent'

export interface TerminalIOOptions {
  /** tty: listr2's default renderer; lines: one line per event; silent: nothing (for --json). */
  mode: TerminalMode
  /** --yes: every confirm() resolves true without asking. */
  yes: boolean
  /** Whether a person can answer: stdin and stderr are TTYs. */
  interactive: boolean
  /** Where progress goes; stdout is for results only. Default: process.stderr. */
  stream?: NodeJS.WritableStream
  /** Where answers come from. Default: process.stdin. */
  input?: NodeJS.ReadableStream
}

/** Silent under --json; one line per event when stderr is not a terminal or under CI; else live. */
export function chooseMode(opts: {json: boolean; env?: NodeJS.ProcessEnv; isTTY?: boolean}): TerminalMode {
  if (opts.json) return 'silent'
  const isTTY = opts.isTTY ?? process.stderr.isTTY === true
  if (!isTTY || isCI(opts.env ?? process.env)) return 'lines'
  return 'tty'
}

function isCI(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI
  return ci !== undefined && ci !== '' && ci.toLowerCase() !== 'false'
}

// ---------------------------------------------------------------------------------------------
// Lines: what 'lines' mode prints, and what the live view falls back to.

/** Events carry the runbook's 0-based step index; people count from 1. */
const label = (step: number): string => `[step ${step + 1}]`

const statusWord: Record<StepStatus, string> = {
  done: 'done',
  skipped: 'skipped',
  held: 'HELD',
  failed: 'FAILED',
  error: 'ERROR',
  refused: 'REFUSED',
  interrupted: 'INTERRUPTED',
}

/** `{a:100,b:0}`: short enough for one greppable line, unlike JSON with its quotes. */
function compact(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `[${value.map(compact).join(',')}]`
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${k}:${compact(v)}`).join(',')}}`
  return String(value)
}

function changeText(before: unknown, after: unknown): string {
  if (before === undefined && after === undefined) return ''
  if (before === undefined) return `: ${compact(after)}`
  if (after === undefined) return `: was ${compact(before)}`
  return `: ${compact(before)} → ${compact(after)}`
}

function verdictText(v: GateVerdict): string {
  return `gate ${v.gate}: ${formatValue(v.value, v.unit)} ${v.outcome}${v.context ? ` (${v.context})` : ''}`
}

/** The intent says what is about to change; a successful outcome adds nothing worth a line. */
function mutationText(m: Mutation): string | undefined {
  const subject = `change ${m.kind} ${m.resource}`
  if (m.phase === 'intent') return `${subject}${changeText(m.before, m.after)}`
  if (m.ok === false) return `${subject} failed: ${m.error ?? 'no reason given'}`
  return undefined
}

function planLines(steps: PlannedStep[]): string[] {
  const head = `plan: ${steps.length} step${steps.length === 1 ? '' : 's'}`
  return [head, ...steps.map((s) => `  ${s.index + 1}. ${s.title}${s.details.length ? `: ${s.details.join('; ')}` : ''}`)]
}

/** One event as the lines a person or grep reads; none for events not worth a line. */
export function formatEvent(event: RunEvent): string[] {
  switch (event.type) {
    case 'plan':
      return planLines(event.steps)
    case 'step-start':
      return [`${label(event.step)} start ${event.title}`]
    case 'progress':
      return [`${label(event.step)} progress ${event.message}`]
    case 'verdict':
      return [`${label(event.verdict.step)} ${verdictText(event.verdict)}`]
    case 'mutation': {
      const text = mutationText(event.mutation)
      return text ? [`${label(event.mutation.step)} ${text}`] : []
    }
    case 'warning':
      return [event.step === undefined ? `warning: ${event.message}` : `${label(event.step)} warning ${event.message}`]
    case 'step-end':
      return [`${label(event.step)} ${statusWord[event.status]} ${event.message}`.trimEnd()]
    case 'run-end':
      return [`run: ${event.outcome} ${event.message}`.trimEnd()]
  }
}

// ---------------------------------------------------------------------------------------------
// Prompts

/**
 * Inquirer pipes its output through a legacy Stream, which ends the destination when the prompt
 * is done unless that is process.stdout/stderr; a caller's stream must outlive one question.
 */
function unendable(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  const out = new Writable({
    write(chunk, _encoding, done) {
      stream.write(chunk)
      done()
    },
  })
  // readline wraps the prompt to the terminal it draws on.
  const tty = stream as Partial<NodeJS.WriteStream>
  Object.defineProperties(out, {
    columns: {get: () => tty.columns},
    rows: {get: () => tty.rows},
    isTTY: {get: () => tty.isTTY},
  })
  return out
}

async function ask(question: string, output: NodeJS.WritableStream, input?: NodeJS.ReadableStream): Promise<boolean> {
  const {confirm} = await import('@inquirer/prompts')
  try {
    return await confirm({message: question, default: false}, {output, ...(input ? {input} : {})})
  } catch (error) {
    // Ctrl-C at a prompt never reaches the engine's SIGINT handler (readline holds stdin in raw
    // mode and inquirer turns the keypress into ExitPromptError): it means no.
    if (error instanceof Error && error.name === 'ExitPromptError') return false
    throw error
  }
}

/**
 * listr2's prompt protocol: while the task is in the PROMPT state the default renderer draws the
 * last frame the prompt wrote to `task.stdout(PROMPT)` under the task list, so spinner redraws
 * repaint the question instead of erasing it. The class needs listr2 at runtime, hence a factory.
 */
function confirmAdapter(m: Listr2) {
  return class ConfirmAdapter extends m.ListrPromptAdapter {
    async run<T>(prompt: (output: NodeJS.WritableStream) => Promise<T>): Promise<T> {
      this.reportStarted()
      try {
        return await prompt(this.wrapper.stdout(m.ListrTaskEventType.PROMPT))
      } finally {
        // Even when the prompt was aborted (which the caller reads as no): a failed prompt would
        // stay drawn until the step ends.
        this.reportCompleted()
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The live view: one listr2 task per planned step, driven by the engine's events.

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
  /** Settles when listr2 starts the task: only then can it show output or a prompt. */
  started: Deferred<TaskHandle>
  task?: TaskHandle
  /** The latest line, held until listr2 starts the task. */
  output?: string
  /** The latest gate verdict, kept under the task after it ends. */
  verdict?: string
}

/** The task's line once the step is over: failures and skips replace the title in listr2. */
function endText(title: string, end: StepEnd): string {
  switch (end.status) {
    case 'not-run':
      return `${title}: not run`
    case 'skipped':
      return `${title}: ${end.message || 'skipped'}`
    default:
      return `${title}: ${end.status}${end.message ? `, ${end.message}` : ''}`
  }
}

function finishTask(slot: Slot, task: TaskHandle, end: StepEnd): void {
  const kept = [end.status === 'done' ? end.message : '', slot.verdict ?? ''].filter(Boolean)
  task.output = kept.join('\n')
  if (end.status === 'done') return
  // Held and not-run steps did nothing wrong; listr2's skip mark says "stopped here" without red.
  if (end.status === 'skipped' || end.status === 'held' || end.status === 'not-run') return task.skip(endText(slot.planned.title, end))
  throw new Error(endText(slot.planned.title, end))
}

class ListrView {
  private readonly slots = new Map<number, Slot>()
  private module?: Promise<Listr2 | undefined>
  private running?: Promise<void>
  private tail: Promise<void> = Promise.resolve()
  private adapter?: ReturnType<typeof confirmAdapter>

  constructor(private readonly stream: NodeJS.WritableStream) {}

  notify(event: RunEvent): void {
    switch (event.type) {
      case 'plan':
        return this.plan(event.steps)
      case 'step-start':
        return this.slots.has(event.step) ? this.start() : this.print(formatEvent(event))
      case 'progress':
        return this.show(event.step, event.message, event)
      case 'verdict':
        return this.verdict(event.verdict, event)
      case 'mutation': {
        const text = mutationText(event.mutation)
        return text === undefined ? undefined : this.show(event.mutation.step, text, event)
      }
      case 'warning':
        // Also printed, to stay on record once the task's output line has moved on.
        if (event.step !== undefined) this.show(event.step, `warning: ${event.message}`)
        return this.print(formatEvent(event))
      case 'step-end':
        return this.end(event.step, {status: event.status, message: event.message}, event)
      case 'run-end':
        return this.runEnd(formatEvent(event))
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

  async askInTask(task: TaskHandle, question: string, context: string[], input?: NodeJS.ReadableStream): Promise<boolean> {
    const m = await this.module
    if (!m) throw new Error('listr2 is not loaded')
    this.adapter ??= confirmAdapter(m)
    // The context goes under the asking step, where the person is looking.
    task.output = context.join('\n')
    const yes = await task.prompt(this.adapter).run((output) => ask(question, output, input))
    task.output = `${yes ? 'approved' : 'not approved'}: ${question}`
    return yes
  }

  /** Resolves once the final frame is out; steps still open (the run stopped short) show as not run. */
  async close(): Promise<void> {
    this.settleAll()
    await this.module
    await this.running
    await this.tail
  }

  private plan(steps: PlannedStep[]): void {
    if (this.module) return
    for (const planned of steps) this.slots.set(planned.index, {planned, end: deferred(), started: deferred()})
    this.module = import('listr2').catch((error: Error) => {
      this.write([`progress display unavailable: ${error.message}`])
      return undefined
    })
  }

  // listr2 starts drawing at the first step, not at the plan, so that a question asked before
  // anything runs (approve the plan?) is a plain prompt with nothing redrawing around it.
  private start(): void {
    if (this.running || !this.module) return
    this.running = this.module
      .then((m) => (m ? this.draw(m) : undefined))
      .catch((error: Error) => this.write([`progress display failed: ${error.message}`]))
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
    const taskOptions = {outputBar: true, persistentOutput: true}
    const tasks = [...this.slots.values()].map((slot) => ({
      title: slot.planned.title,
      task: (_ctx: unknown, task: TaskHandle) => this.runTask(slot, task),
      rendererOptions: taskOptions,
      fallbackRendererOptions: taskOptions,
    }))
    return new m.Listr<unknown, 'default', 'default'>(tasks, {
      renderer: 'default',
      rendererOptions,
      // listr2 falls back when process.stdout is not a TTY, but we draw on stderr and chooseMode
      // has checked that one; forceTTY would instead overwrite process.stdout.isTTY for everyone.
      fallbackRenderer: 'default',
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
    finishTask(slot, task, await slot.end.promise)
  }

  /** The first step not yet over: the one running, or the one listr2 is about to start. */
  private current(): Slot | undefined {
    return [...this.slots.values()].find((s) => !s.end.settled)
  }

  private show(step: number, text: string, event?: RunEvent): void {
    const slot = this.slots.get(step)
    if (!slot) return event ? this.print(formatEvent(event)) : undefined
    if (slot.end.settled) return
    slot.output = text
    if (slot.task) slot.task.output = text
  }

  private verdict(verdict: GateVerdict, event: RunEvent): void {
    const slot = this.slots.get(verdict.step)
    const text = verdictText(verdict)
    if (slot && !slot.end.settled) slot.verdict = text
    this.show(verdict.step, text, event)
  }

  private end(step: number, end: StepEnd, event: RunEvent): void {
    const slot = this.slots.get(step)
    if (!slot) return this.print(formatEvent(event))
    this.start()
    slot.end.resolve(end)
  }

  private runEnd(lines: string[]): void {
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
    for (const slot of this.slots.values()) slot.end.resolve({status: 'not-run', message: ''})
  }

  private write(lines: string[]): void {
    if (lines.length) this.stream.write(lines.map((l) => `${l}\n`).join(''))
  }
}

// ---------------------------------------------------------------------------------------------

/**
 * A pty allocated without a size (some containers) reports 0 columns, and listr2 would wrap its
 * list one character per line; it sizes by process.stdout, log-update by the stream.
 */
function hasWidth(stream: NodeJS.WritableStream): boolean {
  return (stream as Partial<NodeJS.WriteStream>).columns !== 0 && process.stdout.columns !== 0
}

/** The engine's way to a person at a terminal: progress on stderr, questions by prompt. */
export class TerminalIO implements EngineIO {
  private readonly stream: NodeJS.WritableStream
  private readonly mode: TerminalMode
  private readonly view?: ListrView

  constructor(private readonly options: TerminalIOOptions) {
    this.stream = options.stream ?? process.stderr
    this.mode = options.mode === 'tty' && !hasWidth(this.stream) ? 'lines' : options.mode
    if (this.mode === 'tty') this.view = new ListrView(this.stream)
  }

  notify(event: RunEvent): void {
    if (this.mode === 'silent') return
    if (this.view) return this.view.notify(event)
    this.write(formatEvent(event))
  }

  async confirm(question: string, context: string[]): Promise<boolean> {
    // What the question is about is shown whether or not anyone can answer: a refused or
    // auto-approved live run still says what it would change.
    if (this.mode !== 'silent' && !this.view) this.write(context)
    if (this.options.yes) {
      this.approvedByYes(question)
      return true
    }
    if (!this.options.interactive) {
      throw new RefusedError(`${question} needs an answer, but this run is not interactive; pass --yes to approve`)
    }
    const host = await this.view?.promptHost()
    if (this.view && host) return this.view.askInTask(host, question, context, this.options.input)
    // Asked even under --json (silent): a person is there, and prompts go to stderr, not stdout.
    if (this.mode === 'silent') this.write(context)
    return ask(question, unendable(this.stream), this.options.input)
  }

  /** Resolves once the renderer has finished drawing (call after run-end). */
  async close(): Promise<void> {
    await this.view?.close()
  }

  private approvedByYes(question: string): void {
    if (this.mode === 'silent') return
    const line = `approved by --yes: ${question}`
    if (this.view) this.view.note(line)
    else this.write([line])
  }

  private write(lines: string[]): void {
    if (lines.length) this.stream.write(lines.map((l) => `${l}\n`).join(''))
  }
}
