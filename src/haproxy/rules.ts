import type {Restriction, RestrictionPort} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import {RuntimeMap, type MapEntry} from './maps.js'
import type {RuntimeApi} from './runtime.js'

/**
 * The lines an SRE puts in the frontend of haproxy.cfg so that sluice can restrict traffic types
 * at runtime. The map starts empty (an empty file); sluice fills it with `path-prefix type:seconds`,
 * or `type:seconds:keep` for a restriction of part of the type, where `keep` is the percent let
 * through: each request draws rand(100), and is turned away when the draw is at least `keep`. An
 * entry without `keep` keeps nothing, so a map written for an older snippet still restricts in
 * full, and an older snippet reading a partial entry turns the whole type away: never less than
 * asked. They go before any `use_backend`, so a restricted request never reaches a server.
 */
export function restrictionConfig(mapFile: string): string {
  return [
    `  # sluice restrict/lift: path prefix -> "<traffic type>:<Retry-After seconds>[:<percent let through>]", changed at runtime`,
    `  http-request set-var(txn.sluice_restricted) path,map_beg(${mapFile})`,
    `  http-request set-var(txn.sluice_keep) int(0) if { var(txn.sluice_restricted) -m found }`,
    `  http-request set-var(txn.sluice_keep) var(txn.sluice_restricted),field(3,:) if { var(txn.sluice_restricted),field(3,:) -m reg ^[0-9]+$ }`,
    `  http-request return status 503 content-type application/json lf-string "{\\"error\\":\\"temporarily restricted during recovery\\",\\"type\\":\\"%[var(txn.sluice_restricted),field(1,:)]\\"}" hdr Retry-After "%[var(txn.sluice_restricted),field(2,:)]" if { var(txn.sluice_restricted) -m found } { rand(100),sub(txn.sluice_keep) ge 0 }`,
  ].join('\n')
}

/**
 * Restrictions as entries of one HAProxy map, matched on the path's prefix (map_beg): a restricted
 * request gets a 503 with Retry-After straight from HAProxy. Each entry carries its type and
 * Retry-After, so `list` reads everything back from HAProxy and any machine can lift it. A
 * change is one atomic map commit, so a type with many paths is turned away all at once.
 *
 * Paths are prefixes: `/sync/*` and `/sync/` both restrict everything under /sync/. Header
 * matches are not supported (HAProxy's config must name each header it matches; see the report).
 */
export class HaproxyRules implements RestrictionPort {
  private readonly map: RuntimeMap

  constructor(api: RuntimeApi, mapFile: string) {
    this.map = new RuntimeMap(api, mapFile)
  }

  get label(): string {
    return this.map.label
  }

  async list(): Promise<Restriction[]> {
    const byType = new Map<string, Restriction>()
    for (const {key, value} of await this.map.entries()) {
      const {type, retryAfterSeconds, share} = parseValue(value)
      // An entry that keeps 100% (`type:30:100`) is listed with a share of 0: it is there, and turns nothing away.
      const r = byType.get(type) ?? {type, paths: [], headers: {}, retryAfterSeconds, ...(share < 100 ? {share} : {})}
      r.paths.push(key)
      byType.set(type, r)
    }
    return [...byType.values()]
  }

  async add(restriction: Restriction): Promise<void> {
    const {type, retryAfterSeconds} = restriction
    const headers = Object.keys(restriction.headers)
    if (headers.length > 0)
      throw new FailedError(
        `restricting ${type} on ${this.label}: HAProxy matches headers only where its config names them (${headers.join(', ')}); restrict by paths`,
      )
    if (restriction.paths.length === 0) throw new FailedError(`restricting ${type} on ${this.label} needs paths to match`)
    if (!/^[A-Za-z0-9_.-]+$/.test(type))
      throw new FailedError(`restricting on ${this.label}: the traffic type "${type}" must be letters, digits, _ . or -, to fit a map value`)
    if (!Number.isInteger(retryAfterSeconds) || retryAfterSeconds < 0)
      throw new FailedError(`restricting ${type} on ${this.label}: Retry-After of ${retryAfterSeconds} s is not a whole number of seconds`)
    const prefixes = restriction.paths.map((p) => prefixOf(p, type, this.label))
    const current = await this.map.entries()
    const clash = current.find((e) => prefixes.includes(e.key) && parseValue(e.value).type !== type)
    if (clash) throw new FailedError(`restricting ${type} on ${this.label}: the path ${clash.key} is already restricted as ${parseValue(clash.value).type}`)
    const share = restriction.share ?? 100
    if (!Number.isInteger(share) || share < 1 || share > 100)
      throw new FailedError(`restricting ${type} on ${this.label}: a share of ${share}% is not a whole percent from 1 to 100`)
    const value = share === 100 ? `${type}:${retryAfterSeconds}` : `${type}:${retryAfterSeconds}:${100 - share}`
    const next: MapEntry[] = [...current.filter((e) => parseValue(e.value).type !== type), ...[...new Set(prefixes)].map((key) => ({key, value}))]
    await this.map.replace(next)
  }

  async remove(type: string): Promise<boolean> {
    const current = await this.map.entries()
    const kept = current.filter((e) => parseValue(e.value).type !== type)
    if (kept.length === current.length) return false
    await this.map.replace(kept)
    return true
  }
}

/**
 * `type:seconds` or `type:seconds:keep` (percent let through) → the type, its Retry-After and the
 * percent turned away, as the snippet reads it: a keep that is not digits keeps nothing, and one
 * of 100 or more keeps every request (the draw, 0–99, is never at least it), so turns away 0%.
 */
function parseValue(value: string): {type: string; retryAfterSeconds: number; share: number} {
  const [type, seconds, keep] = value.split(':')
  const kept = keep !== undefined && /^[0-9]+$/.test(keep) ? Math.min(100, Number(keep)) : 0
  return {type, retryAfterSeconds: Number(seconds) || 0, share: 100 - kept}
}

/** `/sync/*` → `/sync/`; a pattern with a wildcard anywhere but the end cannot be a prefix. */
function prefixOf(path: string, type: string, label: string): string {
  const prefix = path.endsWith('*') ? path.slice(0, -1) : path
  if (/[*?\s]/.test(prefix))
    throw new FailedError(`restricting ${type} on ${label}: the path "${path}" is not a prefix; HAProxy's map matches path prefixes (a * only at the end)`)
  return prefix
}
