import type {FreezeRecord} from '../../ports/control-plane.js'
import {unfreezeSchema, type UnfreezeStep} from './schema.js'
import {sameState, type ActionDefinition} from '../action.js'
import {describeFreeze, isOwnFreeze, plannedAsOwn} from '../freeze/freeze.js'

/**
 * Lifts the change freeze this run set. A freeze is its owner's: the run that set it, or the
 * operator who set it with `sluice freeze` (who lifts it with `sluice unfreeze`). A runbook's
 * unfreeze step that finds another's freeze leaves it in place and says so: it set nothing to
 * lift (its freeze step found that freeze already there). Lifting another's freeze takes `force`,
 * and the override is journalled with whose freeze it was.
 */
export const unfreeze: ActionDefinition<UnfreezeStep, typeof unfreezeSchema> = {
  action: 'unfreeze',
  schema: unfreezeSchema,
  defaultOnFailure: 'abort',
  title: () => 'Lift the change freeze',
  plan: (step) => [step.force ? 'clear the change freeze, whoever set it' : 'clear the change freeze this run set'],
  project: (step, live) => (live.freeze && (step.force || plannedAsOwn(live.freeze, live)) ? {...live, freeze: null} : live),
  expects(step, {live}) {
    if (live.freeze === null) return ['no change freeze is in place: there is nothing to lift']
    // Its own: the freeze its freeze step will set, one it set before it was resumed, or (typed by hand) its operator's own.
    if (!live.freeze || step.force || plannedAsOwn(live.freeze, live)) return []
    return [`the freeze in place is not this run's (${describeFreeze(live.freeze)}): the step leaves it in place (force: true lifts it)`]
  },
  changesLive: false,
  locks: () => [],
  iam: () => [],
  mutations: {
    unfreeze: {
      subject: (m) => `${m.resource}#freeze`,
      async settle(m, control) {
        const now = await control.freeze.get()
        if (now === null) return 'applied'
        return sameState(now, m.before) ? 'not applied' : null
      },
      async undo(changes, control) {
        const found = changes[0].before as FreezeRecord | null
        const last = changes.at(-1)!
        if (found === null) return 'the run set the freeze and lifted it itself'
        const now = await control.freeze.get()
        if (now !== null) return `a freeze is in place again (${describeFreeze(now)})`
        return {
          kind: 'freeze',
          resource: last.resource,
          before: null,
          after: found,
          describe: `put back the change freeze (${found.reason})`,
          apply: () => control.freeze.set(found, control.runId),
        }
      },
      // A freeze set since the run lifted its own is whoever set it's, for them to lift: never drift.
      drift: async () => null,
    },
  },
  async run(step, ctx) {
    let current: FreezeRecord | null
    try {
      current = await ctx.control.freeze.get()
    } catch (error) {
      // A damaged freeze record blocks every deploy pipeline; force is the way to clear it.
      if (!step.force) throw error
      const damaged = (error as Error).message
      ctx.warn(`clearing a damaged freeze record by force: ${damaged}`)
      await ctx.change('unfreeze', 'change freeze', {damaged}, null, () => ctx.control.freeze.clear(ctx.control.runId))
      return {status: 'done', message: 'cleared a damaged freeze record, by force'}
    }
    if (!current) return {status: 'done', message: 'nothing to unfreeze: no freeze in place'}
    const control = ctx.control
    const ours = isOwnFreeze(current, control)
    if (!ours && !step.force) {
      const whose = `the freeze in place is not this run's to lift (${describeFreeze(current)})`
      // Typed as a command, the one thing asked cannot be done: refused. In a runbook, the run set
      // no freeze of its own, so there is none of its own to lift: the other stays, and the run goes on.
      if (control.byHand) return {status: 'refused', message: `${whose}; lift it with --force, which the journal records`}
      ctx.warn(`${whose}: left in place; this run set none of its own to lift (force: true lifts it, journalled)`)
      return {status: 'done', message: `left the freeze in place: ${describeFreeze(current)}`}
    }
    if (!ours) ctx.warn(`lifting a freeze this run did not set, by force: ${describeFreeze(current)}`)
    await ctx.change('unfreeze', 'change freeze', current, null, () => ctx.control.freeze.clear(ctx.control.runId))
    return {status: 'done', message: `unfrozen (was ${describeFreeze(current)})${ours ? '' : ', by force'}`}
  },
}
