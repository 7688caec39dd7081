import {RefusedError} from '../errors.js'
import {mutationKinds, type Mutation, type MutationKind} from '../ports/io.js'
import {z} from 'zod'
import type {ActionDefinition, MetricName, MutationRules, ResolveContext} from './action.js'
import {approve} from './approve/approve.js'
import {assess} from './assess/assess.js'
import {check} from './check/check.js'
import {cycle} from './cycle/cycle.js'
import {freeze} from './freeze/freeze.js'
import {lift} from './lift/lift.js'
import {ramp} from './ramp/ramp.js'
import {restrict} from './restrict/restrict.js'
import {unfreeze} from './unfreeze/unfreeze.js'
import {wait} from './wait/wait.js'
import {weightedTargetGroups} from './weighted-target-groups/weighted-target-groups.js'

/** Every step kind a runbook can use. Adding one: its folder (its schema piece and definition) and a line here. */
const definitions = {freeze, unfreeze, restrict, lift, cycle, ramp, 'weighted-target-groups': weightedTargetGroups, approve, wait, check, assess}

type Definitions = typeof definitions
type StepOf<D> = D extends {run(step: infer S, ctx: never): unknown} ? S : never
type DataOf<D> = D extends {schema: infer Schema extends z.ZodType} ? z.output<Schema> : never
type InputOf<D> = D extends {schema: infer Schema extends z.ZodType} ? z.input<Schema> : never

/** A loaded step: one of the actions' step types, defaults filled in. */
export type Step = {[A in keyof Definitions]: StepOf<Definitions[A]>}[keyof Definitions]
/** A step as a runbook writes it, once its schema piece has read it. */
export type StepData = {[A in keyof Definitions]: DataOf<Definitions[A]>}[keyof Definitions]
export type StepInput = {[A in keyof Definitions]: InputOf<Definitions[A]>}[keyof Definitions]

for (const [key, definition] of Object.entries(definitions)) if (definition.action !== key) throw new Error(`the registry lists ${definition.action} as ${key}`)

/** The step schema: the union of every action's piece, told apart by `action`. */
export const stepSchema = z.discriminatedUnion(
  'action',
  Object.values(definitions).map((d) => d.schema) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<StepData, StepInput>

/** The definition of a step's kind. */
export function actionOf<S extends Step>(step: S): ActionDefinition<S> {
  return definitions[step.action] as unknown as ActionDefinition<S>
}

/** The definition of a step kind by name, before a step of it exists (the loader's defaults). */
export function actionNamed<A extends Step['action']>(action: A): Definitions[A] {
  return definitions[action]
}

const definitionOfData = (raw: StepData): ActionDefinition<Step, z.ZodObject> => definitions[raw.action]

/** The step as it runs, from what the runbook says (ActionDefinition.resolve); as written when its action resolves nothing. */
export function resolveStep(raw: StepData, ctx: ResolveContext): Step {
  const definition = definitionOfData(raw)
  return definition.resolve ? definition.resolve(raw, ctx) : ({...raw, ...ctx.common} as Step)
}

/** The metrics a step reads: its gate's, the headroom guard's demand, and what an approval shows. */
export function metricsRead(raw: StepData): MetricName[] {
  return definitionOfData(raw).metricsRead?.(raw) ?? []
}

/** Each recorded change's rules, from the one action that owns its kind. */
const mutationRules: Record<MutationKind, MutationRules> = (() => {
  const rules: Partial<Record<MutationKind, MutationRules>> = {}
  for (const definition of Object.values(definitions) as ActionDefinition[]) {
    for (const [kind, rule] of Object.entries(definition.mutations) as Array<[MutationKind, MutationRules]>) {
      if (rules[kind]) throw new Error(`two actions record ${kind} changes; one must own it`)
      rules[kind] = rule
    }
  }
  const missing = mutationKinds.filter((k) => !rules[k])
  if (missing.length > 0) throw new Error(`no action says how to settle and undo ${missing.join(', ')} changes`)
  return rules as Record<MutationKind, MutationRules>
})()

/** How a recorded change is settled and undone; a journal naming a kind no action owns is refused, not guessed at. */
export function rulesOf(m: Pick<Mutation, 'kind' | 'resource'>): MutationRules {
  const rules = mutationRules[m.kind] as MutationRules | undefined
  if (!rules) throw new RefusedError(`the journal records a change sluice does not know: ${m.kind} on ${m.resource}`)
  return rules
}
