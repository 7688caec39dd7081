import {parseAddress} from '../input/address.js'
import type {RunbookData} from './schema.js'

// What a runbook's targets block means, read one way by the loader, the actions' plans and locks,
// preflight, the live wiring and the rehearsal: AWS (dns, targetGroups, listener) or one HAProxy
// (targets.haproxy) provides the same things under different names.

export type Targets = RunbookData['targets']
export type HaproxyTargetsData = NonNullable<Targets['haproxy']>

/** Every pool the targets name: the DNS record's sets' pools, the target groups', HAProxy's backends'. */
export function poolsOf(targets: Targets): Set<string> {
  return new Set([...Object.values(targets.dns?.sets ?? {}), ...Object.keys(targets.targetGroups ?? {}), ...Object.keys(targets.haproxy?.backends ?? {})])
}

/**
 * The weighted sets a ramp moves traffic between, set → pool: the DNS record's, or on HAProxy the
 * ramp map's keys, which are backend names (the inverse of targets.haproxy.backends). None when
 * the runbook has nothing to ramp.
 */
export function weightedSets(targets: Targets): Record<string, string> | undefined {
  if (targets.dns) return targets.dns.sets
  const h = targets.haproxy
  if (h?.rampMap) return Object.fromEntries(Object.entries(h.backends).map(([pool, backend]) => [backend, pool]))
  return undefined
}

// HAProxy resources are named as their adapters (src/haproxy) label them, so a plan, a lock and
// an error say the same thing.

/** Where `weightedSets` live, as a plan names it: the record, or the ramp map on its socket. */
export function weightsOn(targets: Targets): string | undefined {
  if (targets.dns) return targets.dns.record
  const h = targets.haproxy
  return h?.rampMap ? `haproxy map ${h.rampMap} (${socketLabel(h.socket)})` : undefined
}

/** Where restrictions go, as a plan names it: the listener, or the restriction map on its socket. */
export function rulesOn(targets: Targets): string | undefined {
  if (targets.listener) return targets.listener
  const h = targets.haproxy
  return h?.restrictMap ? `haproxy map ${h.restrictMap} (${socketLabel(h.socket)})` : undefined
}

/** A pool's target group as a plan names it: its ARN, or its HAProxy backend on its socket. */
export function targetGroupOf(targets: Targets, pool: string): string | undefined {
  const arn = targets.targetGroups?.[pool]
  if (arn) return arn
  const h = targets.haproxy
  const backend = h?.backends[pool]
  return backend ? `haproxy backend ${backend} (${socketLabel(h.socket)})` : undefined
}

/**
 * The lock name of a HAProxy resource: `haproxy:<socket>/backend/<name>` or `…/map/<file>`. The
 * socket is named as HAProxy's Runtime API client names it, so `unix:/run/x.sock` and
 * `/run/x.sock` are one lock.
 */
export function haproxyLock(haproxy: HaproxyTargetsData, kind: 'backend' | 'map', name: string): string {
  return `haproxy:${socketLabel(haproxy.socket)}/${kind}/${name}`
}

/** What a live run changes, for the question it asks first: `HAProxy /run/haproxy/admin.sock`, or AWS. */
export function controlPlaneName(targets: Targets): string {
  return targets.haproxy ? `HAProxy ${socketLabel(targets.haproxy.socket)}` : 'AWS'
}

/** The socket as the Runtime API client labels it; an address it cannot parse as given (the loader refuses those). */
export function socketLabel(socket: string): string {
  try {
    const address = parseAddress(socket)
    return address.kind === 'unix' ? address.path : `${address.host}:${address.port}`
  } catch {
    return socket
  }
}
