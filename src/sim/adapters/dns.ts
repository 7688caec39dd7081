import type {WeightsPort, WeightMap} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/** A weighted record whose sets send clients to the simulated pools; the fleet's DNS model applies the TTL. */
export class SimDns implements WeightsPort {
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
        return [set, first ? (poolWeights[pool] ?? 0) : 0]
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
