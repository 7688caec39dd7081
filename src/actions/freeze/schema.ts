import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common} from '../../runbook/schema.js'
import {duration} from '../../runbook/units.js'

/** A freeze step as a runbook writes it. */
export const freezeSchema = z.strictObject({
  action: action('freeze', 'Freeze changes: deploy pipelines that run `sluice freeze check` are refused.'),
  ...common,
  reason: z.string().min(1).describe('Why changes are frozen, shown to whoever is refused.'),
  expires: duration.optional().describe('Seconds after which the freeze lapses on its own (default: never).'),
})

export type FreezeStep = z.output<typeof freezeSchema> & StepCommon
