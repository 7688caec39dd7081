import type {FreezeRecord} from '../ports/control-plane.js'
import type {FreezeStep, UnfreezeStep} from '../runbook/load.js'
import type {Action} from './context.js'

/** Freezes deployments and configuration changes; pipelines ask `sluice freeze check` before they deploy. */
export const freeze: Action<FreezeStep> = async (step, ctx) => {
  const current = await ctx.control.freeze.get()
  if (current) return {status: 'done', message: `already frozen since ${current.since} by ${current.by}: ${current.reason}`}
  const now = new Date()
  const record: FreezeRecord = {
    by: ctx.control.operator,
    reason: step.reason,
    since: now.toISOString(),
    ...(step.expires === undefined ? {} : {expires: new Date(now.getTime() + step.expires * 1000).toISOString()}),
  }
  await ctx.change('freeze', 'change freeze', null, record, () => ctx.control.freeze.set(record))
  return {status: 'done', message: `frozen by ${record.by}: ${record.reason}`}
}

export const unfreeze: Action<UnfreezeStep> = async (_step, ctx) => {
  const current = await ctx.control.freeze.get()
  if (!current) return {status: 'done', message: 'nothing to unfreeze: no freeze in place'}
  await ctx.change('unfreeze', 'change freeze', current, null, () => ctx.control.freeze.clear())
  return {status: 'done', message: `unfrozen (was frozen since ${current.since} by ${current.by})`}
}
