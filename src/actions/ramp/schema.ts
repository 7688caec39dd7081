import {z} from 'zod'
import {limits} from '../../runbook/limits.js'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, common, gateField, bakeField} from '../../runbook/schema.js'

const scheduleSchema = z
  .union([
    z.array(z.number()).min(1).max(limits.maxScheduleSteps).describe('The weights in %, in order, e.g. [1, 5, 25, 50, 100].'),
    z
      .strictObject({
        linear: z
          .strictObject({
            from: z.number().describe('The first weight in %.'),
            to: z.number().describe('The last weight in %.'),
            steps: z.number().int().min(2).max(limits.maxScheduleSteps).describe('How many weights, evenly spaced, from and to included.'),
          })
          .describe('Evenly spaced weights.'),
      })
      .describe('Evenly spaced weights.'),
    z
      .strictObject({
        exponential: z
          .strictObject({
            from: z.number().describe('The first weight in %, above 0.'),
            factor: z.number().gt(1).describe('Each weight is the one before times this, until `to`.'),
            to: z.number().describe('The last weight in %.'),
          })
          .describe('Weights that grow by a factor.'),
      })
      .describe('Weights that grow by a factor.'),
  ])
  .describe('The weights in % the ramped set steps through: a list, or linear or exponential steps.')

/** A ramp step as a runbook writes it. */
export const rampSchema = z.strictObject({
  action: action('ramp', 'Move traffic to a weighted DNS set, step by step, behind a gate.'),
  ...common,
  set: z.string().min(1).describe('The weighted set identifier that gains traffic; on HAProxy, the backend (a key of the ramp map).'),
  schedule: scheduleSchema,
  bake: bakeField,
  allowShortBake: z
    .boolean()
    .default(false)
    .describe("Allow a bake shorter than the record's TTL (clients will not all have seen a step before it is judged)."),
  gate: gateField('The gate judged after each step of the schedule.'),
})

export type RampStep = Omit<Resolved<z.output<typeof rampSchema>>, 'schedule'> & StepCommon & {schedule: number[]; bake: number}
export type ScheduleData = z.output<typeof scheduleSchema>
