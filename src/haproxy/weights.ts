import type {WeightsPort, WeightMap} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import {RuntimeMap, type MapEntry} from './maps.js'
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
 * are the map's entries (percent per backend, summing to 100: rampSplit refuses a map that is
 * not, naming it); a step is one atomic map commit,
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
    return rampSplit(entries, this.map.file, this.label)
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
    const sharing = Object.keys(next).filter((s) => next[s] > 0)
    if (sharing.length > 2)
      throw new FailedError(
        `weights for ${this.label} give traffic to ${sharing.length} backends (${describeSplit(next)}); the ramp snippet splits between two, so HAProxy would not route them`,
      )
    if (Object.keys(next).every((s) => next[s] === now[s])) return
    await this.map.replace(
      Object.entries(next).map(([key, w]) => ({key, value: String(w)})),
      signal,
    )
  }
}

/**
 * The split HAProxy routes by, read from the ramp map's entries, or an error that says why this
 * map has none sluice can read. rampConfig's lines take one entry, the ramped backend's, as its
 * percent (clamped to 0–100 by the draw) and send every other request to the other backend: the
 * other entry is never looked at. So the entries are the split only when they are whole percents
 * adding up to 100 with at most two above 0; otherwise what HAProxy routes depends on which
 * backend the snippet ramps, which the map does not say (blue 90 green 30 routes green 30% under
 * a snippet ramping green, 10% under one ramping blue).
 *
 * Refused rather than normalised: a ramp plans every step from the split it starts at, and one
 * that started from a guessed split would move traffic by the guess. Setting the map right is one
 * `set map` line, and the message gives it.
 */
export function rampSplit(entries: MapEntry[], file: string, label: string): WeightMap {
  const notPercent = entries.find((e) => !/^\d+$/.test(e.value) || Number(e.value) > 100)
  if (notPercent)
    throw new FailedError(
      `${label}: the entry "${notPercent.key} ${notPercent.value}" is not a whole percent from 0 to 100, so the split HAProxy routes by cannot be read; sluice changed nothing. Set it with \`set map ${file} ${notPercent.key} <percent>\` (the entries adding up to 100), then run again`,
    )
  const weights: WeightMap = Object.fromEntries(entries.map((e) => [e.key, Number(e.value)]))
  const total = entries.reduce((sum, e) => sum + Number(e.value), 0)
  const sharing = entries.filter((e) => Number(e.value) > 0)
  if (total === 100 && sharing.length <= 2) return weights
  const read = `${label}: its entries ${describeSplit(weights)} add up to ${total}${total === 100 ? '' : ', not 100'}`
  const after = 'sluice reads no split from it, will not ramp from it, and changed nothing'
  if (entries.length === 2) {
    const [a, b] = entries
    const routes = (ramped: MapEntry, other: MapEntry) => {
      const share = Math.min(100, Number(ramped.value))
      return `a snippet ramping ${ramped.key} routes ${ramped.key} ${share}% and ${other.key} ${100 - share}%`
    }
    const keep = Math.min(100, Number(b.value))
    throw new FailedError(
      `${read}. HAProxy's ramp snippet reads only the ramped backend's entry as its percent and sends the rest to the other: ${routes(b, a)}; ${routes(a, b)}. ` +
        `${after}: make the entries add up to 100 (\`set map ${file} ${a.key} ${100 - keep}\` keeps what a snippet ramping ${b.key} routes now), then run again`,
    )
  }
  throw new FailedError(
    `${read}${sharing.length > 2 ? `, with ${sharing.length} above 0` : ''}. HAProxy's ramp snippet splits between two backends, reading only the ramped one's entry as its percent, so this map does not say what it routes. ` +
      `${after}: leave two entries that add up to 100 (\`set map ${file} <backend> <percent>\`, \`del map ${file} <backend>\`), then run again`,
  )
}

const describeSplit = (weights: WeightMap): string =>
  Object.entries(weights)
    .map(([s, w]) => `${s}=${w}`)
    .join(' ')

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
