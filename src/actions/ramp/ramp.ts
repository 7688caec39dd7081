import {rampSchema, type RampStep} from './schema.js'
import {defaultBake} from '../../runbook/step-common.js'
import {backendOf} from '../../runbook/targets.js'
import {gatePlan, type ActionDefinition} from '../action.js'
import {expandSchedule, type ScheduleData} from '../../runbook/schedule.js'
import {pacePlan, resolvePace, scheduleTitle} from '../../pacing/rule.js'
import {planSplit, splitPlanText} from '../../pacing/split.js'
import {countsAtFull, describeWeights, rampExpects, runWeightsRamp, wayBackPlan, weightsAt, weightsRules} from '../weights-ramp.js'

export const ramp: ActionDefinition<RampStep, typeof rampSchema> = {
  action: 'ramp',
  schema: rampSchema,
  defaultOnFailure: 'rollback',
  title: (step) => `Ramp ${step.set}: ${scheduleTitle(step.schedule, step.pace)}`,
  plan(step, {targets, live}) {
    const others = Object.keys(backendOf(targets).weightedSets ?? {}).filter((s) => s !== step.set)
    const lines = [`${step.set} ${scheduleTitle(step.schedule, step.pace)} of ${backendOf(targets).weightsLabel} (the rest to ${others.join(', ')})`]
    if (step.pace) lines.push(...pacePlan(step.pace), ...(live?.pacedNow?.has(step.index) ? [live.pacedNow.get(step.index)!] : []))
    else if (live?.weights) {
      const path = step.schedule.map((p) => describeWeights(weightsAt(p, step.set, live.weights!)))
      lines.push(`weights ${describeWeights(live.weights)} → ${path.join(' → ')}, one change per step`)
    }
    return [...lines, `bake ${step.bake} s per step`, splitPlanText(step.split, targets.dns?.ttl), ...gatePlan(step), wayBackPlan(targets, others)]
  },
  project: (step, live) => (live.weights ? {...live, weights: weightsAt(step.schedule.at(-1)!, step.set, live.weights)} : live),
  expects: (step, {targets, live}) =>
    live.weights ? rampExpects(step.set, step.schedule[0], live.weights, backendOf(targets).weightsLabel ?? 'the weights', step.pace !== undefined) : [],
  changesLive: true,
  changes: 'weights',
  resolve(raw, {common, path, fail, gate: resolveGate, backend, targets, defaults}) {
    const sets = backend.weightedSets
    // On HAProxy the sets are the ramp map's keys: backend names.
    const {noun, plural, at} = backend.sets
    if (!sets) fail(path, 'a ramp step needs a weighted DNS record (targets.dns) or a HAProxy ramp map (targets.haproxy.rampMap)')
    else if (!(raw.set in sets)) fail([...path, 'set'], `no ${noun} "${raw.set}" in ${at}; it has ${Object.keys(sets).join(', ')}`)
    else if (Object.keys(sets).length < 2) fail([...path, 'set'], `a ramp moves traffic between ${plural}: ${at} needs at least two`)
    const pace = resolvePace(raw, path, fail, sets?.[raw.set] ?? raw.set, targets.capacityPerTarget)
    const schedule = pace ? [pace.to] : expandSchedule(raw.schedule as ScheduleData, [...path, 'schedule'], fail)
    const bake = raw.bake ?? defaults.bake ?? defaultBake
    // HAProxy routes each request by the map as it is (a TTL of 0), so only a DNS record's TTL bounds the bake.
    const ttl = targets.dns?.ttl
    if (ttl !== undefined && bake < ttl && !raw.allowShortBake)
      fail(
        [...path, raw.bake === undefined ? 'action' : 'bake'],
        `a bake of ${bake} s is shorter than the record's TTL of ${ttl} s, so not every client would have seen a step before it is judged; make it at least ${ttl} s, or set allowShortBake: true`,
      )
    const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
    const others = Object.entries(sets ?? {})
      .filter(([set]) => set !== raw.set)
      .map(([, pool]) => pool)
    const atFull = countsAtFull(gate, schedule.at(-1) ?? 0, raw.set, others)
    if (atFull) fail([...path, 'schedule'], atFull)
    const split = planSplit(targets, sets ?? {}, raw.split)
    return {...raw, ...common, schedule, bake, gate, pace, split}
  },
  metricsRead: (raw) => (raw.gate ? [raw.gate.metric] : []),
  scaleTimes: (step, {seconds, gate}) => ({...step, bake: seconds(step.bake), ...(step.gate ? {gate: gate(step.gate)} : {})}),
  locks: (_step, targets) => backendOf(targets).locks.weights(),
  iam: (_step, targets) => backendOf(targets).iam.weights(),
  mutations: {
    weights: weightsRules('weights', (control) => control.weights!),
  },
  run: (step, ctx) => runWeightsRamp(step, ctx, ctx.weights(), 'weights'),
}
