import {z} from 'zod'
import {pacedScheduleSchema, paceSchema, type PaceRule} from '../../pacing/rule.js'
import {splitSchema, type SplitPlan} from '../../pacing/split.js'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, common, gateField, bakeField} from '../../runbook/schema.js'

/** A ramp step as a runbook writes it. */
export const rampSchema = z.strictObject({
  action: action('ramp', 'Move traffic to a weighted DNS set, step by step, behind a gate.'),
  ...common,
  set: z.string().min(1).describe('The weighted set identifier that gains traffic; on HAProxy, the backend (a key of the ramp map).'),
  schedule: pacedScheduleSchema,
  pace: paceSchema.optional(),
  split: splitSchema.optional(),
  bake: bakeField,
  allowShortBake: z
    .boolean()
    .default(false)
    .describe("Allow a bake shorter than the record's TTL (clients will not all have seen a step before it is judged)."),
  gate: gateField('The gate judged after each step of the schedule.'),
})

/**
 * A ramp step, resolved. A paced ramp (`schedule: auto`) has its rule in `pace` and its schedule
 * is where it ends ([pace.to]); its steps are found as it runs.
 */
export type RampStep = Omit<Resolved<z.output<typeof rampSchema>>, 'schedule' | 'pace' | 'split'> &
  StepCommon & {schedule: number[]; bake: number; pace?: PaceRule; split: SplitPlan}
