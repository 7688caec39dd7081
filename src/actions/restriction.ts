import type {Restriction} from '../ports/control-plane.js'
import type {Mutation} from '../ports/io.js'
import {haproxyLock, type Targets} from '../runbook/targets.js'

// restrict and lift change the same thing: the one restriction rule of a traffic type on a listener.

/** The traffic type a restrict or lift change is about. */
export const restrictedType = (m: Mutation): string => ((m.after ?? m.before) as Restriction).type

export const restrictionSubject = (m: Mutation): string => `${m.resource}#${restrictedType(m)}`

/** `arn:…:listener-rule/app/NAME/LB/LISTENER/*` for the rules of a listener. */
export const listenerRules = (listenerArn: string): string => `${listenerArn.replace(':listener/', ':listener-rule/')}/*`

/** What restrict and lift lock: the listener, or HAProxy's restriction map. */
export function restrictionLocks({listener, haproxy}: Targets): string[] {
  if (listener) return [`elbv2:${listener}`]
  return haproxy?.restrictMap ? [haproxyLock(haproxy, 'map', haproxy.restrictMap)] : []
}

/** The restricted traffic types as a plan line shows them. */
export const describeTypes = (types: string[]): string => (types.length === 0 ? 'none' : [...types].sort().join(', '))
