import type {MetricKind, MetricsPort, Reading} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/**
 * Metrics read back from the simulation record, like CloudWatch from the load balancer.
 * `countScale` is how many requests a gate counts for each of the scenario's: a drill's real
 * fleet serves rate scale × time scale of them, and a judge that weighs requests (judge: counts,
 * minRequests) is given as many in its rehearsal as the real run's gate will have.
 */
export class SimMetrics implements MetricsPort {
  readonly label = 'simulated load balancer metrics'
  constructor(
    private readonly fleet: Fleet,
    private readonly countScale = 1,
  ) {}

  async read(kind: MetricKind, windowSeconds: number, pool?: string): Promise<Reading> {
    const {fleet} = this
    const r = fleet.record
    const end = fleet.tick
    // Every tick of the window, from each pool's ring of recent ticks, which keeps one value a tick
    // however long the run: a window longer than the ring (up to fullResolutionPoints ticks) reads its last ticks.
    const start = Math.max(0, end - Math.max(1, Math.round(windowSeconds / fleet.dt)), end - r.pools[0].recent.size)
    const series = pool === undefined ? r.pools : r.pools.filter((p) => p.name === pool)
    if (kind === 'healthy-targets') {
      const pools = pool === undefined ? fleet.pools : [fleet.pools[fleet.poolIndex(pool)]]
      let size = 0
      let healthy = 0
      for (const p of pools) {
        size += p.size
        healthy += p.countInRotation()
      }
      return {value: size === 0 ? null : (healthy / size) * 100, requests: null}
    }
    if (end === start) return {value: null, requests: 0}
    let offered = 0
    let failed = 0
    let latencySum = 0
    let latencyWeight = 0
    for (const {recent} of series) {
      for (let t = start; t < end; t++) {
        const i = t % recent.size
        offered += recent.offered[i]
        failed += recent.failed[i]
        if (!Number.isNaN(recent.latencyP99[i])) {
          latencySum += recent.latencyP99[i] * recent.offered[i]
          latencyWeight += recent.offered[i]
        }
      }
    }
    // The record holds each tick's rate (per second): the window's requests are their sum times a tick.
    const requests = offered * fleet.dt * this.countScale
    // No requests in the window is no data, not zero errors.
    if (offered <= 0) return {value: null, requests: 0}
    if (kind === 'error-rate') return {value: (failed / offered) * 100, requests}
    if (kind === 'request-rate') return {value: offered / (end - start), requests}
    return {value: latencyWeight > 0 ? latencySum / latencyWeight : null, requests}
  }
}
