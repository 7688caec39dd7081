/**
 * Weighted DNS as clients see it. Resolvers cache an answer for one TTL and their caches were
 * filled at evenly spread times, so the split clients actually use is the average of the split
 * published over the last TTL: a change reaches a growing share of clients and all of them
 * after one TTL.
 */
export class WeightedDns {
  private readonly history: Float64Array
  private readonly sums: Float64Array
  private readonly effective: Float64Array
  private readonly target: Float64Array
  private readonly span: number
  private slot = 0

  constructor(
    private readonly pools: number,
    ttlTicks: number,
    weights: ArrayLike<number>,
  ) {
    this.span = Math.max(1, Math.round(ttlTicks))
    this.history = new Float64Array(this.span * pools)
    this.sums = new Float64Array(pools)
    this.effective = new Float64Array(pools)
    this.target = new Float64Array(pools)
    this.publish(weights)
    // Before the run every resolver already holds the starting answer.
    for (let s = 0; s < this.span; s++) {
      for (let p = 0; p < pools; p++) this.history[s * pools + p] = this.target[p]
    }
    for (let p = 0; p < pools; p++) this.sums[p] = this.target[p] * this.span
  }

  /** Publishes new weights. As in Route 53, when every weight is 0 the records share traffic equally. */
  publish(weights: ArrayLike<number>): void {
    let total = 0
    for (let p = 0; p < this.pools; p++) total += weights[p]
    for (let p = 0; p < this.pools; p++) this.target[p] = total > 0 ? weights[p] / total : 1 / this.pools
  }

  /** Publishes weights every client follows from the next tick: a load balancer's split, which no cache holds back. */
  publishNow(weights: ArrayLike<number>): void {
    this.publish(weights)
    for (let s = 0; s < this.span; s++) for (let p = 0; p < this.pools; p++) this.history[s * this.pools + p] = this.target[p]
    for (let p = 0; p < this.pools; p++) this.sums[p] = this.target[p] * this.span
  }

  /** The published split (what every client sees once caches have expired). */
  published(): Float64Array {
    return this.target
  }

  /** Advances one tick and returns the share of clients resolving to each pool. */
  advance(): Float64Array {
    const base = this.slot * this.pools
    for (let p = 0; p < this.pools; p++) {
      this.sums[p] += this.target[p] - this.history[base + p]
      this.history[base + p] = this.target[p]
      this.effective[p] = Math.max(0, this.sums[p] / this.span)
    }
    this.slot = (this.slot + 1) % this.span
    return this.effective
  }
}
