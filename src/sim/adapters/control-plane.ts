import type {Backend} from '../../ports/backend.js'
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

/**
 * The control plane of a rehearsal: the same ports a live run has, wired to a simulated fleet,
 * from any family's face (src/ports/backend.ts): its weighted sets, the pools it cycles, whether it
 * has somewhere for restrictions. The runbook's pools are the scenario's, by name.
 */
export function simulatedControlPlane(
  fleet: Fleet,
  backend: Backend,
  options: {pace?: number | null; operator: string; metrics: boolean; countScale?: number},
): ControlPlane {
  const clock = new VirtualClock(fleet, options.pace ?? null)
  // A pool that answers by itself (a sorry backend a ramp parks traffic on) has no servers to be a target group of.
  const targetGroups = backend.targetPools.filter((pool) => fleet.pools[fleet.poolIndex(pool)].config.kind !== 'sorry')
  const groups = new Map<string, PoolPort>()
  for (const name of targetGroups) groups.set(name, new SimTargetGroup(name, fleet.pools[fleet.poolIndex(name)], fleet, clock))
  const sets = backend.weightedSets
  return {
    clock,
    weights: sets ? new SimDns(fleet, sets, backend.weightsLabel ?? 'record') : undefined,
    poolWeights: (at) => new SimSplit(fleet, targetGroups, at),
    pools: groups,
    restrictions: backend.restrictionsLabel !== undefined ? new SimRules(fleet) : undefined,
    metrics: options.metrics ? new SimMetrics(fleet, options.countScale) : undefined,
    freeze: new MemoryFreeze(),
    hooks: new SimHooks(fleet, clock),
    operator: options.operator,
    runId: 'rehearsal',
  }
}
