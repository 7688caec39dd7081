import type {SimulationRecord} from './record.js'

/** Completed requests within this share of demand count as full service. */
export const fullServiceShare = 0.99

export interface RunSummary {
  /** Mean completed requests per second from the first fault to the last fix; null without faults. */
  meanServedDuringFault: number | null
  /** Share of user requests that were never completed, in percent. */
  lostPercent: number
  /**
   * Seconds from the last fix until completed rps stays within 1% of demand to the end of the run:
   * 0 when service never dropped or was back before the fix, null when it never came back.
   */
  recoveredSecondsAfterFix: number | null
  minInRotation: number
  peakErrorRatePercent: number
}

export interface FaultWindow {
  from: number
  to: number
}

export function faultWindow(faults: ReadonlyArray<FaultWindow>): FaultWindow | null {
  if (faults.length === 0) return null
  return {from: Math.min(...faults.map((f) => f.from)), to: Math.max(...faults.map((f) => f.to))}
}

/**
 * The first second from which service stays full to the end of the run, or null if it is not full
 * at the end. Full means completed requests within 1% of the demand the service was asked to serve:
 * traffic an operator restricted on purpose is left out (and reported separately).
 */
export function fullServiceSince(record: SimulationRecord): number | null {
  let since: number | null = null
  for (let i = record.ticks - 1; i >= 0; i--) {
    const asked = Math.max(0, record.demand[i] - record.restrictedDemand[i])
    if (record.served[i] + 1e-9 < fullServiceShare * asked) break
    since = record.t[i]
  }
  return since
}

export function summarize(record: SimulationRecord, window: FaultWindow | null): RunSummary {
  let demand = 0
  let served = 0
  let minInRotation = Infinity
  let peakErrorRate = 0
  let duringSum = 0
  let duringCount = 0
  for (let i = 0; i < record.ticks; i++) {
    demand += record.demand[i]
    served += record.served[i]
    if (record.inRotation[i] < minInRotation) minInRotation = record.inRotation[i]
    const attempts = record.offered[i]
    if (attempts > 0) peakErrorRate = Math.max(peakErrorRate, record.failed[i] / attempts)
    if (window && record.t[i] >= window.from && record.t[i] < window.to) {
      duringSum += record.served[i]
      duringCount++
    }
  }
  const since = fullServiceSince(record)
  const fixAt = window ? window.to : 0
  return {
    meanServedDuringFault: window && duringCount > 0 ? duringSum / duringCount : null,
    lostPercent: demand > 0 ? Math.max(0, ((demand - served) / demand) * 100) : 0,
    recoveredSecondsAfterFix: since === null ? null : Math.max(0, since - fixAt),
    minInRotation: record.ticks > 0 ? minInRotation : 0,
    peakErrorRatePercent: peakErrorRate * 100,
  }
}
