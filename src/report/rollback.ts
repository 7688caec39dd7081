import type {RollbackFigures} from '../drill/rollback-figures.js'

/** How a rollback went back, as a report's heading for it says. */
export const rollbackHow = (r: Pick<RollbackFigures, 'how'>): string => (r.how === 'now' ? 'at once, --now' : 'in steps onto the receiving pool')

/** A rollback in one line: how it ended, when, what it cost from its start, and its gates' verdicts. */
export function rollbackLine(r: RollbackFigures): string {
  const passed = r.verdicts.filter((v) => v.outcome === 'pass').length
  const failed = r.verdicts.filter((v) => v.outcome === 'fail').length
  const worst = r.verdicts.reduce<number | null>((w, v) => (v.value === null ? w : Math.max(w ?? 0, v.value)), null)
  const verdicts =
    r.verdicts.length === 0
      ? 'no gate verdicts'
      : `${r.verdicts.length} gate verdicts (${passed} passed, ${failed} failed, worst ${worst === null ? 'no data' : `${worst.toFixed(2)}%`})`
  return `${r.outcome === 'done' ? 'rolled back' : r.outcome}, ${Math.round(r.startedAt)}–${Math.round(r.endedAt)} s; from its start ${r.lostPercent.toFixed(1)}% of demand lost, the worst ${r.windowSeconds} s ${r.peakLossPercent.toFixed(1)}%; ${verdicts}${r.message ? `: ${r.message}` : ''}`
}
