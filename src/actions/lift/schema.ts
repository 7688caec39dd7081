import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common, name} from '../../runbook/schema.js'

/** A lift step as a runbook writes it. */
export const liftSchema = z.strictObject({
  action: action('lift', 'Let a restricted traffic type back.'),
  ...common,
  type: name.describe('The traffic type whose restriction is lifted.'),
})

export type LiftStep = z.output<typeof liftSchema> & StepCommon
