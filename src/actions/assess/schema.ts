import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common, name} from '../../runbook/schema.js'
import {duration} from '../../runbook/units.js'

/** An assess step as a runbook writes it. */
export const assessSchema = z.strictObject({
  action: action(
    'assess',
    "Place a pool on its calibrated scenario's map as it is now, the trigger fixed now, and fail (or hold) the run when it is stuck, so a staged return does not ramp into a pool that cannot hold.",
  ),
  ...common,
  pool: name.describe('The pool to place: a pool of the targets with servers (a target group, a HAProxy backend).'),
  scenario: z.string().min(1).describe("The pool's calibrated scenario: a file `sluice calibrate` wrote (relative to the runbook), or a built-in name."),
  setup: z.string().min(1).optional().describe("The scenario's setup the pool runs with (default: its first)."),
  window: duration.optional().describe('Seconds of metrics the demand and errors now are read over (default 60).'),
})

export type AssessStep = z.output<typeof assessSchema> & StepCommon & {window: number}
