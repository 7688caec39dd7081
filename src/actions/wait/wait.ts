import {waitSchema, type WaitStep} from './schema.js'
import type {ActionDefinition} from '../action.js'

/** Waits, for the system to settle or for a person to look. */
export const wait: ActionDefinition<WaitStep, typeof waitSchema> = {
  action: 'wait',
  schema: waitSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Wait ${step.for} s`,
  plan: (step) => [`wait ${step.for} s`],
  changesLive: false,
  scaleTimes: (step, {seconds}) => ({...step, for: seconds(step.for)}),
  locks: () => [],
  iam: () => [],
  mutations: {},
  async run(step, ctx) {
    const ended = await ctx.hold(step.for, `in a wait of ${step.for} s`)
    if (ended === 'interrupted') return {status: 'interrupted', message: 'interrupted while waiting'}
    return {status: 'done', message: ended === 'promoted' ? `promoted before the wait of ${step.for} s was over` : `waited ${step.for} s`}
  },
}
