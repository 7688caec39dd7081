import {z} from 'zod'
import type {StepCommon} from '../../runbook/step-common.js'
import {action, common, name} from '../../runbook/schema.js'
import {duration} from '../../runbook/units.js'

/** A restrict step as a runbook writes it. */
export const restrictSchema = z.strictObject({
  action: action('restrict', 'Turn a traffic type away with a fast 503 at the listener.'),
  ...common,
  type: name.describe('The traffic type to turn away; a rule of its own, tagged with it.'),
  paths: z
    .array(z.string().startsWith('/', 'expected a path pattern starting with /'))
    .default([])
    .describe('Request paths that identify the traffic type, e.g. /sync/*.'),
  headers: z.record(z.string(), z.array(z.string()).min(1)).default({}).describe('Header name → values that identify the traffic type.'),
  retryAfter: duration.default(120).describe('Seconds clients are told to wait before retrying (Retry-After).'),
  share: z
    .number()
    .int()
    .min(1)
    .max(100)
    .default(100)
    .describe(
      "The percent of the type's requests turned away, each request drawn at random (default 100: all). HAProxy does it at runtime; an ALB listener rule cannot, and is refused.",
    ),
})

export type RestrictStep = z.output<typeof restrictSchema> & StepCommon
