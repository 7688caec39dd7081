import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common} from '../../runbook/schema.js'

/** A unfreeze step as a runbook writes it. */
export const unfreezeSchema = z.strictObject({
  action: action('unfreeze', 'Lift the change freeze this run set.'),
  ...common,
  force: z.boolean().default(false).describe("Lift a freeze this run did not set (someone else's, or a damaged record); the override is journalled."),
})

export type UnfreezeStep = z.output<typeof unfreezeSchema> & StepCommon
