import {z} from 'zod'
import {stepSchema} from '../actions/registry.js'
import {runbookFields} from '../runbook/schema.js'

/** A whole runbook: its targets, defaults and rehearsal, and steps of every action the registry lists. */
export const runbookSchema = z.strictObject({
  ...runbookFields,
  steps: z.array(stepSchema).min(1).describe('The steps, run in order.'),
})

export type RunbookInput = z.input<typeof runbookSchema>
export type RunbookData = z.output<typeof runbookSchema>
