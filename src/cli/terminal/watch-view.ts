import {clockStamp} from '../../format.js'
import type {JournalEntry} from '../../ports/state-store.js'
import {eventOf} from '../../state/journal.js'
import {entryLine, entryText} from '../../report/journal.js'
import type {TerminalIO} from './terminal-io.js'

/**
 * A run that another process executes, read from its journal and drawn the way that process's
 * own terminal draws it: the same listr2 view in a terminal (steps, weights, verdicts, the bake
 * counting down), the same timestamped lines without one.
 */
export class WatchView {
  constructor(
    private readonly io: TerminalIO,
    private readonly runId: string,
  ) {}

  /**
   * `past`: the entry belongs to an attempt before the one now running (a run that was resumed);
   * those are shown as `sluice journal` shows them, since the view draws one attempt's steps.
   */
  show(entry: JournalEntry, past: boolean): void {
    if (past) {
      const line = entryLine(this.runId, entry)
      if (line !== null) this.io.note([line])
      return
    }
    const event = eventOf(entry)
    if (event) return this.io.notify(event)
    const said = entryText(this.runId, entry)
    if (said) this.io.note([`${clockStamp(Date.parse(entry.at) / 1000, 'wall')} ${said.text}`])
  }

  close(): Promise<void> {
    return this.io.close()
  }
}
