import type {CheckStep, WaitStep} from '../runbook/load.js'
import type {Action} from './context.js'

export const wait: Action<WaitStep> = async (step, ctx) => {
  await ctx.control.clock.sleep(step.for, ctx.signal)
  if (ctx.signal.aborted) return {status: 'interrupted', message: 'interrupted while waiting'}
  return {status: 'done', message: `waited ${step.for} s`}
}

/** A gate on its own: watches a metric for the bake and passes or fails. */
export const check: Action<CheckStep> = async (step, ctx) => {
  const result = await ctx.watch(step.gate, step.bake, step.title)
  if (result.outcome === 'interrupted') return {status: 'interrupted', message: 'interrupted during the check', verdicts: result.verdicts}
  if (result.outcome === 'fail') return {status: step.onFailure === 'hold' ? 'held' : 'failed', message: result.reason!, verdicts: result.verdicts}
  return {status: 'done', message: `${result.verdicts.at(-1)!.gate}: passed`, verdicts: result.verdicts}
}
