import {formatNumber} from './params.js'
import type {SweepPhase, SweepProgress} from './sweep.js'

/**
 * The sweep's progress on stderr: on a terminal one bar redrawn in place (cells done and cells
 * left); off a terminal a line at each quarter, so a CI log shows it is moving without filling up.
 * Under --json nothing is drawn at all (the caller passes no progress then).
 */
export function progressBar(stream: NodeJS.WritableStream, live: boolean): {progress: SweepProgress; end: () => void} {
  const width = 24
  let lastDraw = 0
  let lastQuarter = -1
  let lastPhase: SweepPhase | undefined
  let drawn = false
  const text = (phase: SweepPhase, done: number, total: number): string =>
    `${phase}: ${formatNumber(done)} of ${formatNumber(total)} cells done, ${formatNumber(total - done)} left`
  return {
    progress(phase, done, total) {
      if (!live) {
        const quarter = total === 0 ? 4 : Math.floor((done / total) * 4)
        if (phase !== lastPhase) lastQuarter = -1
        lastPhase = phase
        // The tipping-point rounds are short; their lines would only repeat the grid's.
        if (phase === 'grid' && quarter !== lastQuarter && quarter > 0) stream.write(`sweep ${text(phase, done, total)}\n`)
        lastQuarter = quarter
        return
      }
      const now = Date.now()
      if (done < total && now - lastDraw < 80) return
      lastDraw = now
      const filled = total === 0 ? width : Math.round((done / total) * width)
      stream.write(`\r\x1b[2Ksweep [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${text(phase, done, total)}`)
      drawn = true
    },
    end() {
      if (live && drawn) stream.write('\r\x1b[2K')
    },
  }
}
