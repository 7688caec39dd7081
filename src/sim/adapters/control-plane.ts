import type {ControlPlane, PoolPort} from '../../ports/control-plane.js'
import {VirtualClock} from '../clock.js'
import type {Fleet} from '../fleet.js'
import {SimDns} from './dns.js'
import {MemoryFreeze} from './freeze.js'
import {SimHooks} from './hooks.js'
import {SimMetrics} from './metrics.js'
import {SimRules} from './rules.js'
import {SimSplit} from './split.js'
import {SimTargetGroup} from './target-group.js'

export interface SimTargets {
  /** Weighted set identifier → pool: the runbook's targets.dns.sets, or on HAProxy its ramp map's backends → pools. */
  sets?: Record<string, string>
  /** What holds the weights: the record, or the HAProxy ramp map. */
  record?: string
  /** Pool names the runbook has target groups (or HAProxy backends) for. */
  targetGroups: string[]
  /** Whether the runbook has somewhere for restrictions: a listener, or a HAProxy restriction map. */
  listener: boolean
  metrics: boolean
}

/** The control plane of a rehearsal: the same ports live mode has, wired to a simulated fleet. */
export function simulatedControlPlane(fleet: Fleet, targets: SimTargets, options: {pace?: number | null; operator: string}): ControlPlane {
  const clock = new VirtualClock(fleet, options.pace ?? null)
  const groups = new Map<string, PoolPort>()
  for (const name of targets.targetGroups) groups.set(name, new SimTargetGroup(name, fleet.pools[fleet.poolIndex(name)], fleet, clock))
  return {
    clock,
    weights: targets.sets ? new SimDns(fleet, targets.sets, targets.record ?? 'record') : undefined,
    poolWeights: (at) => new SimSplit(fleet, targets.targetGroups, at),
    pools: groups,
    restrictions: targets.listener ? new SimRules(fleet) : undefined,
    metrics: targets.metrics ? new SimMetrics(fleet) : undefined,
    freeze: new MemoryFreeze(),
    hooks: new SimHooks(fleet, clock),
    operator: options.operator,
    runId: 'rehearsal',
  }
}
