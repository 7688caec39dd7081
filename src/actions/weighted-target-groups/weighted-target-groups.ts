import {expandSchedule, type ScheduleData} from '../../runbook/schedule.js'
import {pacePlan, resolvePace, scheduleTitle} from '../../pacing/rule.js'
import {planSplit, splitPlanText} from '../../pacing/split.js'
import {defaultBake} from '../../runbook/step-common.js'
import {backendOf} from '../../runbook/targets.js'
import type {PoolSplit} from '../../ports/backend.js'
import type {ControlPlane, WeightsPort} from '../../ports/control-plane.js'
import type {TargetsData} from '../../runbook/schema.js'
import {gatePlan, type ActionDefinition} from '../action.js'
import {countsAtFull, runWeightsRamp, wayBackPlan, weightsRules} from '../weights-ramp.js'
import {weightedTargetGroupsSchema, type WeightedTargetGroupsStep} from './schema.js'

const kind = 'pool-weights'

/** The split a loaded step names; loading checked it, so a problem here is a bug. */
function splitOf(step: WeightedTargetGroupsStep, targets: TargetsData): PoolSplit {
  const split = backendOf(targets).poolSplit(step.rule, [])
  if ('problems' in split) throw new Error(split.problems.map((p) => p.message).join('; '))
  return split
}

/**
 * The ALB-native ramp: one pool's share of a load balancer's weighted split, step by step, each
 * step baked and gated like a DNS ramp's. The load balancer applies a change to the next request,
 * so there is no TTL to wait out.
 */
export const weightedTargetGroups: ActionDefinition<WeightedTargetGroupsStep, typeof weightedTargetGroupsSchema> = {
  action: 'weighted-target-groups',
  schema: weightedTargetGroupsSchema,
  defaultOnFailure: 'rollback',
  title: (step) => `Shift to ${step.pool}: ${scheduleTitle(step.schedule, step.pace)}`,
  plan(step, {targets, live}) {
    const split = splitOf(step, targets)
    const others = split.pools.filter((p) => p !== step.pool)
    return [
      `${step.pool} ${scheduleTitle(step.schedule, step.pace)} of ${split.label} (the rest to ${others.join(', ')})`,
      ...(step.pace ? pacePlan(step.pace) : []),
      ...(live?.pacedNow?.has(step.index) ? [live.pacedNow.get(step.index)!] : []),
      `bake ${step.bake} s per step`,
      splitPlanText(step.split, undefined),
      ...gatePlan(step),
      wayBackPlan(targets, others),
    ]
  },
  changesLive: true,
  resolve(raw, {common, path, fail, gate: resolveGate, backend, defaults, targets}) {
    const split = backend.poolSplit(raw.rule, path)
    let at = ''
    let pools: string[] = []
    if ('problems' in split) for (const problem of split.problems) fail(problem.path, problem.message)
    else {
      at = split.at
      pools = split.pools
      if (!split.pools.includes(raw.pool))
        fail([...path, 'pool'], `no pool "${raw.pool}" to weigh in ${split.label}; it has ${split.pools.join(', ') || 'none'}`)
      else if (split.pools.length < 2) fail([...path, 'pool'], `a weighted split moves traffic between pools: the targets name only ${raw.pool}`)
    }
    const pace = resolvePace(raw, path, fail, raw.pool, targets.capacityPerTarget)
    const schedule = pace ? [pace.to] : expandSchedule(raw.schedule as ScheduleData, [...path, 'schedule'], fail)
    const bake = raw.bake ?? defaults.bake ?? defaultBake
    const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
    const atFull = countsAtFull(
      gate,
      schedule.at(-1) ?? 0,
      raw.pool,
      pools.filter((p) => p !== raw.pool),
    )
    if (atFull) fail([...path, 'schedule'], atFull)
    const measured = planSplit(targets, Object.fromEntries(pools.map((p) => [p, p])), raw.split)
    return {...raw, ...common, schedule, bake, gate, at, pace, split: measured}
  },
  metricsRead: (raw) => (raw.gate ? [raw.gate.metric] : []),
  scaleTimes: (step, {seconds, gate}) => ({...step, bake: seconds(step.bake), ...(step.gate ? {gate: gate(step.gate)} : {})}),
  locks: (step, targets) => splitOf(step, targets).locks,
  iam: (step, targets) => splitOf(step, targets).iam,
  mutations: {[kind]: weightsRules(kind, (control, at) => poolWeightsAt(control, at))},
  run: (step, ctx) => runWeightsRamp({...step, set: step.pool, allowShortBake: false}, ctx, poolWeightsAt(ctx.control, step.at), kind),
}

/** The split's weights port; every control plane that loads a runbook with this step has one. */
function poolWeightsAt(control: ControlPlane, at: string): WeightsPort {
  if (!control.poolWeights) throw new Error(`this control plane has no weighted split between pools (${at})`)
  return control.poolWeights(at)
}
