/**
 * The bounds on a runbook's numbers, in one place. Each is wide enough for any real recovery and
 * narrow enough that no value the loader accepts can hang sluice, exhaust its memory, or be
 * refused by AWS halfway through a live run.
 */
export const limits = {
  /**
   * Seconds any duration may be (bakes, waits, timeouts, expiries, TTLs, Retry-After): a staged
   * recovery is watched by a person, and a day is past any step they would sit through.
   */
  maxSeconds: 86_400,
  /** Seconds between gate verdicts, at the least: CloudWatch's finest metric period is 1 s. */
  minGateInterval: 1,
  /** Verdicts a gate may need or tolerate: past this a gate is a wait that never decides. */
  maxVerdicts: 100,
  /** Weights a generated schedule (linear, exponential) may make: one DNS change and bake each. */
  maxScheduleSteps: 100,
  /** ALB slow start: 0 turns it off, otherwise AWS takes 30–900 s. */
  slowStart: {min: 30, max: 900},
} as const

/** `86400 s (a day)`, for messages. */
export const maxSecondsText = `${limits.maxSeconds} s (a day)`
