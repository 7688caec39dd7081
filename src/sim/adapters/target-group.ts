import {FailedError} from '../../errors.js'
import type {Target, PoolPort} from '../../ports/control-plane.js'
import type {VirtualClock} from '../clock.js'
import type {Fleet} from '../fleet.js'
import type {ServerPool} from '../pool.js'
import {indexOf, targetId} from './target-ids.js'

/** A pool's servers as a target group: health read from the pool, registration changed on it. */
export class SimTargetGroup implements PoolPort {
  readonly label: string
  /** When each deregistered server's last session ends, on the clock. */
  private readonly drainedAt = new Map<number, number>()
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

  /**
   * Each server as the balancer lists it. A server in slow start shows its share of weight (what a
   * live balancer shows), not how cold it is: a live run cannot see that, so a rehearsal does not.
   */
  async targets(): Promise<Target[]> {
    return Array.from({length: this.pool.size}, (_, i) => {
      const health = this.health(i)
      const warmth = health === 'healthy' ? this.pool.slowStartShare(i, this.fleet.tick) : 1
      return {
        id: targetId(this.name, i, this.pool.size),
        targetId: targetId(this.name, i, this.pool.size),
        health,
        ip: `10.0.${i >> 8}.${i & 255}`,
        port: 443,
        ...(warmth < 1 ? {warmth} : {}),
      }
    })
  }

  async deregister(ids: string[]): Promise<void> {
    const indexes = ids.map((id) => indexOf(this.pool, id))
    for (const i of indexes) this.drainedAt.set(i, this.clock.now() + this.pool.checks.drainSeconds(i, this.fleet.tick))
    this.pool.deregister(indexes)
  }

  /** Waits until the balancer has no session open on any of `ids` (PoolChecks.drainSeconds), for at most `timeoutSeconds`. */
  async waitDrained(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    const until = Math.max(this.clock.now(), ...ids.map((id) => this.drainedAt.get(indexOf(this.pool, id)) ?? 0))
    const wait = Math.min(until, this.clock.now() + timeoutSeconds) - this.clock.now()
    if (wait > 0) await this.clock.sleep(wait, signal)
    return this.clock.now() >= until
  }

  async register(ids: string[]): Promise<void> {
    this.pool.register(
      ids.map((id) => indexOf(this.pool, id)),
      this.fleet.tick,
    )
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

  // A pool with HAProxy's checks rehearses what HAProxy allows at runtime (src/haproxy/pool.ts):
  // slow start and routing failover are config, not runtime, so a step that changes them is refused
  // here too rather than rehearsed as if it would work.
  async setSlowStart(seconds: number): Promise<void> {
    if (this.pool.checks.family === 'haproxy' && seconds !== this.pool.policy.slowStart)
      throw new FailedError(
        `${this.label}: HAProxy cannot change slow start at runtime (the scenario's health checks are HAProxy's: slowstart ${this.pool.policy.slowStart} s)`,
      )
    this.pool.policy.slowStart = seconds
  }

  async failoverPercent(): Promise<number | null> {
    return this.pool.policy.panicThreshold > 0 ? this.pool.policy.panicThreshold : null
  }

  async setFailoverPercent(percent: number | null): Promise<void> {
    if (this.pool.checks.family === 'haproxy' && percent !== null)
      throw new FailedError(
        `${this.label}: HAProxy has no routing failover (panic threshold) to set to ${percent}% (the scenario's health checks are HAProxy's)`,
      )
    this.pool.policy.panicThreshold = percent ?? 0
  }
}
