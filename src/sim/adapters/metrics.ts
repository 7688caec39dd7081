import type {MetricKind, MetricsPort} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/** Metrics read back from the simulation record, like CloudWatch from the load balancer. */
export class SimMetrics implements MetricsPort {
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
