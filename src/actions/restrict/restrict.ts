import type {Restriction} from '../../ports/control-plane.js'
import {restrictSchema, type RestrictStep} from './schema.js'
import {sameState, type ActionDefinition} from '../action.js'
import {checkRestriction, describeTypes, restore, restrictedType, restrictionSubject, restricts, restrictsNothing, shareNote} from './restriction.js'
import {backendOf} from '../../runbook/targets.js'

/** Turns a traffic type away at the load balancer with a fast 503 and Retry-After. */
export const restrict: ActionDefinition<RestrictStep, typeof restrictSchema> = {
  action: 'restrict',
  schema: restrictSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Restrict ${step.type} traffic`,
  plan(step, {targets, live}) {
    const match = [...step.paths.map((p) => `path ${p}`), ...Object.entries(step.headers).map(([h, v]) => `header ${h}: ${v.join('|')}`)]
    const lines = [
      `answer ${step.share < 100 ? `${step.share}% of ` : ''}${step.type} requests${match.length ? ` (${match.join(', ')})` : ''} with 503, Retry-After: ${step.retryAfter}`,
      `on ${live?.rulesLabel ?? backendOf(targets).restrictionsLabel}`,
    ]
    if (live?.restricted) lines.push(`restricted: ${describeTypes(live.restricted)} → ${describeTypes([...new Set([...live.restricted, step.type])])}`)
    return lines
  },
  project: (step, live) =>
    live.restricted
      ? {...live, restricted: [...new Set([...live.restricted, step.type])], restrictingNothing: live.restrictingNothing?.filter((t) => t !== step.type)}
      : live,
  expects: (step, {live}) =>
    live.restricted?.includes(step.type)
      ? [`${step.type} is already restricted on ${live.rulesLabel}: the step leaves that rule as it is and changes nothing`]
      : live.restrictingNothing?.includes(step.type)
        ? [`${step.type} has a restriction on ${live.rulesLabel} that restricts nothing (every request passes): the step replaces it with this one`]
        : [],
  changesLive: true,
  changes: 'restrictions',
  scaleTimes: (step, scaled) => ({...step, retryAfter: Math.max(1, Math.round(scaled.seconds(step.retryAfter)))}),
  resolve(raw, ctx) {
    checkRestriction(raw, ctx)
    return {...raw, ...ctx.common}
  },
  locks: (_step, targets) => backendOf(targets).locks.restrictions(),
  iam: (_step, targets) => backendOf(targets).iam.restrict(),
  mutations: {
    restrict: {
      subject: restrictionSubject,
      async settle(m, control) {
        const present = (await control.restrictions!.list()).some((r) => r.type === restrictedType(m) && restricts(r))
        return present ? 'applied' : 'not applied'
      },
      async undo(changes, control) {
        const last = changes.at(-1)!
        const added = last.after as Restriction
        const found = (changes[0].before ?? null) as Restriction | null
        if (sameState(found, added)) return `the restriction on ${added.type} is as the run found it`
        // A lift by degrees that failed at its last step puts a share of the restriction back: undone, it is the one the run found.
        // One the run found restricting nothing is undone by lifting: the same traffic passes.
        if (found !== null && restricts(found))
          return restore(control, last.resource, added, found, `put the restriction on ${found.type} back as the run found it on ${last.resource}`)
        return {
          kind: 'lift',
          resource: last.resource,
          before: added,
          after: null,
          describe: `lift the restriction on ${added.type} from ${last.resource}`,
          apply: async () => void (await control.restrictions!.remove(added.type)),
        }
      },
      async drift(changes, control) {
        const last = changes.at(-1)!
        const added = last.after as Restriction
        const now = (await control.restrictions!.list()).find((r) => r.type === added.type)
        if (restricts(now)) return null
        return {
          subject: `the restriction on ${added.type} on ${last.resource}`,
          left: 'in place',
          now: now ? `in place but ${restrictsNothing}` : 'gone',
          reapply: [
            {
              kind: 'restrict',
              resource: last.resource,
              before: null,
              after: added,
              describe: `restrict ${added.type} on ${last.resource} again`,
              apply: () => control.restrictions!.add(added),
            },
          ],
        }
      },
    },
  },
  async run(step, ctx) {
    const rules = ctx.restrictions()
    const existing = (await rules.list()).find((r) => r.type === step.type)
    if (restricts(existing)) return {status: 'done', message: `${step.type} is already restricted${shareNote(existing!) ? ` (${shareNote(existing!)})` : ''}`}
    // One listed that turns nothing away is replaced, not taken for a restriction in force.
    if (existing) ctx.progress(`${step.type} has a restriction on ${rules.label} that ${restrictsNothing}; replacing it`)
    const restriction: Restriction = {
      type: step.type,
      paths: step.paths,
      headers: step.headers,
      retryAfterSeconds: step.retryAfter,
      ...(step.share < 100 ? {share: step.share} : {}),
    }
    await ctx.change('restrict', rules.label, existing ?? null, restriction, () => rules.add(restriction))
    return {
      status: 'done',
      message: `${step.share < 100 ? `${step.share}% of ` : ''}${step.type} traffic now gets 503 with Retry-After: ${step.retryAfter}${existing ? `, in place of one that restricted nothing` : ''}`,
    }
  },
}
