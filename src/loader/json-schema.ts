import {z} from 'zod'
import {runbookSchema} from './runbook-schema.js'

export const runbookSchemaId = 'https://sluice.dev/schemas/runbook.json'

// The formats JSON Schema 2020-12 defines. zod names some string checks as formats of its own
// (`starts_with`, `ends_with`, `includes`) and also emits a pattern for them, so the pattern
// does the checking and the made-up format would only make strict validators refuse the schema.
const standardFormats = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'idn-email',
  'hostname',
  'idn-hostname',
  'ipv4',
  'ipv6',
  'uri',
  'uri-reference',
  'iri',
  'iri-reference',
  'uuid',
  'uri-template',
  'json-pointer',
  'relative-json-pointer',
  'regex',
])

// A refine is code, so zod cannot export it; this one is simple enough to restate by hand.
// Reached through the schema's shape so a rename breaks the build rather than the schema.
const dnsSets = runbookSchema.shape.targets.shape.dns.unwrap().shape.sets

/**
 * The JSON Schema (draft 2020-12) of a runbook file as an operator writes it: the input side of
 * `runbookSchema`, so durations and counts appear as the numbers and strings a YAML file holds
 * (`90`, `'5m'`, `3`, `'25%'`) rather than what they parse to. For editors and CI linting;
 * `runbookSchema` stays the authority (it also checks what JSON Schema cannot say).
 */
export function runbookJsonSchema(): object {
  const generated = z.toJSONSchema(runbookSchema, {
    target: 'draft-2020-12',
    io: 'input',
    // Throwing keeps a future field that JSON Schema cannot express from silently becoming `{}`.
    unrepresentable: 'throw',
    override({zodSchema, jsonSchema}) {
      if (typeof jsonSchema.format === 'string' && !standardFormats.has(jsonSchema.format)) delete jsonSchema.format
      if (zodSchema === dnsSets) jsonSchema.minProperties = 1
      restoreDefault(zodSchema, jsonSchema)
    },
  })
  const {$schema, ...rest} = generated
  return {
    $schema,
    $id: runbookSchemaId,
    title: 'sluice runbook',
    description:
      'A staged-recovery runbook for sluice: the targets it acts on and the steps (freeze, restrict, cycle, ramp, check, ...) it takes. Durations are seconds as a number or a string with a unit (30s, 5m, 1h); batch sizes are a count (3) or a share of the pool (25%).',
    ...rest,
  }
}

// zod drops the default of any field that goes through a transform when describing the input,
// since a default is an output value. For durations the output (seconds) is also a valid input
// meaning the same thing, so the default is worth showing; keep it only when it survives a
// parse unchanged, which is exactly when it means the same on both sides.
function restoreDefault(zodSchema: z.core.$ZodTypes, jsonSchema: z.core.JSONSchema.BaseSchema): void {
  if (zodSchema._zod.def.type !== 'default' || 'default' in jsonSchema) return
  const {innerType, defaultValue} = zodSchema._zod.def
  const parsed = z.safeParse(innerType, defaultValue)
  if (parsed.success && JSON.stringify(parsed.data) === JSON.stringify(defaultValue)) jsonSchema.default = defaultValue
}
