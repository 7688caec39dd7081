import type {Clock, WeightsPort, MetricsPort, PoolPort, RestrictionPort} from '../ports/control-plane.js'
import {HaproxyPool} from './pool.js'
import {HaproxyMetrics} from './metrics.js'
import {HaproxyRules} from './rules.js'
import {RuntimeApi} from './runtime.js'
import {HaproxyWeights, PoolKeyedWeights} from './weights.js'

/** What a runbook's `targets.haproxy` would say: one HAProxy, reached by its Runtime API. */
export interface HaproxyTargets {
  /** `unix:/run/haproxy/admin.sock`, a socket path, or `host:port` of a `stats socket … level admin`. */
  socket: string
  /** Pool → backend name. */
  backends: Record<string, string>
  /** The `slowstart` haproxy.cfg gives the servers, in seconds, per pool: HAProxy cannot report it. */
  slowStart?: Record<string, number>
  /** The map file of the restriction snippet (restrictionConfig), as the config names it. */
  restrictMap?: string
  /** The map file of the ramp snippet (rampConfig), as the config names it. */
  rampMap?: string
  /** Gate metrics from HAProxy's own counters. */
  metrics?: boolean
}

export interface HaproxyPorts {
  pools: Map<string, PoolPort>
  restrictions?: RestrictionPort
  weights?: WeightsPort
  /** The ramp map by pool (ControlPlane.poolWeights), as a weighted-target-groups step sees it: HAProxy has that one split. */
  poolWeights?: () => WeightsPort
  metrics?: MetricsPort
}

/** The ports one HAProxy provides, all on one Runtime API client, for a live control plane to take. */
export function haproxyPorts(targets: HaproxyTargets, clock: Clock): HaproxyPorts {
  const api = new RuntimeApi(targets.socket)
  const targetGroups = new Map<string, PoolPort>()
  for (const [pool, backend] of Object.entries(targets.backends))
    targetGroups.set(pool, new HaproxyPool(api, clock, pool, backend, {slowStartSeconds: targets.slowStart?.[pool]}))
  const weights = targets.rampMap ? new HaproxyWeights(api, targets.rampMap) : undefined
  return {
    pools: targetGroups,
    ...(targets.restrictMap ? {restrictions: new HaproxyRules(api, targets.restrictMap)} : {}),
    ...(weights ? {weights, poolWeights: () => new PoolKeyedWeights(weights, targets.backends)} : {}),
    ...(targets.metrics ? {metrics: new HaproxyMetrics(api, clock, targets.backends, targetGroups)} : {}),
  }
}
