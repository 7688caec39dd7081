import {formatNumber} from '../sweep/params.js'
import type {SweepPhase, SweepProgress} from '../sweep/sweep.js'
import type {StatusLine} from './terminal/status-line.js'

/**
 * The sweep's progress: on a terminal one bar redrawn in place (cells done and cells left); off a
 * terminal a line at each quarter of the grid. The caller passes none under --json.
 */
export function sweepProgress(status: StatusLine): SweepProgress {
  const width = 24
  let lastQuarter = -1
  let lastPhase: SweepPhase | undefined
  return (phase, done, total) => {
    const text = `${phase}: ${formatNumber(done)} of ${formatNumber(total)} cells done, ${formatNumber(total - done)} left`
    if (status.live) {
      const filled = total === 0 ? width : Math.round((done / total) * width)
      return status.show(`sweep [${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${text}`, done === total)
    }
    const quarter = total === 0 ? 4 : Math.floor((done / total) * 4)
    if (phase !== lastPhase) lastQuarter = -1
    lastPhase = phase
    // The tipping-point rounds are short; their lines would only repeat the grid's.
    if (phase === 'grid' && quarter !== lastQuarter && quarter > 0) status.keep(`sweep ${text}`)
    lastQuarter = quarter
  }
}
