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
    let timed = step.timeout === undefined ? step : {...step, timeout: seconds(step.timeout)}
    // A paced step's rule is the same for every action that paces: its wait for room, and its clients' interval.
    if ('pace' in timed && timed.pace) {
      const {wait, clientInterval} = timed.pace
      timed = {...timed, pace: {...timed.pace, wait: seconds(wait), ...(clientInterval === undefined ? {} : {clientInterval: seconds(clientInterval)})}}
    }
    return actionOf(timed).scaleTimes?.(timed, {seconds, gate}) ?? timed
  })
  return {...runbook, steps}
}

/**
 * The runbook with every rate it states times `rateScale`, and every count of requests times both
 * scales, so that live reads of a drill's scaled pool are judged on its scale: a target's stated
 * capacity (targets.capacityPerTarget, a cycle's capacityPerTarget, a paced ramp's) and a gate's minRequests.
 */
export function scaleRunbookRates(runbook: Runbook, scales: {rateScale: number; timeScale: number}): Runbook {
  const {rateScale, timeScale} = scales
  const capacity = runbook.targets.capacityPerTarget
  const targets = capacity
    ? {...runbook.targets, capacityPerTarget: Object.fromEntries(Object.entries(capacity).map(([p, c]) => [p, c * rateScale]))}
    : runbook.targets
  const steps = runbook.steps.map((step): Step => {
    let scaled: Step = step
    if ('capacityPerTarget' in scaled && typeof scaled.capacityPerTarget === 'number')
      scaled = {...scaled, capacityPerTarget: scaled.capacityPerTarget * rateScale}
    // A paced ramp took its pool's capacity from targets.capacityPerTarget when it was resolved.
    if ('pace' in scaled && scaled.pace && scaled.pace.perTarget !== null)
      scaled = {...scaled, pace: {...scaled.pace, perTarget: scaled.pace.perTarget * rateScale}}
    return scaled
  })
  return scaleGateCounts({...runbook, targets, steps}, rateScale * timeScale)
}

/**
 * The runbook with each gate's minRequests times `countScale`, the requests its gates count for
 * each of the scenario's (a drill's rate scale × time scale): the real side's gates read the scaled
 * fleet, and the prediction's count as many (predict's countScale), so both ask for as many.
 */
export function scaleGateCounts(runbook: Runbook, countScale: number): Runbook {
  if (countScale === 1) return runbook
  const gate = (g: Gate): Gate => (g.minRequests === undefined ? g : {...g, minRequests: Math.max(1, Math.ceil(g.minRequests * countScale))})
  const steps = runbook.steps.map((step): Step => ('gate' in step && step.gate ? {...step, gate: gate(step.gate)} : step))
  return {...runbook, steps}
}
