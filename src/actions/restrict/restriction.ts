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

/**
 * Whether a restriction turns anything away. One can be there and turn nothing away: a HAProxy
 * entry that keeps 100% (`sync:30:100`), an ALB rule tagged for the type whose action forwards.
 * Such a one is listed with a share of 0 and is named for what it is: restrict replaces it, lift
 * removes it, and neither takes it for a restriction in force.
 */
export const restricts = (r: Restriction | null | undefined): boolean => shareOf(r) > 0

export const restrictsNothing = 'restricts nothing: every request passes'

/** How much of the type a restriction turns away, where it is not all: `70% turned away`, or that it restricts nothing. */
export const shareNote = (r: Restriction): string | null => (!restricts(r) ? restrictsNothing : shareOf(r) < 100 ? `${shareOf(r)}% turned away` : null)

/** `sync (70% turned away)`, `sync (restricts nothing: every request passes)`, `sync` when all of it is. */
export const describeRestriction = (r: Restriction): string => {
  const note = shareNote(r)
  return note ? `${r.type} (${note})` : r.type
}

/** A listener's or map's restrictions in one line, those in force first, then any that restrict nothing. */
export function describeRestrictions(rules: Restriction[]): string {
  if (rules.length === 0) return 'no restrictions'
  const inForce = rules.filter(restricts)
  return [
    inForce.length > 0 ? `restricting ${inForce.map(describeRestriction).join(', ')}` : 'no restriction in force',
    ...rules.filter((r) => !restricts(r)).map((r) => `${r.type} is listed but ${restrictsNothing}`),
  ].join('; ')
}

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
