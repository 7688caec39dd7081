import type {Restriction} from '../ports/control-plane.js'
import type {Mutation} from '../ports/io.js'

// restrict and lift change the same thing: the one restriction rule of a traffic type on a listener.

/** The traffic type a restrict or lift change is about. */
export const restrictedType = (m: Mutation): string => ((m.after ?? m.before) as Restriction).type

export const restrictionSubject = (m: Mutation): string => `${m.resource}#${restrictedType(m)}`

/** The restricted traffic types as a plan line shows them. */
export const describeTypes = (types: string[]): string => (types.length === 0 ? 'none' : [...types].sort().join(', '))
