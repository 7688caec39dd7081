import {expandSchedule} from '../../runbook/schedule.js'
import {defaultBake} from '../../runbook/step-common.js'
import {backendOf} from '../../runbook/targets.js'
import type {PoolSplit} from '../../ports/backend.js'
import type {ControlPlane, WeightsPort} from '../../ports/control-plane.js'
import type {TargetsData} from '../../runbook/schema.js'
import {gatePlan, type ActionDefinition} from '../action.js'
import {runWeightsRamp, wayBackPlan, weightsRules} from '../weights-ramp.js'
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
  title: (step) => `Shift to ${step.pool}: ${step.schedule.map((p) => `${p}%`).join(' → ')}`,
  plan(step, {targets}) {
    const split = splitOf(step, targets)
    const others = split.pools.filter((p) => p !== step.pool)
    return [
      `${step.pool} ${step.schedule.map((p) => `${p}%`).join(' → ')} of ${split.label} (the rest to ${others.join(', ')})`,
      `bake ${step.bake} s per step`,
      ...gatePlan(step),
      wayBackPlan(targets, others),
    ]
  },
  changesLive: true,
  resolve(raw, {common, path, fail, gate: resolveGate, backend, defaults}) {
    const split = backend.poolSplit(raw.rule, path)
    let at = ''
    if ('problems' in split) for (const problem of split.problems) fail(problem.path, problem.message)
    else {
      at = split.at
      if (!split.pools.includes(raw.pool))
        fail([...path, 'pool'], `no pool "${raw.pool}" to weigh in ${split.label}; it has ${split.pools.join(', ') || 'none'}`)
      else if (split.pools.length < 2) fail([...path, 'pool'], `a weighted split moves traffic between pools: the targets name only ${raw.pool}`)
    }
    const schedule = expandSchedule(raw.schedule, [...path, 'schedule'], fail)
    const bake = raw.bake ?? defaults.bake ?? defaultBake
    const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
    return {...raw, ...common, schedule, bake, gate, at}
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
