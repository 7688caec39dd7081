import type {RuntimeApi} from '../haproxy/runtime.js'
import {serverStats} from '../haproxy/stats.js'

/**
 * Servers in rotation as HAProxy sees them, sampled through a drill: every `everySeconds`, the
 * servers of the given backends whose status is UP (a server failing its checks but not yet down,
 * `UP 1/3`, still takes traffic; DOWN, DRAIN and MAINT do not). Read from the same `show stat`
 * an operator would read.
 */
export interface RotationSamples {
  /** Wall seconds from the sampler's start. */
  t: number[]
  inRotation: number[]
}

export interface RunningSampler {
  /** Stops sampling and returns what it read. A sample that could not be read is left out. */
  stop(): Promise<RotationSamples>
}

/** Servers of the backends HAProxy shows UP now (`UP 1/3`, failing but not yet down, counts). */
export async function serversUp(api: RuntimeApi, backends: string[], signal?: AbortSignal): Promise<number> {
  let up = 0
  for (const backend of backends) up += (await serverStats(api, backend, signal)).filter((row) => /^UP/.test(row.status)).length
  return up
}

export function sampleRotation(api: RuntimeApi, backends: string[], everySeconds: number): RunningSampler {
  const samples: RotationSamples = {t: [], inRotation: []}
  const start = performance.now()
  let stopped = false
  let reading: Promise<void> = Promise.resolve()
  const read = async () => {
    const at = (performance.now() - start) / 1000
    try {
      const up = await serversUp(api, backends)
      samples.t.push(at)
      samples.inRotation.push(up)
    } catch {
      // A busy HAProxy can miss a sample; the chart shows the gap rather than a made-up count.
    }
  }
  const timer = setInterval(() => {
    if (!stopped) reading = reading.then(read)
  }, everySeconds * 1000)
  reading = read()
  return {
    async stop() {
      stopped = true
      clearInterval(timer)
      await reading
      return samples
    },
  }
}
