import {z} from 'zod'
import {pacedScheduleSchema, paceSchema, type PaceRule} from '../../pacing/rule.js'
import {splitSchema, type SplitPlan} from '../../pacing/split.js'
import {action, bakeField, common, gateField, name} from '../../runbook/schema.js'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'

/** A weighted-target-groups step as a runbook writes it. */
export const weightedTargetGroupsSchema = z.strictObject({
  action: action(
    'weighted-target-groups',
    "Move traffic to one pool at the load balancer, step by step, behind a gate: an ALB rule's weighted forward between target groups, or HAProxy's ramp map between backends.",
  ),
  ...common,
  rule: z
    .string()
    .min(1)
    .optional()
    .describe(
      'AWS: the ARN of the listener rule whose forward action splits traffic between target groups, or of the listener, for its default action. Left out on HAProxy, where the ramp map is the split.',
    ),
  pool: name.describe('The pool that gains traffic: a key of targets.targetGroups, or of targets.haproxy.backends.'),
  schedule: pacedScheduleSchema,
  pace: paceSchema.optional(),
  split: splitSchema.optional(),
  bake: bakeField,
  gate: gateField('The gate judged after each step of the schedule.'),
})

export type WeightedTargetGroupsStep = Omit<Resolved<z.output<typeof weightedTargetGroupsSchema>>, 'schedule' | 'pace' | 'split'> &
  StepCommon & {
    schedule: number[]
    /** `schedule: auto`'s rule (the schedule is then where it ends, [pace.to]). */
    pace?: PaceRule
    /** Whether the split served is measured before each bake. */
    split: SplitPlan
    bake: number
    /** Where the split is, as ControlPlane.poolWeights takes it: the rule's or listener's ARN, or the ramp map. */
    at: string
  }
