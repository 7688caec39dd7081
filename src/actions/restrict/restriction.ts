import type {ControlPlane, Restriction} from '../../ports/control-plane.js'
import type {Mutation, MutationKind} from '../../ports/io.js'
import type {z} from 'zod'
import type {liftSchema} from '../lift/schema.js'
import type {restrictSchema} from './schema.js'
import type {ResolveContext} from '../action.js'

// restrict and lift change the same thing: the one restriction rule of a traffic type on a listener.

/** The traffic type a restrict or lift change is about. */
export const restrictedType = (m: Mutation): string => ((m.after ?? m.before) as Restriction).type

export const restrictionSubject = (m: Mutation): string => `${m.resource}#${restrictedType(m)}`

/** The restricted traffic types as a plan line shows them. */
export const describeTypes = (types: string[]): string => (types.length === 0 ? 'none' : [...types].sort().join(', '))

/** restrict and lift need somewhere for restrictions to go, and what the backend can match. */
export function checkRestriction(raw: z.output<typeof restrictSchema> | z.output<typeof liftSchema>, {path, fail, backend}: ResolveContext): void {
  if (backend.restrictionsLabel === undefined)
    fail(
      path,
      `a ${raw.action} step needs targets.listener (the load balancer listener its rules go on) or targets.haproxy.restrictMap (the map of HAProxy's restriction snippet)`,
    )
  for (const problem of backend.stepProblems(raw, path)) fail(problem.path, problem.message)
  // A listener rule matches requests, not a traffic type's name; the simulator could match
  // by type, but a runbook is rehearsed to be run, so it is held to what live can do.
  if (raw.action === 'restrict' && raw.paths.length === 0 && Object.keys(raw.headers).length === 0)
    fail([...path, 'paths'], `expected paths or headers that identify ${raw.type} traffic: a listener rule cannot match a traffic type by name`)
}

/** The percent a restriction turns away; a restriction without a share turns away all. */
export const shareOf = (r: Restriction | null | undefined): number => (r ? (r.share ?? 100) : 0)

/** `sync (70% turned away)`, `sync` when all of it is. */
export const describeRestriction = (r: Restriction): string => (shareOf(r) < 100 ? `${r.type} (${shareOf(r)}% turned away)` : r.type)

/** Puts the restriction back as `to` (a share of it, or whole), from `from` (a share, or lifted). */
export function restore(control: ControlPlane, resource: string, from: Restriction | null, to: Restriction, describe: string) {
  return {
    kind: (from === null ? 'restrict' : 'restriction-share') as MutationKind,
    resource,
    before: from,
    after: to,
    describe,
    apply: () => control.restrictions!.add(to),
  }
}

/** The undo of a restriction the run added: lifting it. */
export function lifted(control: ControlPlane, resource: string, left: Restriction) {
  return {
    kind: 'lift' as MutationKind,
    resource,
    before: left,
    after: null,
    describe: `lift the restriction on ${describeRestriction(left)} from ${resource}`,
    apply: async () => void (await control.restrictions!.remove(left.type)),
  }
}
