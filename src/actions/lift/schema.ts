import {z} from 'zod'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, bakeField, common, gateField, name} from '../../runbook/schema.js'
import {scheduleSchema} from '../../runbook/schedule.js'

/** A lift step as a runbook writes it. */
export const liftSchema = z.strictObject({
  action: action('lift', 'Let a restricted traffic type back.'),
  ...common,
  type: name.describe('The traffic type whose restriction is lifted.'),
  schedule: scheduleSchema
    .optional()
    .describe(
      'The percent of the type let back at each step, climbing to 100, e.g. [10, 25, 50, 100]: a restriction lifted by degrees, each step baked and judged by the gate (default: all at once). HAProxy only; an ALB listener rule cannot turn away part of a type.',
    ),
  bake: bakeField,
  gate: gateField('The gate judged after each step of the schedule.'),
})

export type LiftStep = Omit<Resolved<z.output<typeof liftSchema>>, 'schedule' | 'bake'> & StepCommon & {schedule?: number[]; bake?: number}
