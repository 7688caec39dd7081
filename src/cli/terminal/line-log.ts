import {clockStamp, formatEvent, gateWindowText, stepName, terminalMutationText, verdictText, type ClockKind} from '../../format.js'
import type {GateVerdict, RunEvent} from '../../ports/io.js'

// The run as a log a person reads without a terminal (CI): each line leads with the time it
// happened, and a line is printed when it changes the picture. The journal keeps every event;
// this decides only what is printed.
//
// - Verdicts: a fail, a no-data, and the first pass after either are printed as they come; a
//   gate window's passes (a ramp stage, a batch, a watch) are one line when the window ends.
// - What a step says at one instant is one line: a step's start takes the line that follows it at
//   the same second, a change takes the status that follows it, a status that something else
//   replaces within the same second (it lasted no time) is not printed, and a window that ends as
//   its step ends goes on the step's end line (after the outcome, which keeps its place).
// The line held back for that is printed by the next event, by flush(), or by the caller's timer.

type HeldKind = 'start' | 'change' | 'status' | 'window' | 'final'

interface Held {
  step: number
  stamp: string
  kind: HeldKind
  text: string
}

interface Window {
  step: number
  key: string
  /** The time of the step's event before the window's first verdict: when the bake began. */
  since: number
  last: GateVerdict
  passes: number
  count: number
}

const label = (step: number): string => `[${stepName(step)}]`

export class LineLog {
  private held?: Held
  private window?: Window
  /** The latest clock seconds an event carried: the time of events that carry none. */
  private now?: number
  /** Per step that has started, the time of its latest event other than a verdict. */
  private readonly lastAt = new Map<number, number>()

  constructor(
    private readonly write: (lines: string[]) => void,
    private readonly clock: ClockKind,
  ) {}

  /** Whether a line is held back, waiting for what follows it. */
  get holding(): boolean {
    return this.held !== undefined
  }

  notify(event: RunEvent): void {
    // A bake's countdown is for the live views; the status before it already says how long it bakes.
    if (event.type === 'bake') return
    const at = event.type === 'verdict' ? event.verdict.at : 'at' in event ? event.at : undefined
    if (at !== undefined) this.now = at
    if (event.type === 'verdict') return this.verdict(event.verdict)
    if (event.type === 'plan') return this.out(formatEvent(event))
    if (event.type === 'run-end') this.closeWindow()
    const step = this.stepOf(event)
    if (step !== undefined && this.window && (this.window.step === step || event.type === 'step-start')) this.closeWindow()
    const stamp = this.stamp()
    if (event.type === 'step-start') {
      this.lastAt.set(event.step, event.at)
      return this.hold({step: event.step, stamp, kind: 'start', text: `start ${event.title}`})
    }
    if (step === undefined || !this.lastAt.has(step)) return this.out(formatEvent(event))
    if (at !== undefined) this.lastAt.set(step, at)
    const held = this.held?.step === step && this.held.stamp === stamp ? this.held : undefined
    switch (event.type) {
      case 'progress':
        if (held?.kind === 'start' || held?.kind === 'change') return this.hold({...held, kind: 'final', text: `${held.text} — ${event.message}`}, held)
        if (held?.kind === 'status') this.held = undefined
        return this.hold({step, stamp, kind: 'status', text: `progress ${event.message}`})
      case 'mutation': {
        const text = terminalMutationText(event.mutation)
        if (text === undefined) return
        if (event.mutation.phase === 'outcome') return this.out(formatEvent(event))
        if (held?.kind === 'start') return this.hold({...held, kind: 'change', text: `${held.text} — ${text}`}, held)
        if (held?.kind === 'status') this.held = undefined
        return this.hold({step, stamp, kind: 'change', text})
      }
      case 'step-end': {
        const [end] = formatEvent(event)
        // The outcome keeps its place after the label, where a scan for `] done` or `] FAILED` finds it.
        if (held?.kind === 'window') {
          this.held = undefined
          return this.write([`${stamp} ${end} — ${held.text}`])
        }
        return this.out(formatEvent(event))
      }
      default:
        return this.out(formatEvent(event))
    }
  }

  /** Prints the line held back, if any; an open gate window stays open. */
  flush(): void {
    const held = this.held
    this.held = undefined
    if (held) this.write([`${held.stamp} ${label(held.step)} ${held.text}`])
  }

  /** The run is over (or stopped): everything held back is printed. */
  close(): void {
    this.closeWindow()
    this.flush()
  }

  private verdict(v: GateVerdict): void {
    const key = `${v.gate} (${v.context})`
    if (this.window && (this.window.step !== v.step || this.window.key !== key)) this.closeWindow()
    const stamp = this.stamp()
    if (this.held && this.held.stamp !== stamp) this.flush()
    const w = (this.window ??= {step: v.step, key, since: this.lastAt.get(v.step) ?? v.at, last: v, passes: 0, count: 0})
    const recovered = v.outcome === 'pass' && w.count > 0 && w.last.outcome !== 'pass'
    w.count++
    w.passes = v.outcome === 'pass' ? w.passes + 1 : 0
    w.last = v
    if (v.outcome !== 'pass' || recovered) this.out([`${label(v.step)} ${verdictText(v)}`])
  }

  /** A window that ended on a pass is one line, held so that a step ending with it shares it. */
  private closeWindow(): void {
    const w = this.window
    this.window = undefined
    if (!w || w.last.outcome !== 'pass') return
    const stamp = clockStamp(w.last.at, this.clock)
    if (this.held) this.flush()
    this.held = {step: w.step, stamp, kind: 'window', text: gateWindowText(w.last, w.passes, w.count, w.last.at - w.since)}
  }

  /** Holds a line back; one that replaces the line held (merged into it) does not print that one. */
  private hold(next: Held, replaces?: Held): void {
    if (this.held !== replaces) this.flush()
    this.held = next
  }

  private stepOf(event: RunEvent): number | undefined {
    switch (event.type) {
      case 'mutation':
        return event.mutation.step
      case 'step-start':
      case 'progress':
      case 'warning':
      case 'step-end':
        return event.step
      default:
        return undefined
    }
  }

  /** Before any event has carried a time, a live run's is the wall clock's; a rehearsal's has none yet. */
  private stamp(): string {
    const now = this.now ?? (this.clock === 'wall' ? Date.now() / 1000 : undefined)
    return now === undefined ? '' : clockStamp(now, this.clock)
  }

  /** Lines printed now, after whatever was held back, each with the time. */
  private out(lines: string[]): void {
    this.flush()
    const stamp = this.stamp()
    this.write(stamp ? lines.map((l) => `${stamp} ${l}`) : lines)
  }
}
