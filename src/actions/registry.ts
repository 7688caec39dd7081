import {RefusedError} from '../errors.js'
import {mutationKinds, type Mutation, type MutationKind} from '../ports/io.js'
import type {Step} from '../runbook/runbook.js'
import type {ActionDefinition, MutationRules} from './action.js'
import {approve} from './approve.js'
import {check} from './check.js'
import {cycle} from './cycle.js'
import {freeze} from './freeze.js'
import {lift} from './lift.js'
import {ramp} from './ramp.js'
import {restrict} from './restrict.js'
import {unfreeze} from './unfreeze.js'
import {wait} from './wait.js'

type Definitions = {[A in Step['action']]: ActionDefinition<Extract<Step, {action: A}>>}

/** Every step kind a runbook can use. Adding one: a module in this folder, a line here, its schema in src/runbook/schema.ts. */
const definitions: Definitions = {freeze, unfreeze, restrict, lift, cycle, ramp, approve, wait, check}

/** The definition of a step's kind. */
export function actionOf<S extends Step>(step: S): ActionDefinition<S> {
  return definitions[step.action] as unknown as ActionDefinition<S>
}

/** The definition of a step kind by name, before a step of it exists (the loader's defaults). */
export function actionNamed<A extends Step['action']>(action: A): Definitions[A] {
  return definitions[action]
}

/** Each recorded change's rules, from the one action that owns its kind. */
const mutationRules: Record<MutationKind, MutationRules> = (() => {
  const rules: Partial<Record<MutationKind, MutationRules>> = {}
  for (const definition of Object.values(definitions)) {
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
