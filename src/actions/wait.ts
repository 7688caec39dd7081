import type {WaitStep} from '../runbook/runbook.js'
import type {ActionDefinition} from './action.js'

/** Waits, for the system to settle or for a person to look. */
export const wait: ActionDefinition<WaitStep> = {
  action: 'wait',
  defaultOnFailure: 'abort',
  title: (step) => `Wait ${step.for} s`,
  plan: (step) => [`wait ${step.for} s`],
  changesLive: false,
  locks: () => [],
  iam: () => [],
  mutations: {},
  async run(step, ctx) {
    await ctx.control.clock.sleep(step.for, ctx.signal)
    if (ctx.signal.aborted) return {status: 'interrupted', message: 'interrupted while waiting'}
    return {status: 'done', message: `waited ${step.for} s`}
  },
}
