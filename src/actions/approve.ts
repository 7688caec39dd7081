import type {ApproveStep} from '../runbook/runbook.js'
import {formatMetric} from '../format.js'
import type {ActionDefinition} from './action.js'

/** Asks a person to approve going on, showing what has been done and what the metrics say now. */
export const approve: ActionDefinition<ApproveStep> = {
  action: 'approve',
  defaultOnFailure: 'abort',
  title: (step) => `Approval: ${step.message}`,
  plan: (step) => [`ask: ${step.message}`],
  changesLive: false,
  locks: () => [],
  iam: () => [],
  mutations: {},
  async run(step, ctx) {
    const context = ['Done so far:', ...(ctx.history.length > 0 ? ctx.history.map((h) => `  ✓ ${h}`) : ['  (nothing yet)'])]
    const metrics = ctx.control.metrics
    if (metrics) {
      const [errors, rate] = await Promise.all([metrics.read('error-rate', 60), metrics.read('request-rate', 60)])
      context.push(`Now: error rate ${formatMetric(errors, '%')}, ${formatMetric(rate, 'rps')} over the last 60 s`)
    }
    const yes = await ctx.io.confirm(step.message, context)
    if (!yes) return {status: 'refused', message: `not approved: ${step.message}`}
    return {status: 'done', message: `approved: ${step.message}`}
  },
}
