import type {HealthCheckConfig} from '../config.js'
import type {Random} from '../random.js'
import type {CheckedPool, PoolChecks} from './pool-checks.js'

/**
 * Envoy's outlier detection on a periodic check: servers in rotation that are down or answered
 * late are ejected for base × times-ejected (capped at the maximum), at most maxEjectionPercent
 * of the pool at once; a server that stays healthy has one ejection forgiven each check. Slow
 * start ramps a returning server's weight linearly from its minimum.
 */
export class EnvoyEjection implements PoolChecks {
  readonly family = 'envoy'
  private readonly checkEvery: number
  /** The failing servers of one check, by index. */
  private readonly candidates: Int32Array

  constructor(
    private readonly pool: CheckedPool,
    private readonly health: HealthCheckConfig,
    private readonly random: Random,
  ) {
    this.checkEvery = Math.max(1, Math.round(health.interval / pool.dt))
    this.candidates = new Int32Array(pool.size)
  }

  afterTick(t: number): void {
    if (t % this.checkEvery === 0) this.check(t)
  }

  slowStartWeight(elapsed: number, window: number, minWeight: number): number {
    const w = elapsed / window
    return w < minWeight ? minWeight : w
  }

  registered(): void {}

  /** The simulated Envoy stops sending new requests at once, and what it sent lasts under a tick. */
  drainSeconds(): number {
    return 0
  }

  /**
   * When the cap on ejections binds, which failing servers go is a seeded draw, since a real
   * balancer sees them in no particular order.
   */
  private check(t: number): void {
    const pool = this.pool
    const count = this.collectFailing()
    const room = pool.maxEjected - pool.ejectedCount
    if (count === 0 || room <= 0) return
    if (count > room) this.random.shuffle(this.candidates, count)
    const take = Math.min(room, count)
    for (let k = 0; k < take; k++) this.eject(this.candidates[k], t)
  }

  /**
   * The check's pass over the pool: servers in rotation that fail go into `candidates`, the
   * others have one ejection forgiven. Nothing follows the loop but the return, so V8 can compile
   * the loop mid-call without bailing out at its end.
   */
  private collectFailing(): number {
    const {registered, ejected, failing, timesEjected, size} = this.pool
    const candidates = this.candidates
    let count = 0
    for (let i = 0; i < size; i++) {
      if (registered[i] === 0 || ejected[i] !== 0) continue
      if (failing[i] !== 0) candidates[count++] = i
      else if (timesEjected[i] > 0) {
        // Envoy forgives a host that stays healthy.
        timesEjected[i]--
      }
    }
    return count
  }

  private eject(i: number, t: number): void {
    const pool = this.pool
    pool.timesEjected[i]++
    const seconds = Math.min(this.health.baseEjection * pool.timesEjected[i], this.health.maxEjection)
    pool.takeOut(i, t + Math.max(1, Math.round(seconds / pool.dt)))
  }
}
