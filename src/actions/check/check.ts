import {checkSchema, type CheckStep} from './schema.js'
import {gateFailedStatus, gatePlan, type ActionDefinition} from '../action.js'

/** A gate on its own: watches a metric for the bake and passes or fails. */
export const check: ActionDefinition<CheckStep, typeof checkSchema> = {
  action: 'check',
  schema: checkSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Check ${step.gate.metric}`,
  plan: (step) => [`watch for ${step.bake} s`, ...gatePlan(step)],
  changesLive: false,
  resolve(raw, {common, path, gate: resolveGate}) {
    const gate = resolveGate(raw.gate, [...path, 'gate'])
    return {...raw, ...common, gate, bake: raw.bake ?? gate.window}
  },
  metricsRead: (raw) => [raw.gate.metric],
  scaleTimes: (step, {seconds, gate}) => ({...step, bake: seconds(step.bake), gate: gate(step.gate)}),
  locks: () => [],
  iam: () => [],
  mutations: {},
  async run(step, ctx) {
    const result = await ctx.watch(step.gate, step.bake, step.title)
    if (result.outcome === 'interrupted') return {status: 'interrupted', message: 'interrupted during the check', verdicts: result.verdicts}
    if (result.outcome === 'fail') return {status: gateFailedStatus(step, result), message: result.reason!, verdicts: result.verdicts}
    if (result.outcome === 'held') return {status: 'held', message: result.reason!, verdicts: result.verdicts}
    return {status: 'done', message: `${result.verdicts.at(-1)!.gate}: passed`, verdicts: result.verdicts}
  },
}
