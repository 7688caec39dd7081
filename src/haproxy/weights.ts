import type {WeightsPort, WeightMap} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import {RuntimeMap} from './maps.js'
import type {RuntimeApi} from './runtime.js'

/**
 * The lines an SRE puts in the frontend of haproxy.cfg so that sluice can ramp between two
 * backends at runtime. The map file holds `<backend> <percent>` for both, e.g. `blue 100` and
 * `green 0`; HAProxy routes `green`'s percent of requests to green and the rest to blue.
 */
export function rampConfig(mapFile: string, ramped: string, other: string): string {
  return [
    `  # sluice ramp: "${ramped}" gets its percent from ${mapFile}; the rest goes to "${other}"`,
    `  http-request set-var(txn.sluice_share) str(${ramped}),map_str_int(${mapFile},0)`,
    `  use_backend ${ramped} if { rand(100),sub(txn.sluice_share) lt 0 }`,
    `  use_backend ${other}`,
  ].join('\n')
}

/**
 * A ramp between HAProxy backends, through the weights port the ramp action drives. The weights
 * are the map's entries (percent per backend, summing to 100); a step is one atomic map commit,
 * and HAProxy routes every request after it by the new split (in http mode it decides per
 * request, keep-alive connections included), so the "TTL" is 0.
 */
export class HaproxyWeights implements WeightsPort {
  private readonly map: RuntimeMap

  constructor(api: RuntimeApi, mapFile: string) {
    this.map = new RuntimeMap(api, mapFile)
  }

  get label(): string {
    return this.map.label
  }

  async ttl(): Promise<number> {
    return 0
  }

  async readWeights(signal?: AbortSignal): Promise<WeightMap> {
    const entries = await this.map.entries(signal)
    if (entries.length === 0) throw new FailedError(`${this.label} is empty; it needs one "<backend> <percent>" line per backend of the ramp`)
    return Object.fromEntries(entries.map((e) => [e.key, Number(e.value)]))
  }

  async applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void> {
    const now = await this.readWeights(signal)
    for (const [set, weight] of Object.entries(weights)) {
      if (!(set in now)) throw new FailedError(`${this.label} has no backend "${set}"; it has ${Object.keys(now).join(', ')}`)
      if (!Number.isInteger(weight) || weight < 0 || weight > 100)
        throw new FailedError(`weight ${weight} for backend "${set}" of ${this.label} is not a whole percent from 0 to 100`)
    }
    const next = {...now, ...weights}
    const total = Object.values(next).reduce((a, b) => a + b, 0)
    if (total !== 100)
      throw new FailedError(
        `weights for ${this.label} add up to ${total}, not 100 (${Object.entries(next)
          .map(([s, w]) => `${s}=${w}`)
          .join(' ')})`,
      )
    if (Object.keys(next).every((s) => next[s] === now[s])) return
    await this.map.replace(
      Object.entries(next).map(([key, w]) => ({key, value: String(w)})),
      signal,
    )
  }
}

/**
 * The ramp map seen by pool instead of by backend, for a step that names pools (weighted-target-
 * groups): the same map, the same atomic commits. A backend the runbook does not name keeps its
 * own name.
 */
export class PoolKeyedWeights implements WeightsPort {
  constructor(
    private readonly map: WeightsPort,
    /** Pool → backend. */
    private readonly backends: Record<string, string>,
  ) {}

  get label(): string {
    return this.map.label
  }

  ttl(signal?: AbortSignal): Promise<number> {
    return this.map.ttl(signal)
  }

  async readWeights(signal?: AbortSignal): Promise<WeightMap> {
    const byBackend = await this.map.readWeights(signal)
    const poolOf = (backend: string) => Object.entries(this.backends).find(([, b]) => b === backend)?.[0] ?? backend
    return Object.fromEntries(Object.entries(byBackend).map(([backend, w]) => [poolOf(backend), w]))
  }

  applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void> {
    return this.map.applyWeights(Object.fromEntries(Object.entries(weights).map(([pool, w]) => [this.backends[pool] ?? pool, w])), signal)
  }
}
