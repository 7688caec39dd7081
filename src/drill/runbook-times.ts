import type {Gate, Runbook, Step} from '../runbook/runbook.js'
import {typePath} from './load-generator.js'

/**
 * A runbook on a drill's clock: every duration it gives (bakes, gate windows and intervals,
 * timeouts, waits, a freeze's expiry, Retry-After) times the time scale, so a step takes the
 * same share of the drill as of the incident. Counts (batches, successes, failure limits) and
 * thresholds are unchanged. Retry-After is a whole number of seconds on the wire, at least 1.
 */
export function scaleRunbookTimes(runbook: Runbook, timeScale: number): Runbook {
  const s = (seconds: number): number => seconds * timeScale
  const gate = (g: Gate): Gate => ({...g, window: s(g.window), interval: s(g.interval)})
  const steps = runbook.steps.map((step): Step => {
    const timeout = step.timeout === undefined ? {} : {timeout: s(step.timeout)}
    switch (step.action) {
      case 'freeze':
        return {...step, ...timeout, ...(step.expires === undefined ? {} : {expires: s(step.expires)})}
      case 'restrict':
        return {...step, ...timeout, retryAfter: Math.max(1, Math.round(s(step.retryAfter)))}
      case 'cycle':
        return {
          ...step, ...timeout,
          drainTimeout: s(step.drainTimeout),
          healthyTimeout: s(step.healthyTimeout),
          bake: s(step.bake),
          ...(step.restart ? {restart: {...step.restart, timeout: s(step.restart.timeout)}} : {}),
          ...(step.remediate ? {remediate: {...step.remediate, timeout: s(step.remediate.timeout)}} : {}),
          ...(step.slowStart === undefined ? {} : {slowStart: s(step.slowStart)}),
          ...(step.gate ? {gate: gate(step.gate)} : {}),
        }
      case 'ramp':
        return {...step, ...timeout, bake: s(step.bake), ...(step.gate ? {gate: gate(step.gate)} : {})}
      case 'check':
        return {...step, ...timeout, bake: s(step.bake), gate: gate(step.gate)}
      case 'wait':
        return {...step, ...timeout, for: s(step.for)}
      default:
        return {...step, ...timeout}
    }
  })
  return {...runbook, steps}
}

/**
 * A runbook's restrictions on the drill's traffic: the load generator sends each traffic type to
 * a path of its own (typePath), not to the paths the runbook names for production, so a restrict
 * step turns its type away by that path. Everything else about the step is the runbook's.
 */
export function drillRestrictions(runbook: Runbook): Runbook {
  return {...runbook, steps: runbook.steps.map((step): Step => (step.action === 'restrict' ? {...step, paths: [typePath(step.type)], headers: {}} : step))}
}
