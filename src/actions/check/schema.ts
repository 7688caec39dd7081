import {z} from 'zod'
import type {Gate} from '../../runbook/gate.js'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common, gateSchema} from '../../runbook/schema.js'
import {duration} from '../../runbook/units.js'

/** A check step as a runbook writes it. */
export const checkSchema = z.strictObject({
  action: action('check', 'Judge a gate without changing anything.'),
  ...common,
  gate: gateSchema.describe('The gate to judge.'),
  bake: duration.optional().describe("Seconds to wait before the first verdict (default: the gate's window)."),
})

export type CheckStep = Omit<z.output<typeof checkSchema>, 'gate'> & StepCommon & {gate: Gate; bake: number}
