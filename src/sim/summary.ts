import type {FaultWindow} from './fault-window.js'
import type {SimulationRecord} from './record.js'

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

/**
 * The first second from which service stays full to the end of the run, or null if it is not full
 * at the end. Full means completed requests within 1% of the demand the service was asked to serve:
 * traffic an operator restricted on purpose is left out (and reported separately). Taken tick by
 * tick as the run went (src/sim/record.ts), so it is exact whatever the record's resolution.
 */
export function fullServiceSince(record: SimulationRecord): number | null {
  return record.figures.fullSince
}

/** The run summed up, from figures the record kept tick by tick: exact at any length. */
export function summarize(record: SimulationRecord, window: FaultWindow | null): RunSummary {
  const f = record.figures
  const since = f.fullSince
  const fixAt = window ? window.to : 0
  return {
    meanServedDuringFault: window && f.ticksDuringFault > 0 ? f.servedDuringFault / f.ticksDuringFault : null,
    lostPercent: f.demand > 0 ? Math.max(0, ((f.demand - f.served) / f.demand) * 100) : 0,
    // A tick's start is a multiple of a fraction (0.1 s), so the difference carries float noise: to the microsecond.
    recoveredSecondsAfterFix: since === null ? null : Math.round(Math.max(0, since - fixAt) * 1e6) / 1e6,
    minInRotation: record.ticksRecorded > 0 ? f.minInRotation : 0,
    peakErrorRatePercent: f.peakErrorRate * 100,
  }
}

/**
 * Load amplification during the fault: attempts that reached the pools (new requests and retries)
 * over the user requests behind them, from the first fault to the last fix. 1 means no retries; a
 * client that tries each request three times against a pool where every attempt fails gives ~3.
 * Null without a fault or without demand during it.
 */
export function amplificationDuringFault(record: SimulationRecord): number | null {
  const f = record.figures
  return record.window && f.demandDuringFault > 0 ? f.offeredDuringFault / f.demandDuringFault : null
}
