import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common} from '../../runbook/schema.js'
import {duration} from '../../runbook/units.js'

/** A wait step as a runbook writes it. */
export const waitSchema = z.strictObject({
  action: action('wait', 'Wait a fixed time.'),
  ...common,
  for: duration.describe('Seconds to wait, or a duration such as 5m.'),
})

export type WaitStep = z.output<typeof waitSchema> & StepCommon
