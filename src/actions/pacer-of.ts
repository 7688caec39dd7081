import {RampPacer} from '../pacing/ramp-pacer.js'
import type {PaceRule} from '../pacing/rule.js'
import type {Gate} from '../runbook/gate.js'
import type {ActionContext} from './action.js'

/**
 * The pacer of a step whose schedule is `auto`, on its run's context: demand read over the gate's
 * window (or the bake, at least a minute), a look for room every gate interval. Null for a
 * written schedule.
 */
export function pacerOf(step: {pace?: PaceRule; gate?: Gate; bake: number}, ctx: ActionContext, ttl: number): RampPacer | null {
  if (!step.pace) return null
  return new RampPacer(
    step.pace,
    {control: ctx.control, metrics: () => ctx.metrics(), signal: ctx.signal, hold: (t, w) => ctx.hold(t, w), progress: (m) => ctx.progress(m)},
    step.gate?.window ?? Math.max(step.bake, 60),
    step.gate?.interval ?? 10,
    step.bake,
    ttl,
  )
}
