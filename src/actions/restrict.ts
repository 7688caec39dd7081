import type {Restriction} from '../ports/control-plane.js'
import type {LiftStep, RestrictStep} from '../runbook/load.js'
import type {Action} from './context.js'

/** Turns a traffic type away at the load balancer with a fast 503 and Retry-After. */
export const restrict: Action<RestrictStep> = async (step, ctx) => {
  const rules = ctx.rules()
  const existing = (await rules.list()).find((r) => r.type === step.type)
  if (existing) return {status: 'done', message: `${step.type} is already restricted`}
  const restriction: Restriction = {type: step.type, paths: step.paths, headers: step.headers, retryAfterSeconds: step.retryAfter}
  await ctx.change('restrict', rules.label, null, restriction, () => rules.add(restriction))
  return {status: 'done', message: `${step.type} traffic now gets 503 with Retry-After: ${step.retryAfter}`}
}

export const lift: Action<LiftStep> = async (step, ctx) => {
  const rules = ctx.rules()
  const existing = (await rules.list()).find((r) => r.type === step.type)
  if (!existing) return {status: 'done', message: `nothing to lift: ${step.type} is not restricted`}
  await ctx.change('lift', rules.label, existing, null, () => rules.remove(step.type))
  return {status: 'done', message: `${step.type} traffic is let through again`}
}
