import type {WeightMap, WeightsPort} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/** The load balancer's split between the simulated pools: a change reaches every request at once, with no DNS cache to wait out. */
export class SimSplit implements WeightsPort {
  readonly label: string

  constructor(
    private readonly fleet: Fleet,
    private readonly pools: string[],
    at: string,
  ) {
    // A change is recorded against the label, which comes back as `at` to undo it.
    this.label = at.endsWith(' (simulated)') ? at : `${at} (simulated)`
  }

  async ttl(): Promise<number> {
    return 0
  }

  async readWeights(): Promise<WeightMap> {
    const weights = this.fleet.currentWeights()
    return Object.fromEntries(this.pools.map((pool) => [pool, weights[pool] ?? 0]))
  }

  async applyWeights(weights: WeightMap): Promise<void> {
    this.fleet.setSplit(weights)
  }
}
