import {join} from 'node:path'
import {haproxyPorts} from '../haproxy/ports.js'
import {WallClock} from '../local/wall-clock.js'
import type {ControlPlane, HookPort, HookSpec, Target} from '../ports/control-plane.js'
import {MemoryFreeze} from '../sim/adapters/freeze.js'
import {sendFleetCommand, type FleetInfo} from '../drill/fleet.js'
import {drillMaps, type DrillHaproxy} from '../drill/haproxy-config.js'

/**
 * A drill's hooks: a restart restarts the fleet's server (down for the pool's restart time, then
 * back cold) and returns when it is listening again, as a restart command would; a remediation
 * repairs it (its fault switched off), as the simulator's does.
 */
export class FleetHooks implements HookPort {
  constructor(
    private readonly fleet: FleetInfo,
    private readonly restartSeconds: Record<string, number>,
  ) {}

  async run(kind: 'restart' | 'remediate', _hook: HookSpec, target: Target, signal?: AbortSignal): Promise<void> {
    const {pool, index} = this.serverOf(target)
    if (kind === 'remediate') return sendFleetCommand(this.fleet.admin, {op: 'fault', pool, servers: [index], mode: 'none'})
    await sendFleetCommand(this.fleet.admin, {op: 'restart', pool, servers: [index]})
    await new WallClock().sleep(this.restartSeconds[pool] ?? 0, signal)
  }

  /** HAProxy names the drill's servers `<pool>-<index>` (drillHaproxy). */
  private serverOf(target: Target): {pool: string; index: number} {
    const match = /^(.*)-(\d+)$/.exec(target.id)
    const pool = match && this.fleet.pools.find((p) => p.name === match[1])
    if (!match || !pool || Number(match[2]) >= pool.ports.length) throw new Error(`no server of the drill's fleet is named ${target.id}`)
    return {pool: pool.name, index: Number(match[2])}
  }
}

/**
 * The control plane a drill runs a runbook on: the HAProxy adapters a live run uses (the runbook's
 * pools are the drill's backends), on wall time, with the fleet as hooks and a freeze of its own,
 * so a drill never touches the operator's state or a deploy pipeline's freeze.
 */
export function drillControlPlane(haproxy: DrillHaproxy, dir: string, socket: string, fleet: FleetInfo, restartSeconds: Record<string, number>): ControlPlane {
  const clock = new WallClock()
  const ports = haproxyPorts(
    {
      socket,
      backends: haproxy.backends,
      slowStart: haproxy.slowStart,
      restrictMap: join(dir, drillMaps.restrict),
      ...(haproxy.ramp ? {rampMap: join(dir, drillMaps.ramp)} : {}),
      metrics: true,
    },
    clock,
  )
  return {
    clock,
    weights: ports.weights,
    poolWeights: ports.poolWeights,
    pools: ports.pools,
    restrictions: ports.restrictions,
    metrics: ports.metrics,
    freeze: new MemoryFreeze(),
    hooks: new FleetHooks(fleet, restartSeconds),
    operator: 'drill',
    runId: 'drill',
  }
}
