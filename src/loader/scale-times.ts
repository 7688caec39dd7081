import type {Step} from '../actions/registry.js'
import type {Runbook} from './runbook.js'
import type {Gate} from '../runbook/gate.js'
import {actionOf} from '../actions/registry.js'

/**
 * A runbook on a drill's clock: every duration it gives (bakes, gate windows and intervals,
 * timeouts, waits, a freeze's expiry, Retry-After) times the time scale, so a step takes the
 * same share of the drill as of the incident. Each action scales its own durations (scaleTimes);
 * counts (batches, successes, failure limits) and thresholds are unchanged.
 */
export function scaleRunbookTimes(runbook: Runbook, timeScale: number): Runbook {
  const seconds = (s: number): number => s * timeScale
  const gate = (g: Gate): Gate => ({...g, window: seconds(g.window), interval: seconds(g.interval)})
  const steps = runbook.steps.map((step): Step => {
    const timed = step.timeout === undefined ? step : {...step, timeout: seconds(step.timeout)}
    return actionOf(timed).scaleTimes?.(timed, {seconds, gate}) ?? timed
  })
  return {...runbook, steps}
}
