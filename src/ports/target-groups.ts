import type {Clock, PoolPort} from './control-plane.js'

// What every target-group adapter (ELBv2, HAProxy) reads the same way through the port, kept once.

/** The share of one pool's targets (or every pool's) passing their checks, in percent; null with no targets. */
export async function healthyShare(groups: ReadonlyMap<string, PoolPort>, pool: string | undefined, signal?: AbortSignal): Promise<number | null> {
  const chosen = pool === undefined ? [...groups.values()] : [groups.get(pool)].filter((g): g is PoolPort => g !== undefined)
  let total = 0
  let healthy = 0
  for (const group of chosen) {
    const targets = await group.targets(signal)
    total += targets.length
    healthy += targets.filter((t) => t.health === 'healthy').length
  }
  return total === 0 ? null : (healthy / total) * 100
}

/**
 * Asks `done` every `pollSeconds` on `clock` until it says yes (true), or until `timeoutSeconds`
 * have passed or `signal` stops it (false). The one waiting loop of the target-group adapters.
 */
export async function pollUntil(
  done: () => Promise<boolean>,
  timeoutSeconds: number,
  clock: Clock,
  pollSeconds: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const deadline = clock.now() + timeoutSeconds
  for (;;) {
    if (await done()) return true
    if (clock.now() >= deadline || signal?.aborted) return false
    await clock.sleep(pollSeconds, signal)
  }
}

/** Reads the group every `pollSeconds` until all of `ids` are healthy; false at the timeout or on a stop. */
export function waitUntilHealthy(
  group: Pick<PoolPort, 'targets'>,
  ids: string[],
  timeoutSeconds: number,
  clock: Clock,
  pollSeconds: number,
  signal?: AbortSignal,
): Promise<boolean> {
  const wanted = new Set(ids)
  return pollUntil(
    async () => (await group.targets(signal)).filter((t) => wanted.has(t.id) && t.health === 'healthy').length === wanted.size,
    timeoutSeconds,
    clock,
    pollSeconds,
    signal,
  )
}
