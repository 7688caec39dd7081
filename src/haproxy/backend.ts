import {parseAddress} from '../input/address.js'
import type {Backend, BackendFace, BackendProblem, BackendStep} from '../ports/backend.js'

/** What a runbook's targets say of one HAProxy (targets.haproxy), and the AWS fields it must not also name. */
export interface HaproxyTargetsOf {
  haproxy: {socket: string; backends: Record<string, string>; slowStart?: Record<string, number>; restrictMap?: string; rampMap?: string}
  dns?: unknown
  targetGroups?: unknown
  listener?: unknown
  metrics?: {source: string}
}

/** The socket as the Runtime API client labels it; an address it cannot parse as given (problems() refuses those). */
export function socketLabel(socket: string): string {
  try {
    const address = parseAddress(socket)
    return address.kind === 'unix' ? address.path : `${address.host}:${address.port}`
  } catch {
    return socket
  }
}

/**
 * One HAProxy as a backend, over its Runtime API: weights in the ramp map (its keys are backend
 * names), pools as backends, restrictions in the restriction map. Resources are named as the
 * adapters label them (`haproxy map M (socket)`), so a plan, a lock and an error say the same
 * thing; a lock is `haproxy:<socket>/backend/<name>` or `…/map/<file>`, the socket named as the
 * Runtime API client names it, so `unix:/run/x.sock` and `/run/x.sock` are one lock. HAProxy is
 * reached through its socket's file mode, never IAM.
 */
export function haproxyBackend(targets: HaproxyTargetsOf): Backend {
  const h = targets.haproxy
  const socket = socketLabel(h.socket)
  const lock = (kind: 'backend' | 'map', name: string) => `haproxy:${socket}/${kind}/${name}`
  const onSocket = (what: string) => `${what} (${socket})`
  const pools = Object.keys(h.backends)
  // The ramp map's keys are backend names, each weighing the pool the backend serves.
  const sets = h.rampMap ? Object.fromEntries(Object.entries(h.backends).map(([pool, backend]) => [backend, pool])) : undefined
  const poolLabel = (pool: string) => (h.backends[pool] ? onSocket(`haproxy backend ${h.backends[pool]}`) : undefined)
  return {
    family: 'haproxy',
    name: `HAProxy ${socket}`,
    pools: new Set(pools),
    targetPools: pools,
    weightedSets: sets,
    sets: {noun: 'backend', plural: 'backends', at: 'targets.haproxy.backends'},
    weightsLabel: h.rampMap ? onSocket(`haproxy map ${h.rampMap}`) : undefined,
    restrictionsLabel: h.restrictMap ? onSocket(`haproxy map ${h.restrictMap}`) : undefined,
    poolSplit(rule, path) {
      // HAProxy's backends have no runtime weight of their own: the split between them is the ramp map.
      if (rule !== undefined)
        return {
          problems: [
            {
              path: [...path, 'rule'],
              message: 'names an ALB listener rule, but on HAProxy the split between backends is the ramp map (targets.haproxy.rampMap): leave rule out',
            },
          ],
        }
      if (!h.rampMap)
        return {problems: [{path, message: 'on HAProxy a weighted-target-groups step moves traffic through the ramp map: targets.haproxy.rampMap names it'}]}
      return {at: h.rampMap, label: onSocket(`haproxy map ${h.rampMap}`), pools, locks: [lock('map', h.rampMap)], iam: []}
    },
    poolPath: (pool) => ['targets', 'haproxy', 'backends', pool],
    // A set is a backend: it is declared where its pool names it.
    setPath: (set) => ['targets', 'haproxy', 'backends', sets?.[set] ?? pools.find((pool) => h.backends[pool] === set) ?? set],
    // A backend may be the sorry backend a ramp parks traffic on, with no servers to cycle.
    poolsMayBeSorry: true,
    // The label is already parenthesised (the socket), so the pool's place is set off by commas.
    poolInPlan: (pool) => `${pool}, ${poolLabel(pool)},`,
    actsThroughAws: false,
    reachedWithoutIam: 'over its Runtime API',
    poolLabel,
    locks: {
      weights: () => (h.rampMap ? [lock('map', h.rampMap)] : []),
      pool: (pool) => (h.backends[pool] ? [lock('backend', h.backends[pool])] : []),
      restrictions: () => (h.restrictMap ? [lock('map', h.restrictMap)] : []),
    },
    iam: {weights: () => [], pool: () => [], restart: () => [], restrict: () => [], lift: () => [], read: () => []},
    problems() {
      const problems: BackendProblem[] = []
      const aws: Array<[boolean, ReadonlyArray<PropertyKey>, string]> = [
        [targets.dns !== undefined, ['targets', 'dns'], 'targets.dns'],
        [targets.targetGroups !== undefined, ['targets', 'targetGroups'], 'targets.targetGroups'],
        [targets.listener !== undefined, ['targets', 'listener'], 'targets.listener'],
        [targets.metrics?.source === 'cloudwatch', ['targets', 'metrics', 'source'], 'CloudWatch metrics (targets.metrics.source)'],
      ]
      for (const [named, path, what] of aws)
        if (named)
          problems.push({path, message: `${what} and targets.haproxy: one runbook drives one control plane, AWS or HAProxy; split it into two runbooks`})
      try {
        parseAddress(h.socket)
      } catch (error) {
        problems.push({path: ['targets', 'haproxy', 'socket'], message: (error as Error).message})
      }
      for (const pool of Object.keys(h.slowStart ?? {}))
        if (!(pool in h.backends))
          problems.push({path: ['targets', 'haproxy', 'slowStart', pool], message: `no pool "${pool}" in targets.haproxy.backends; it has ${pools.join(', ')}`})
      return problems
    },
    stepProblems(step: BackendStep, path): BackendProblem[] {
      const problems: BackendProblem[] = []
      const fail = (at: ReadonlyArray<PropertyKey>, message: string) => problems.push({path: [...path, ...at], message})
      if (step.action === 'restrict') {
        // Refused when loaded rather than when the step runs: HAProxy's snippet matches path prefixes only.
        const headers = Object.keys(step.headers ?? {})
        if (headers.length > 0)
          fail(['headers'], `HAProxy matches headers only where its config names them (${headers.join(', ')}); restrict ${step.type} by paths`)
        ;(step.paths ?? []).forEach((p, k) => {
          if (/[*?\s]/.test(p.replace(/\*$/, '')))
            fail(['paths', k], `the path "${p}" is not a prefix; HAProxy's restriction map matches path prefixes (a * only at the end)`)
        })
      }
      if (step.action === 'cycle') {
        if (step.pool !== undefined && !h.backends[step.pool])
          fail(['pool'], `no backend for pool "${step.pool}" in targets.haproxy.backends; it has ${pools.join(', ')}`)
        // What the ALB changes through its API, HAProxy takes only from its config, by a reload.
        if (step.slowStart !== undefined)
          fail(['slowStart'], 'HAProxy cannot change slow start at runtime; set slowstart in haproxy.cfg and give it in targets.haproxy.slowStart')
        if (step.failoverPercent !== undefined)
          fail(
            ['failoverPercent'],
            'HAProxy has no panic threshold or routing failover to set; the nearest are `backup` servers (and `option allbackups`) in haproxy.cfg',
          )
      }
      return problems
    },
  }
}

/** What HAProxy's face and factory read of any runbook's targets: targets.haproxy when it is there. */
export type HaproxyFaceTargets = Omit<HaproxyTargetsOf, 'haproxy'> & {haproxy?: HaproxyTargetsOf['haproxy']}

/** HAProxy's face: targets that name targets.haproxy. */
export const haproxyFace: BackendFace<HaproxyFaceTargets> = {
  family: 'haproxy',
  names: (targets) => targets.haproxy !== undefined,
  backend(targets) {
    if (!targets.haproxy) throw new Error('the HAProxy face was asked for targets with no targets.haproxy')
    return haproxyBackend({...targets, haproxy: targets.haproxy})
  },
}
