import type {FreezeRecord} from '../ports/control-plane.js'
import type {UnfreezeStep} from '../runbook/runbook.js'
import {sameState, type ActionDefinition} from './action.js'

/** Lifts the change freeze so deployments may go ahead again. */
export const unfreeze: ActionDefinition<UnfreezeStep> = {
  action: 'unfreeze',
  defaultOnFailure: 'abort',
  title: () => 'Lift the change freeze',
  plan: () => ['clear the change freeze'],
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
      undo(changes, control) {
        const found = changes[0].before as FreezeRecord | null
        const last = changes.at(-1)!
        // A freeze the run set and then cleared itself leaves nothing to put back.
        if (found === null) return null
        return {kind: 'freeze', resource: last.resource, before: null, after: found, describe: `put back the change freeze (${found.reason})`, apply: () => control.freeze.set(found)}
      },
    },
  },
  async run(_step, ctx) {
    const current = await ctx.control.freeze.get()
    if (!current) return {status: 'done', message: 'nothing to unfreeze: no freeze in place'}
    await ctx.change('unfreeze', 'change freeze', current, null, () => ctx.control.freeze.clear())
    return {status: 'done', message: `unfrozen (was frozen since ${current.since} by ${current.by})`}
  },
}
