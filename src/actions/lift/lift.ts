import type {Restriction} from '../../ports/control-plane.js'
import {liftSchema, type LiftStep} from './schema.js'
import type {ActionDefinition} from '../action.js'
import {describeTypes, resolveRestriction, restrictedType, restrictionSubject} from '../restrict/restriction.js'
import {backendOf} from '../../runbook/targets.js'

/** Lets a restricted traffic type through again. */
export const lift: ActionDefinition<LiftStep, typeof liftSchema> = {
  action: 'lift',
  schema: liftSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Lift the restriction on ${step.type} traffic`,
  plan: (step, {targets, live}) => [
    `remove the restriction on ${step.type} from ${live?.rulesLabel ?? backendOf(targets).restrictionsLabel}`,
    ...(live?.restricted ? [`restricted: ${describeTypes(live.restricted)} → ${describeTypes(live.restricted.filter((t) => t !== step.type))}`] : []),
  ],
  project: (step, live) => (live.restricted ? {...live, restricted: live.restricted.filter((t) => t !== step.type)} : live),
  changesLive: true,
  changes: 'restrictions',
  resolve: (raw, ctx) => resolveRestriction(raw, ctx) as LiftStep,
  locks: (_step, targets) => backendOf(targets).locks.restrictions(),
  iam: (_step, targets) => backendOf(targets).iam.lift(),
  mutations: {
    lift: {
      subject: restrictionSubject,
      async settle(m, control) {
        const present = (await control.restrictions!.list()).some((r) => r.type === restrictedType(m))
        return present ? 'not applied' : 'applied'
      },
      async undo(changes, control) {
        const found = changes[0].before as Restriction | null
        const last = changes.at(-1)!
        if (found === null || found === undefined) return `the run added the restriction on ${restrictedType(last)} and lifted it itself`
        return {
          kind: 'restrict',
          resource: last.resource,
          before: null,
          after: found,
          describe: `put back the restriction on ${found.type} on ${last.resource}`,
          apply: () => control.restrictions!.add(found),
        }
      },
      async drift(changes, control) {
        const last = changes.at(-1)!
        const type = restrictedType(last)
        const found = (await control.restrictions!.list()).find((r) => r.type === type)
        if (!found) return null
        return {
          subject: `the restriction on ${type} on ${last.resource}`,
          left: 'lifted',
          now: 'in place again',
          reapply: [
            {
              kind: 'lift',
              resource: last.resource,
              before: found,
              after: null,
              describe: `lift the restriction on ${type} from ${last.resource} again`,
              apply: async () => void (await control.restrictions!.remove(type)),
            },
          ],
        }
      },
    },
  },
  async run(step, ctx) {
    const rules = ctx.restrictions()
    const existing = (await rules.list()).find((r) => r.type === step.type)
    if (!existing) return {status: 'done', message: `nothing to lift: ${step.type} is not restricted`}
    await ctx.change('lift', rules.label, existing, null, () => rules.remove(step.type))
    return {status: 'done', message: `${step.type} traffic is let through again`}
  },
}
