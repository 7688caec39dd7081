import type {BackendFamily} from '../ports/backend.js'
import type {Clock, WeightsPort, MetricsPort, PoolPort, RestrictionPort} from '../ports/control-plane.js'
import type {OpenedReadings} from '../ports/pool-readings.js'
import {haproxyFace, type HaproxyFaceTargets} from './backend.js'
import {HaproxyPool} from './pool.js'
import {HaproxyMetrics} from './metrics.js'
import {HaproxyPoolReadings} from './pool-readings.js'
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

/**
 * HAProxy as a live run drives it: its ports over the Runtime API of targets.haproxy, with gate
 * metrics from its own counters when targets.metrics.source is haproxy. It makes no AWS call.
 */
export const haproxyFamily: BackendFamily<HaproxyFaceTargets, unknown> = {
  face: haproxyFace,
  controlPlane(targets, _aws, {clock}) {
    if (!targets.haproxy) throw new Error('the HAProxy factory was asked for targets with no targets.haproxy')
    // The Runtime API client opens a connection per command: there is nothing to let go of.
    return {...haproxyPorts({...targets.haproxy, metrics: targets.metrics?.source === 'haproxy'}, clock), close: () => undefined}
  },
}

/** A HAProxy backend's readings for calibrate and assess, over its Runtime API (and its config, where given). */
export function haproxyPoolReadings(
  source: {socket: string; backend: string; config?: string},
  options: {onSample?: (elapsed: number, total: number) => void} = {},
): OpenedReadings {
  const readings = new HaproxyPoolReadings(new RuntimeApi(source.socket), source.backend, {
    ...(source.config === undefined ? {} : {config: source.config}),
    ...(options.onSample ? {onSample: options.onSample} : {}),
  })
  return {readings, pool: source.backend, close: () => undefined}
}
