import type {
  ControlPlane, DnsPort, FreezePort, FreezeRecord, HookPort, HookSpec, MetricKind, MetricsPort, Restriction,
  Target, TargetGroupPort, TrafficRulesPort, WeightMap,
} from '../control/ports.js'
import {VirtualClock} from './clock.js'
import type {Fleet} from './fleet.js'
import type {ServerPool} from './pool.js'

/** Simulated targets are named after their pool: `mailbox-07`. */
function targetId(pool: string, i: number, size: number): string {
  return `${pool}-${String(i).padStart(String(size - 1).length, '0')}`
}

function indexOf(pool: ServerPool, id: string): number {
  const i = Number(id.slice(pool.config.name.length + 1))
  if (!id.startsWith(`${pool.config.name}-`) || !Number.isInteger(i) || i < 0 || i >= pool.size)
    throw new Error(`no target ${id} in ${pool.config.name}`)
  return i
}

class SimTargetGroup implements TargetGroupPort {
  readonly label: string
  constructor(
    readonly name: string,
    private readonly pool: ServerPool,
    private readonly fleet: Fleet,
    private readonly clock: VirtualClock,
  ) {
    this.label = `target group ${name} (simulated)`
  }

  private health(i: number): Target['health'] {
    const p = this.pool
    if (!p.registered[i]) return 'unused'
    if (p.ejected[i] || p.broken[i] || p.stalled[i] || p.restartingUntil[i] || p.failing[i]) return 'unhealthy'
    return 'healthy'
  }

  async targets(): Promise<Target[]> {
    return Array.from({length: this.pool.size}, (_, i) => ({
      id: targetId(this.name, i, this.pool.size),
      health: this.health(i),
      ip: `10.0.${i >> 8}.${i & 255}`,
      port: 443,
    }))
  }

  async deregister(ids: string[]): Promise<void> {
    this.pool.deregister(ids.map((id) => indexOf(this.pool, id)))
  }

  async waitDrained(): Promise<boolean> {
    // The simulated balancer stops sending new requests at once and requests last under a tick.
    return true
  }

  async register(ids: string[]): Promise<void> {
    this.pool.register(ids.map((id) => indexOf(this.pool, id)), this.fleet.tick)
  }

  async waitHealthy(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    const indexes = ids.map((id) => indexOf(this.pool, id))
    const deadline = this.clock.now() + timeoutSeconds
    for (;;) {
      if (indexes.every((i) => this.health(i) === 'healthy')) return true
      if (this.clock.now() >= deadline || signal?.aborted) return false
      await this.clock.sleep(1, signal)
    }
  }

  async slowStart(): Promise<number> {
    return this.pool.policy.slowStart
  }

  async setSlowStart(seconds: number): Promise<void> {
    this.pool.policy.slowStart = seconds
  }

  async failoverPercent(): Promise<number | null> {
    return this.pool.policy.panicThreshold > 0 ? this.pool.policy.panicThreshold : null
  }

  async setFailoverPercent(percent: number | null): Promise<void> {
    this.pool.policy.panicThreshold = percent ?? 0
  }
}

class SimDns implements DnsPort {
  readonly label: string
  private readonly weights: WeightMap

  constructor(
    private readonly fleet: Fleet,
    private readonly sets: Record<string, string>,
    record: string,
  ) {
    this.label = `${record} (simulated)`
    // Each pool's starting weight goes to its first set; more sets on one pool start at 0.
    const poolWeights = fleet.currentWeights()
    const seen = new Set<string>()
    this.weights = Object.fromEntries(
      Object.entries(sets).map(([set, pool]) => {
        const first = !seen.has(pool)
        seen.add(pool)
        return [set, first ? poolWeights[pool] ?? 0 : 0]
      }),
    )
  }

  async ttl(): Promise<number> {
    return this.fleet.config.dns.ttl
  }

  async readWeights(): Promise<WeightMap> {
    return {...this.weights}
  }

  async applyWeights(weights: WeightMap): Promise<void> {
    Object.assign(this.weights, weights)
    const byPool: Record<string, number> = {}
    for (const [set, w] of Object.entries(this.weights)) byPool[this.sets[set]] = (byPool[this.sets[set]] ?? 0) + w
    this.fleet.setWeights(byPool)
  }
}

class SimRules implements TrafficRulesPort {
  readonly label = 'listener rules (simulated)'
  private readonly rules = new Map<string, Restriction>()

  constructor(private readonly fleet: Fleet) {}

  async list(): Promise<Restriction[]> {
    return [...this.rules.values()]
  }

  async add(restriction: Restriction): Promise<void> {
    this.fleet.setRestricted(restriction.type, true)
    this.rules.set(restriction.type, restriction)
  }

  async remove(type: string): Promise<boolean> {
    if (!this.rules.has(type)) return false
    this.fleet.setRestricted(type, false)
    this.rules.delete(type)
    return true
  }
}

/** Metrics read back from the simulation record, like CloudWatch from the load balancer. */
class SimMetrics implements MetricsPort {
  readonly label = 'simulated load balancer metrics'
  constructor(private readonly fleet: Fleet) {}

  async read(kind: MetricKind, windowSeconds: number, pool?: string): Promise<number | null> {
    const {fleet} = this
    const r = fleet.record
    const end = fleet.tick
    const start = Math.max(0, end - Math.max(1, Math.round(windowSeconds / fleet.dt)))
    const series = pool === undefined ? r.pools : r.pools.filter((p) => p.name === pool)
    if (kind === 'healthy-targets') {
      const pools = pool === undefined ? fleet.pools : [fleet.pools[fleet.poolIndex(pool)]]
      let size = 0
      let healthy = 0
      for (const p of pools) {
        size += p.size
        healthy += p.countInRotation()
      }
      return size === 0 ? null : (healthy / size) * 100
    }
    if (end === start) return null
    let offered = 0
    let failed = 0
    let latencySum = 0
    let latencyWeight = 0
    for (const s of series) {
      for (let t = start; t < end; t++) {
        offered += s.offered[t]
        failed += s.failed[t]
        if (!Number.isNaN(s.latencyP99[t])) {
          latencySum += s.latencyP99[t] * s.offered[t]
          latencyWeight += s.offered[t]
        }
      }
    }
    // No requests in the window is no data, not zero errors.
    if (offered <= 0) return null
    if (kind === 'error-rate') return (failed / offered) * 100
    if (kind === 'request-rate') return offered / ((end - start) * fleet.dt)
    return latencyWeight > 0 ? latencySum / latencyWeight : null
  }
}

class MemoryFreeze implements FreezePort {
  private record: FreezeRecord | null = null
  async get(): Promise<FreezeRecord | null> {
    return this.record
  }
  async set(record: FreezeRecord): Promise<void> {
    this.record = record
  }
  async clear(): Promise<void> {
    this.record = null
  }
}

/** Hooks in a rehearsal run no commands: a restart restarts the simulated server, a remediation repairs it. */
class SimHooks implements HookPort {
  constructor(
    private readonly fleet: Fleet,
    private readonly clock: VirtualClock,
  ) {}

  async run(kind: 'restart' | 'remediate', _hook: HookSpec, target: Target, signal?: AbortSignal): Promise<void> {
    const pool = this.fleet.pools.find((p) => target.id.startsWith(`${p.config.name}-`))
    if (!pool) throw new Error(`no simulated pool holds ${target.id}`)
    const i = indexOf(pool, target.id)
    if (kind === 'remediate') {
      pool.remediate([i])
      return
    }
    pool.restart([i], this.fleet.tick, pool.config.restartSeconds)
    await this.clock.sleep(pool.config.restartSeconds, signal)
  }
}

export interface SimTargets {
  /** Weighted set identifier → pool, from the runbook's targets.dns.sets. */
  sets?: Record<string, string>
  record?: string
  /** Pool names the runbook has target groups for. */
  targetGroups: string[]
  listener: boolean
  metrics: boolean
}

/** The control plane of a rehearsal: the same ports live mode has, wired to a simulated fleet. */
export function simulatedControlPlane(fleet: Fleet, targets: SimTargets, options: {pace?: number | null; operator: string}): ControlPlane {
  const clock = new VirtualClock(fleet, options.pace ?? null)
  const groups = new Map<string, TargetGroupPort>()
  for (const name of targets.targetGroups) groups.set(name, new SimTargetGroup(name, fleet.pools[fleet.poolIndex(name)], fleet, clock))
  return {
    clock,
    dns: targets.sets ? new SimDns(fleet, targets.sets, targets.record ?? 'record') : undefined,
    targetGroups: groups,
    rules: targets.listener ? new SimRules(fleet) : undefined,
    metrics: targets.metrics ? new SimMetrics(fleet) : undefined,
    freeze: new MemoryFreeze(),
    hooks: new SimHooks(fleet, clock),
    operator: options.operator,
  }
}
