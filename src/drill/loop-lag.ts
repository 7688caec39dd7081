/**
 * How late this process's event loop runs: a timer every `intervalMs`, each firing's lateness
 * kept. perf_hooks' monitorEventLoopDelay does the same, but in a worker thread beside another of
 * its histograms (the tests run the fleet and the load generator in one) it can record nothing.
 */
export class LoopLag {
  private readonly samples: number[] = []
  private readonly timer: NodeJS.Timeout
  private last = performance.now()

  constructor(private readonly intervalMs = 10) {
    this.timer = setInterval(() => {
      const now = performance.now()
      // A drill's run is minutes: a sample every 10 ms is tens of thousands, not worth thinning.
      this.samples.push(Math.max(0, now - this.last - this.intervalMs))
      this.last = now
    }, intervalMs)
    this.timer.unref()
  }

  /** Milliseconds late: the 99th percentile of the firings so far, and the worst. */
  read(): {p99: number; max: number} {
    if (this.samples.length === 0) return {p99: 0, max: 0}
    const sorted = [...this.samples].sort((a, b) => a - b)
    return {p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))], max: sorted[sorted.length - 1]}
  }

  stop(): void {
    clearInterval(this.timer)
  }
}
