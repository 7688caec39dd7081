import {assessSchema, type AssessStep} from './schema.js'
import type {ActionDefinition} from '../action.js'
import {backendOf} from '../../runbook/targets.js'

const defaultWindow = 60

/**
 * Reads the pool now (its targets, and its request rate and errors over the window) and places
 * it on its calibrated map: stuck fails the step (or holds it, with onFailure: hold), so the run
 * stops before it ramps into a pool that cannot hold. Missing metrics are an error, never a pass.
 * It changes nothing.
 */
export const assess: ActionDefinition<AssessStep, typeof assessSchema> = {
  action: 'assess',
  schema: assessSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Assess ${step.pool}: would it come back on its own?`,
  plan: (step) => [
    `read ${step.pool} now (targets in rotation, request rate and errors over ${step.window} s) and place it on the map of ${step.scenario}${step.setup ? ` (${step.setup})` : ''}`,
    `stuck there: ${step.onFailure === 'hold' ? 'hold' : 'stop the run'}, before anything ramps into it`,
  ],
  changesLive: false,
  resolve(raw, {common, path, fail, backend, targets}) {
    if (!backend.targetPools.includes(raw.pool))
      fail([...path, 'pool'], `no pool with servers named "${raw.pool}" in targets; pools with servers are ${backend.targetPools.join(', ') || 'none'}`)
    if (!targets.metrics) fail(path, "an assess step reads the pool's request rate and errors: it needs targets.metrics")
    return {...raw, ...common, window: raw.window ?? defaultWindow}
  },
  metricsRead: () => ['request-rate', 'error-rate'],
  scaleTimes: (step, {seconds}) => ({...step, window: Math.max(1, seconds(step.window))}),
  locks: () => [],
  iam: (step, targets) => backendOf(targets).iam.read(),
  mutations: {},
  async run(step, ctx) {
    const group = ctx.control.pools.get(step.pool)
    const assessor = ctx.control.assessor
    if (!group || !assessor) return {status: 'error', message: `cannot place ${step.pool}: this run has no ${group ? 'assessor' : `pool ${step.pool}`}`}
    const targets = await group.targets(ctx.signal)
    const metrics = ctx.metrics()
    const rate = await metrics.read('request-rate', step.window, step.pool, ctx.signal)
    const errors = await metrics.read('error-rate', step.window, step.pool, ctx.signal)
    if (rate.value === null)
      return {
        status: 'error',
        message: `cannot place ${step.pool}: ${metrics.label} has no request rate for it over the last ${step.window} s (no data is never a pass)`,
      }
    const now = {
      at: ctx.control.clock.now(),
      servers: targets.length,
      healthy: targets.filter((t) => t.health === 'healthy').length,
      demand: rate.value,
      errorRate: (errors.value ?? 0) / 100,
    }
    const verdict = await assessor.assess(step.scenario, step.setup, now)
    ctx.placed(step.pool, verdict.place)
    for (const sentence of verdict.sentences.slice(1)) ctx.progress(sentence)
    // At risk (tips on some seeds, drawn) stops the run as stuck does: not a pool to ramp into on a coin toss.
    if (verdict.region !== 'stuck' && verdict.region !== 'at-risk') return {status: 'done', message: verdict.sentences[0]}
    const way = verdict.sentences.find((s) => s.startsWith('The smallest lever')) ?? ''
    return {status: step.onFailure === 'hold' ? 'held' : 'failed', message: `${verdict.sentences[0]}${way ? ` ${way}` : ''}`}
  },
}
