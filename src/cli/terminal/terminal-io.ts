import {RefusedError} from '../../errors.js'
import {formatEvent, type ClockKind} from '../../format.js'
import type {EngineIO, RunEvent} from '../../ports/io.js'
import {LineLog} from './line-log.js'
import {ListrView} from './listr-view.js'
import type {TerminalMode} from './mode.js'
import {ask, unendable} from './prompt.js'

// Callers load this module lazily and take the mode choice from it along with the front.
export {chooseMode, type TerminalMode} from './mode.js'

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
  /** Whose seconds the events carry, for the time on each line: a rehearsal's scenario seconds, or the wall clock's. Default: wall. */
  clock?: ClockKind
  /**
   * The command's stop (onStopSignals): a question still open when it fires is withdrawn and
   * taken as no. A terminal that hung up at the question can never answer it, and the command
   * would otherwise wait there for ever with its locks held and their leases renewed.
   */
  stop?: AbortSignal
}

/** A line held back in lines mode waits at most this long for what follows it (ms). */
const holdMs = 1000

/**
 * A pty allocated without a size (some containers, `script`) reports 0 columns and 0 rows: listr2
 * would wrap its list one character per line (it sizes by process.stdout, log-update by the
 * stream), and log-update would cut every frame to 0 rows, so nothing would show until the end.
 */
function hasSize(stream: NodeJS.WritableStream): boolean {
  const {columns, rows} = stream as Partial<NodeJS.WriteStream>
  return columns !== 0 && rows !== 0 && process.stdout.columns !== 0
}

/** The engine's way to a person at a terminal: progress on stderr, questions by prompt. */
export class TerminalIO implements EngineIO {
  private readonly stream: NodeJS.WritableStream
  private readonly mode: TerminalMode
  private readonly view?: ListrView
  private readonly log?: LineLog
  private timer?: NodeJS.Timeout
  private planShown = false

  constructor(private readonly options: TerminalIOOptions) {
    this.stream = options.stream ?? process.stderr
    this.mode = options.mode === 'tty' && !hasSize(this.stream) ? 'lines' : options.mode
    if (this.mode === 'tty') this.view = new ListrView(this.stream, options.clock ?? 'wall')
    if (this.mode === 'lines') this.log = new LineLog((lines) => this.write(lines), options.clock ?? 'wall')
  }

  notify(event: RunEvent): void {
    if (this.mode === 'silent') return
    if (this.view) return this.view.notify(event)
    // A live run shows its plan, in live numbers, before it asks; the engine's plan that follows
    // says the same steps again in fewer words.
    if (event.type === 'plan' && this.planShown) return
    if (event.type === 'plan') this.planShown = true
    if (!this.log) return this.write(formatEvent(event))
    this.log.notify(event)
    // A live step that waits (a hook, a bake without a gate) still shows its line within a second.
    clearTimeout(this.timer)
    if (this.log.holding) this.timer = setTimeout(() => this.log?.flush(), holdMs).unref()
  }

  async confirm(question: string, context: string[]): Promise<boolean> {
    // What the question is about is shown whether or not anyone can answer: a refused or
    // auto-approved live run still says what it would change. Under a running step the view puts
    // it in that step's output; before the first step, above the question.
    this.log?.flush()
    const host = this.options.yes || !this.options.interactive ? undefined : await this.view?.promptHost()
    if (this.mode !== 'silent' && !host) {
      if (this.view) this.view.say(context)
      else this.write(context)
    }
    if (this.options.yes) {
      this.approvedByYes(question)
      return true
    }
    if (!this.options.interactive) {
      throw new RefusedError(`${question} needs an answer, but this run is not interactive; pass --yes to approve`)
    }
    if (this.view && host) return this.view.askInTask(host, question, context, this.options.input, this.options.stop)
    // Asked even under --json (silent): a person is there, and prompts go to stderr, not stdout.
    if (this.mode === 'silent') this.write(context)
    return ask(question, unendable(this.stream), this.options.input, this.options.stop)
  }

  /**
   * A live run's approval: asked only of a person at this terminal (--yes never answers it); null
   * when nobody can answer here, or when the signal withdraws the question (answered elsewhere).
   */
  async ask(question: string, context: string[], signal: AbortSignal): Promise<boolean | null> {
    if (this.mode !== 'silent' && !this.view) this.write(context)
    if (!this.options.interactive) return null
    const host = await this.view?.promptHost()
    if (signal.aborted) return null
    let yes: boolean
    if (this.view && host) yes = await this.view.askInTask(host, question, context, this.options.input, signal)
    else {
      if (this.mode === 'silent') this.write(context)
      yes = await ask(question, unendable(this.stream), this.options.input, signal)
    }
    return signal.aborted ? null : yes
  }

  /** Lines that are not the engine's events (who runs it, a resume), in their place among them. */
  note(lines: string[]): void {
    if (this.mode === 'silent') return
    if (this.view) return this.view.say(lines)
    this.log?.flush()
    this.write(lines)
  }

  /** Resolves once the renderer has finished drawing (call after run-end). */
  async close(): Promise<void> {
    clearTimeout(this.timer)
    this.log?.close()
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
