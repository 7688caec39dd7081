/**
 * One line of progress for work that is not a runbook's steps (a sweep's cells, tune's search).
 * On a terminal it is redrawn in place, at most ten times a second (work that reports hundreds of
 * times a second would otherwise spend its time drawing), with the lines the caller keeps printed
 * above it. In a log only the kept lines are written, so a CI log shows the work moving without
 * filling up. listr2 draws task lists; this is one line with no tasks under it.
 */
export class StatusLine {
  private drawnAt = 0
  private text = ''

  constructor(
    private readonly write: (text: string) => void,
    /** Whether the stream is a terminal to redraw on. */
    readonly live: boolean,
    private readonly everyMs = 100,
  ) {}

  /** The live line; drawn at once when `now`, else when the last drawing is older than a tenth of a second. */
  show(text: string, now = false): void {
    this.text = text
    if (!this.live || (!now && Date.now() - this.drawnAt < this.everyMs)) return
    this.drawnAt = Date.now()
    this.write(`\r\x1b[K${text}`)
  }

  /** A line that stays: above the live line on a terminal, on a line of its own in a log. */
  keep(line: string): void {
    if (!this.live) return this.write(`${line}\n`)
    this.write(`\r\x1b[K${line}\n`)
    if (this.text) this.show(this.text, true)
  }

  /** Clears the live line, if one was drawn. */
  end(): void {
    if (this.live && this.drawnAt > 0) this.write('\r\x1b[K')
  }
}
