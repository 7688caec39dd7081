import {z} from 'zod'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, bakeField, common, gateField, name} from '../../runbook/schema.js'
import {pacedScheduleSchema, paceSchema, type PaceRule} from '../../pacing/rule.js'

/** A lift step as a runbook writes it. */
export const liftSchema = z.strictObject({
  action: action('lift', 'Let a restricted traffic type back.'),
  ...common,
  type: name.describe('The traffic type whose restriction is lifted.'),
  schedule: pacedScheduleSchema
    .optional()
    .describe(
      "The percent of the type let back at each step, climbing to 100, e.g. [10, 25, 50, 100]: a restriction lifted by degrees, each step baked and judged by the gate (default: all at once); or `auto`, which probes the gate's pool: steps from pace.minStep, doubling while the pool's latency and errors stay in their band, halving on a rise. HAProxy only; an ALB listener rule cannot turn away part of a type.",
    ),
  pace: paceSchema.optional(),
  bake: bakeField,
  gate: gateField('The gate judged after each step of the schedule.'),
})

/** A lift step, resolved. A paced lift (`schedule: auto`) has its rule in `pace` and its schedule is [100]. */
export type LiftStep = Omit<Resolved<z.output<typeof liftSchema>>, 'schedule' | 'bake' | 'pace'> &
  StepCommon & {schedule?: number[]; bake?: number; pace?: PaceRule}
