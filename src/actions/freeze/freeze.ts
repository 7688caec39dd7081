import type {FreezeRecord} from '../../ports/control-plane.js'
import {freezeSchema, type FreezeStep} from './schema.js'
import {sameState, type ActionDefinition, type LiveView} from '../action.js'

/** Freezes deployments and configuration changes; pipelines ask `sluice freeze check` before they deploy. */
export const freeze: ActionDefinition<FreezeStep, typeof freezeSchema> = {
  action: 'freeze',
  schema: freezeSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Freeze changes: ${step.reason}`,
  plan: (step) => [`record a change freeze: ${step.reason}${step.expires ? ` (expires after ${step.expires} s)` : ''}`],
  // A plan knows the run's freeze only by what it will be: marked as this run's, so a later unfreeze sees its own.
  project: (step, live) => (live.freeze === null ? {...live, freeze: {by: 'this run', reason: step.reason, since: '', runId: planningRun}} : live),
  expects: (_step, {live}) =>
    live.freeze ? [`a change freeze is in place already (${describeFreeze(live.freeze)}): the step leaves it and sets none of its own`] : [],
  // The freeze lives in sluice's own state, not on the load balancer: nothing to confirm or lock.
  changesLive: false,
  scaleTimes: (step, {seconds}) => ({...step, ...(step.expires === undefined ? {} : {expires: seconds(step.expires)})}),
  locks: () => [],
  iam: () => [],
  mutations: {
    freeze: {
      subject: (m) => `${m.resource}#freeze`,
      async settle(m, control) {
        const now = await control.freeze.get()
        if (now && sameState(now, m.after)) return 'applied'
        return now === null ? 'not applied' : null
      },
      async undo(changes, control) {
        const found = changes[0].before as FreezeRecord | null
        const last = changes.at(-1)!
        if (sameState(found, last.after)) return 'the freeze is as the run found it'
        // Someone may have frozen since, for reasons of their own: that freeze is not the run's to lift.
        const now = await control.freeze.get()
        if (now === null) return 'the freeze the run set has been lifted already'
        if (!sameState(now, last.after)) return `the freeze in place now is not the one the run set (${describeFreeze(now)})`
        return {
          kind: 'unfreeze',
          resource: last.resource,
          before: last.after,
          after: found,
          describe: found ? `put back the change freeze the run found (${found.reason})` : 'clear the change freeze the run set',
          apply: () => (found ? control.freeze.set(found, control.runId) : control.freeze.clear(control.runId)),
        }
      },
      async drift(changes, control) {
        const record = changes.at(-1)!.after as FreezeRecord
        // Another freeze in place keeps changes frozen all the same: not the run's to replace.
        if ((await control.freeze.get()) !== null) return null
        return {
          subject: 'the change freeze',
          left: describeFreeze(record),
          now: 'no freeze',
          reapply: [
            {
              kind: 'freeze',
              resource: 'change freeze',
              before: null,
              after: record,
              describe: `freeze changes again (${record.reason})`,
              apply: () => control.freeze.set(record, control.runId),
            },
          ],
        }
      },
    },
  },
  async run(step, ctx) {
    const current = await ctx.control.freeze.get()
    if (current) return {status: 'done', message: `already frozen since ${current.since} by ${current.by}: ${current.reason}`}
    // The run's clock, not the machine's: live it is the wall clock; in a rehearsal it is the
    // scenario's virtual seconds (from the epoch), so the same rehearsal records the same freeze.
    const now = new Date(ctx.control.clock.now() * 1000)
    const record: FreezeRecord = {
      by: ctx.control.operator,
      reason: step.reason,
      since: now.toISOString(),
      ...(ctx.control.runId === undefined ? {} : {runId: ctx.control.runId}),
      ...(ctx.control.byHand ? {byHand: true} : {}),
      ...(step.expires === undefined ? {} : {expires: new Date(now.getTime() + step.expires * 1000).toISOString()}),
    }
    await ctx.change('freeze', 'change freeze', null, record, () => ctx.control.freeze.set(record, ctx.control.runId))
    return {status: 'done', message: `frozen by ${record.by}: ${record.reason}`}
  },
}

/** The run id a plan gives the freeze its own freeze step will set (the run has no id while it is only planned). */
export const planningRun = '(this run)'

/** Who a run is, as a freeze's owner: its run id, its operator, and whether it is one command typed by hand. */
export interface FreezeOwner {
  runId?: string
  operator: string
  byHand?: boolean
}

/**
 * Whether a freeze is the run's own to lift: the run that set it (a resumed run is the same run),
 * or, for a command typed by hand (`sluice unfreeze`), the operator who set it by hand.
 */
export function isOwnFreeze(record: FreezeRecord, who: FreezeOwner): boolean {
  return (record.runId !== undefined && record.runId === who.runId) || (who.byHand === true && record.byHand === true && record.by === who.operator)
}

/** Whether the freeze in a plan is the planning run's own: the one its freeze step will set, or one the planner owns (isOwnFreeze). */
export function plannedAsOwn(record: FreezeRecord, live: LiveView): boolean {
  return record.runId === planningRun || (live.planner !== undefined && isOwnFreeze(record, live.planner))
}

/** Whose freeze, since when, and why: what a person needs before lifting it. */
export function describeFreeze(record: FreezeRecord): string {
  return `frozen since ${record.since} by ${record.by}${record.runId ? ` in run ${record.runId}` : ''}: ${record.reason}`
}
