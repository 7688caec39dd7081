import type {Restriction} from '../../ports/control-plane.js'
import type {GateVerdict} from '../../ports/io.js'
import {liftSchema, type LiftStep} from './schema.js'
import {gateFailure, gatePlan, type ActionContext, type ActionDefinition, type MutationRules, type StepOutcome} from '../action.js'
import {
  checkRestriction,
  describeRestriction,
  describeTypes,
  lifted,
  restore,
  restrictedType,
  restrictionSubject,
  restricts,
  restrictsNothing,
  shareNote,
  shareOf,
} from '../restrict/restriction.js'
import {backendOf} from '../../runbook/targets.js'
import {expandSchedule, type ScheduleData} from '../../runbook/schedule.js'
import {pacePlan, resolvePace, scheduleTitle} from '../../pacing/rule.js'
import {pacerOf} from '../pacer-of.js'
import {defaultBake} from '../../runbook/step-common.js'

/** A change of the share a restriction turns away: a lift by degrees, or its undo. */
const shareRules: MutationRules = {
  subject: restrictionSubject,
  async settle(m, control) {
    const now = (await control.restrictions!.list()).find((r) => r.type === restrictedType(m))
    if (shareOf(now) === shareOf(m.after as Restriction)) return 'applied'
    if (shareOf(now) === shareOf(m.before as Restriction)) return 'not applied'
    return null
  },
  async undo(changes, control) {
    const found = changes[0].before as Restriction | null
    const last = changes.at(-1)!
    const left = last.after as Restriction
    if (found === null) return lifted(control, last.resource, left)
    if (shareOf(found) === shareOf(left)) return `the restriction on ${found.type} is as the run found it`
    return restore(control, last.resource, left, found, `put the restriction on ${describeRestriction(found)} back on ${last.resource}`)
  },
  async drift(changes, control) {
    const last = changes.at(-1)!
    const left = last.after as Restriction
    const now = (await control.restrictions!.list()).find((r) => r.type === left.type) ?? null
    if (shareOf(now) === shareOf(left)) return null
    return {
      subject: `the restriction on ${left.type} on ${last.resource}`,
      left: `${shareOf(left)}% turned away`,
      now: now ? (shareNote(now) ?? 'all of it turned away') : 'gone',
      reapply: [restore(control, last.resource, now, left, `set the restriction on ${left.type} back to ${shareOf(left)}% turned away`)],
    }
  },
}

/** Lets a restricted traffic type through again: at once, or by degrees behind a gate. */
export const lift: ActionDefinition<LiftStep, typeof liftSchema> = {
  action: 'lift',
  schema: liftSchema,
  defaultOnFailure: 'abort',
  title: (step) =>
    step.schedule ? `Lift the restriction on ${step.type}: ${scheduleTitle(step.schedule, step.pace)}` : `Lift the restriction on ${step.type} traffic`,
  plan: (step, {targets, live}) => [
    step.schedule
      ? `let ${step.type} back by degrees, ${scheduleTitle(step.schedule, step.pace)} of it, on ${live?.rulesLabel ?? backendOf(targets).restrictionsLabel}`
      : `remove the restriction on ${step.type} from ${live?.rulesLabel ?? backendOf(targets).restrictionsLabel}`,
    ...(step.pace ? pacePlan(step.pace, probesWhy(step.type)) : []),
    ...(step.schedule ? [`bake ${step.bake} s per step`, ...gatePlan(step)] : []),
    ...(live?.restricted ? [`restricted: ${describeTypes(live.restricted)} → ${describeTypes(live.restricted.filter((t) => t !== step.type))}`] : []),
  ],
  project: (step, live) =>
    live.restricted
      ? {...live, restricted: live.restricted.filter((t) => t !== step.type), restrictingNothing: live.restrictingNothing?.filter((t) => t !== step.type)}
      : live,
  expects: (step, {live}) =>
    live.restrictingNothing?.includes(step.type)
      ? [
          `${step.type} has a restriction on ${live.rulesLabel} that restricts nothing (every request passes): the step removes it${step.schedule ? ' at once, as there is nothing to let back by degrees' : ''}`,
        ]
      : live.restricted && !live.restricted.includes(step.type)
        ? [`${step.type} is not restricted on ${live.rulesLabel}: there is nothing to lift, and the step changes nothing`]
        : [],
  changesLive: true,
  changes: 'restrictions',
  resolve(raw, ctx) {
    checkRestriction(raw, ctx)
    const {schedule: written, gate: writtenGate, bake, pace: _pace, ...rest} = raw
    const step = {...rest, ...ctx.common}
    const gate = writtenGate ? ctx.gate(writtenGate, [...ctx.path, 'gate']) : undefined
    // A written schedule refuses `pace` here, as a ramp's does; a lift at once has none to bound.
    const pace = resolvePace({schedule: written ?? null, pace: raw.pace}, ctx.path, ctx.fail, gate?.pool ?? '', undefined)
    if (written === undefined) return step
    if (pace) {
      // The type's demand cannot be read (see probesWhy), so a paced lift always probes, on the pool its gate reads.
      if (!gate?.pool) ctx.fail([...ctx.path, 'gate'], 'a lift with `schedule: auto` probes the pool its gate reads: give it a gate with a `pool`')
      if (pace.to !== 100) ctx.fail([...ctx.path, 'pace', 'to'], `expected a lift to end with the type let back whole (100), got ${pace.to}`)
      return {...step, schedule: [100], pace, ...(gate ? {gate} : {}), bake: bake ?? ctx.defaults.bake ?? defaultBake}
    }
    const schedule = expandSchedule(written as ScheduleData, [...ctx.path, 'schedule'], ctx.fail)
    if (schedule.at(-1) !== 100) ctx.fail([...ctx.path, 'schedule'], `expected the schedule to end at 100% (the type let back whole), got ${schedule.at(-1)}%`)
    return {...step, schedule, ...(gate ? {gate} : {}), bake: bake ?? ctx.defaults.bake ?? defaultBake}
  },
  metricsRead: (raw) => (raw.gate ? [raw.gate.metric] : []),
  scaleTimes: (step, {seconds, gate}) => ({
    ...step,
    ...(step.bake === undefined ? {} : {bake: seconds(step.bake)}),
    ...(step.gate ? {gate: gate(step.gate)} : {}),
  }),
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
        if (!restricts(found)) return `the restriction on ${found.type} the run removed restricted nothing (every request passed): nothing to put back`
        return restore(control, last.resource, null, found, `put back the restriction on ${describeRestriction(found)} on ${last.resource}`)
      },
      async drift(changes, control) {
        const last = changes.at(-1)!
        const type = restrictedType(last)
        const found = (await control.restrictions!.list()).find((r) => r.type === type)
        // One back that turns nothing away lets the same traffic through as none.
        if (!found || !restricts(found)) return null
        return {
          subject: `the restriction on ${type} on ${last.resource}`,
          left: 'lifted',
          now: 'in place again',
          reapply: [{...lifted(control, last.resource, found), describe: `lift the restriction on ${type} from ${last.resource} again`}],
        }
      },
    },
    'restriction-share': shareRules,
  },
  async run(step, ctx) {
    const rules = ctx.restrictions()
    const existing = (await rules.list()).find((r) => r.type === step.type)
    if (!existing) return {status: 'done', message: `nothing to lift: ${step.type} is not restricted`}
    // One that turns nothing away is removed whole, by degrees or not: there is nothing to let back.
    if (!restricts(existing)) {
      await ctx.change('lift', rules.label, existing, null, () => rules.remove(step.type))
      return {status: 'done', message: `removed the restriction on ${step.type} from ${rules.label}; it ${restrictsNothing}, so no traffic comes back`}
    }
    if (!step.schedule) {
      await ctx.change('lift', rules.label, existing, null, () => rules.remove(step.type))
      return {status: 'done', message: `${step.type} traffic is let through again`}
    }
    return liftByDegrees(step as LiftStep & {schedule: number[]; bake: number}, ctx, existing)
  },
}

/**
 * Lets a type back step by step: each step turns away less of it (the last lifts the restriction),
 * then is baked and judged. A failed gate, a failed change or an interruption puts the restriction
 * back to the last step that passed: a lift never stays on a share its gate did not pass.
 */
async function liftByDegrees(step: LiftStep & {schedule: number[]; bake: number}, ctx: ActionContext, existing: Restriction): Promise<StepOutcome> {
  const rules = ctx.restrictions()
  let current: Restriction | null = existing
  let lastGood: Restriction = existing
  const verdicts: GateVerdict[] = []
  const taken: number[] = []
  const revert = async (): Promise<string> => {
    if (current !== null && shareOf(current) === shareOf(lastGood)) return `restriction back to ${describeRestriction(lastGood)}`
    const back = restore(ctx.control, rules.label, current, lastGood, '')
    try {
      await ctx.change(back.kind, rules.label, current, lastGood, back.apply)
    } catch (error) {
      return `could not put the restriction back to ${describeRestriction(lastGood)}: ${(error as Error).message}`
    }
    current = lastGood
    return `restriction back to ${describeRestriction(lastGood)}`
  }
  const pacer = pacerOf(step, ctx, 0)
  for (let k = 0; ; k++) {
    let percent: number
    if (pacer === null) {
      if (k >= step.schedule.length) break
      percent = step.schedule[k]
      // Steps that would turn away as much as now, or more, are already behind the restriction's share.
      if (100 - percent >= shareOf(current)) continue
      if (k > 0) await ctx.checkpoint(`before ${step.type} ${percent}%, at ${describeRestriction(lastGood)}`)
    } else {
      const reached = 100 - shareOf(lastGood)
      if (current === null) break
      if (k > 0) await ctx.checkpoint(`before the next paced step, at ${describeRestriction(lastGood)}`)
      if (ctx.signal.aborted)
        return {status: 'interrupted', message: `stopped before the next paced step; holding at ${describeRestriction(lastGood)}`, verdicts}
      const next = await pacer.next(Math.round(reached), 100)
      if (next.kind === 'interrupted') return {status: 'interrupted', message: `stopped; holding at ${describeRestriction(lastGood)}`, verdicts}
      if (next.kind === 'held') return {status: 'held', message: `${next.message}; holding at ${describeRestriction(lastGood)}`, verdicts}
      percent = next.to
    }
    const away = 100 - percent
    if (ctx.signal.aborted)
      return {status: 'interrupted', message: `stopped before ${step.type} ${percent}%; holding at ${describeRestriction(lastGood)}`, verdicts}
    const at = `${step.type} ${percent}% back`
    const before: Restriction = current!
    const next: Restriction | null = away === 0 ? null : {...existing, share: away}
    try {
      if (next === null) await ctx.change('lift', rules.label, before, null, () => rules.remove(step.type))
      else await ctx.change('restriction-share', rules.label, before, next, () => rules.add(next))
      current = next
    } catch (error) {
      return {status: 'error', message: `${(error as Error).message}; ${await revert()}`, verdicts}
    }
    ctx.progress(`${at}${next ? ` (${next.share}% turned away)` : ' (lifted)'}, baking ${step.bake} s`)
    if (step.gate) {
      const result = await ctx.watch(step.gate, step.bake, at)
      verdicts.push(...result.verdicts)
      if (result.outcome === 'interrupted') return {status: 'interrupted', message: `interrupted at ${at}; ${await revert()}`, verdicts}
      if (result.outcome === 'held') return {status: 'held', message: `${result.reason}; holding at ${at}`, verdicts}
      if (result.outcome === 'fail') return {...gateFailure(step, result, await revert()), verdicts}
    } else if ((await ctx.hold(step.bake, `in the bake at ${at}`)) === 'interrupted')
      return {status: 'interrupted', message: `interrupted at ${at}; ${await revert()}`, verdicts}
    if (next !== null) lastGood = next
    taken.push(percent)
    const settled = pacer ? await pacer.took(percent) : {kind: 'done' as const}
    if (settled.kind === 'interrupted') return {status: 'interrupted', message: `stopped at ${at}`, verdicts}
    if (settled.kind === 'held') return {status: 'held', message: `${settled.message}; holding at ${describeRestriction(lastGood)}`, verdicts}
  }
  return {status: 'done', message: `${step.type} traffic is let through again, by degrees: ${taken.map((p) => `${p}%`).join(' → ')}`, verdicts}
}

/** Why a paced lift probes rather than sizing its steps: the plan says it. */
const probesWhy = (type: string) =>
  `the share of ${type} let back probes the gate's pool: no source sluice reads counts the ${type} requests a restriction turns away (HAProxy answers them in the frontend, before any backend counts them), so its demand is unknown and never guessed`
