import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common} from '../../runbook/schema.js'

/** A approve step as a runbook writes it. */
export const approveSchema = z.strictObject({
  action: action('approve', 'Ask a person before going on; without a terminal, --yes answers.'),
  ...common,
  message: z.string().min(1).describe('The question put to the operator.'),
})

export type ApproveStep = z.output<typeof approveSchema> & StepCommon
