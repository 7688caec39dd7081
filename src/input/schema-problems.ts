import type {z} from 'zod'
import {closest} from './closest.js'
import {formatPath, type Path, type Problem} from './problems.js'
import {describeIssue, specificIssue, valueAt} from './yaml-source.js'

export type SchemaCheck<T> = {success: true; data: T} | {success: false; problems: Problem[]}

/**
 * Checks data against a schema and says everything wrong with it: every issue zod finds, and every
 * unknown key on its own, at the key, with the nearest key that object does take.
 */
export function schemaProblems<S extends z.ZodType>(schema: S, data: unknown): SchemaCheck<z.output<S>> {
  const result = schema.safeParse(data)
  if (result.success) return {success: true, data: result.data}
  const problems: Problem[] = []
  // A misspelt required key is also a missing one; the suggestion already says so, once.
  const suggested = new Set<string>()
  for (const issue of result.error.issues) {
    if (issue.code !== 'unrecognized_keys') continue
    const present = Object.keys(valueAt(data, issue.path) ?? {})
    const known = (knownKeysAt(schema, issue.path, data) ?? []).filter((k) => !present.includes(k))
    for (const key of issue.keys) {
      const suggestion = closest(key, known)
      if (suggestion !== undefined) suggested.add(formatPath([...issue.path, suggestion]))
      problems.push({path: issue.path, key, message: `unknown key '${key}'${suggestion === undefined ? '' : ` (did you mean '${suggestion}'?)`}`})
    }
  }
  for (const found of result.error.issues) {
    if (found.code === 'unrecognized_keys') continue
    const issue = specificIssue(found)
    if (valueAt(data, issue.path) === undefined && suggested.has(formatPath(issue.path))) continue
    problems.push({path: issue.path, message: describeIssue(issue, data)})
  }
  return {success: false, problems}
}

/**
 * The keys the object schema at `path` takes, following the data through arrays, records and
 * wrappers; a discriminated union is resolved to the variant the data's discriminator picks.
 */
export function knownKeysAt(schema: z.core.$ZodType, path: Path, data: unknown): string[] | undefined {
  let node: z.core.$ZodType | undefined = unwrap(schema, data)
  let value = data
  for (const part of path) {
    if (!node) return undefined
    value = valueAt(value, [part])
    const def = (node as z.core.$ZodTypes)._zod.def
    if (def.type === 'object') node = (def.shape as Record<PropertyKey, z.core.$ZodType>)[part]
    else if (def.type === 'array') node = def.element
    else if (def.type === 'record') node = def.valueType
    else return undefined
    node = node && unwrap(node, value)
  }
  const def = node && (node as z.core.$ZodTypes)._zod.def
  return def?.type === 'object' ? Object.keys(def.shape) : undefined
}

/** The schema that describes `value` once optional, default and pipe wrappers and a discriminated union are seen through. */
function unwrap(schema: z.core.$ZodType, value: unknown): z.core.$ZodType | undefined {
  let node = schema as z.core.$ZodTypes
  for (;;) {
    const def = node._zod.def
    switch (def.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'catch':
        node = def.innerType as z.core.$ZodTypes
        continue
      case 'pipe':
        node = def.in as z.core.$ZodTypes
        continue
      case 'union': {
        const discriminator = (def as {discriminator?: string}).discriminator
        if (discriminator === undefined) return undefined
        const picked = valueAt(value, [discriminator])
        const variant = def.options.find((option) => (option._zod as {propValues?: Record<string, Set<unknown>>}).propValues?.[discriminator]?.has(picked))
        if (!variant) return undefined
        node = variant as z.core.$ZodTypes
        continue
      }
      default:
        return node
    }
  }
}
