import {InputError} from '../errors.js'
import type {HaproxyCheckSettings} from '../ports/pool-readings.js'
import {seconds, type ConfigLine, type ConfigSection} from './config-file.js'

/** One server's check settings as its configuration gives them, before HAProxy's defaults fill the gaps. */
export interface ServerCheckConfig {
  inter?: number
  fastinter?: number
  downinter?: number
  fall?: number
  rise?: number
  slowstart?: number
  observe?: string
  errorLimit?: number
  onError?: HaproxyCheckSettings['onError']
}

/** A backend's check settings, every one resolved: the configuration's, else HAProxy's default. */
export interface BackendCheckConfig {
  inter: number
  fastinter: number
  downinter: number
  fall: number
  rise: number
  slowstart: number
  observe: string
  errorLimit: number
  onError: HaproxyCheckSettings['onError']
  /** `timeout check` if set, else inter: HAProxy waits that long for a check's answer. */
  checkTimeout: number
  /** `timeout server`, null when unset: HAProxy then waits for a server's answer without end. */
  timeoutServer: number | null
  /** The backend's section header: `file:line`. */
  at: string
}

const onErrors = new Set(['fastinter', 'fail-check', 'sudden-death', 'mark-down'])

/** The server keywords sluice reads, each a keyword followed by its value. */
const serverKeywords: Record<string, (value: string, where: ConfigLine) => Partial<ServerCheckConfig>> = {
  inter: (v, w) => ({inter: time(v, 'inter', w)}),
  fastinter: (v, w) => ({fastinter: time(v, 'fastinter', w)}),
  downinter: (v, w) => ({downinter: time(v, 'downinter', w)}),
  slowstart: (v, w) => ({slowstart: time(v, 'slowstart', w)}),
  fall: (v, w) => ({fall: count(v, 'fall', w)}),
  rise: (v, w) => ({rise: count(v, 'rise', w)}),
  'error-limit': (v, w) => ({errorLimit: count(v, 'error-limit', w)}),
  observe: (v) => ({observe: v}),
  'on-error': (v, w) => {
    if (!onErrors.has(v)) throw new InputError(`${w.file}:${w.line}: on-error ${v} is not one of ${[...onErrors].join(', ')}`)
    return {onError: v as HaproxyCheckSettings['onError']}
  },
}

function time(value: string, keyword: string, where: ConfigLine): number {
  const s = seconds(value)
  if (s === null)
    throw new InputError(`${where.file}:${where.line}: ${keyword} ${value} is not a time HAProxy reads (a number with us, ms, s, m, h or d; bare is ms)`)
  return s
}

function count(value: string, keyword: string, where: ConfigLine): number {
  if (!/^\d+$/.test(value)) throw new InputError(`${where.file}:${where.line}: ${keyword} ${value} is not a whole number`)
  return Number(value)
}

/** The check keywords among `words` (a server or default-server line's parameters). */
function checkKeywords(words: string[], where: ConfigLine): ServerCheckConfig {
  let found: ServerCheckConfig = {}
  for (let i = 0; i < words.length - 1; i++) {
    const read = serverKeywords[words[i]]
    if (!read) continue
    found = {...found, ...read(words[i + 1], where)}
    i++
  }
  return found
}

/** What a section's `default-server` lines say, later lines over earlier ones. */
function defaultServer(section: ConfigSection | null): ServerCheckConfig {
  return (section?.lines ?? []).filter((l) => l.words[0] === 'default-server').reduce((acc, l) => ({...acc, ...checkKeywords(l.words.slice(1), l)}), {})
}

/** The last `timeout <name>` in a section (or its legacy one-word form, `srvtimeout`), in seconds. */
function timeout(section: ConfigSection | null, name: 'check' | 'server'): number | undefined {
  let found: number | undefined
  for (const l of section?.lines ?? []) {
    const value = l.words[0] === 'timeout' && l.words[1] === name ? l.words[2] : name === 'server' && l.words[0] === 'srvtimeout' ? l.words[1] : undefined
    if (value !== undefined) found = time(value, `timeout ${name}`, l)
  }
  return found
}

/** The names one `server` or `server-template` line gives its servers. */
function serverNames(line: ConfigLine): string[] {
  if (line.words[0] === 'server') return [line.words[1]]
  // server-template PREFIX NUM|LOW-HIGH ADDRESS …: PREFIX1 … PREFIXNUM.
  const range = /^(\d+)(?:-(\d+))?$/.exec(line.words[2] ?? '')
  if (!range) return []
  const [low, high] = range[2] === undefined ? [1, Number(range[1])] : [Number(range[1]), Number(range[2])]
  return Array.from({length: Math.max(0, high - low + 1)}, (_, k) => `${line.words[1]}${low + k}`)
}

/** The most common value, the first seen among equals: a backend whose servers differ is described by most of them. */
export function mostCommon<T>(values: T[]): T | undefined {
  const counts = new Map<T, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  let best: T | undefined
  for (const [v, n] of counts) if (best === undefined || n > counts.get(best)!) best = v
  return best
}

/**
 * A backend's check settings from its configuration: each server's line over the backend's
 * `default-server` over its `defaults` section's, and HAProxy's own defaults where none says
 * (inter 2 s; fastinter and downinter as inter; fall 3, rise 2; no slow start; observe none;
 * error-limit 10, on-error fastinter). Servers may differ; each setting is the most common one
 * among `servers` (the backend's servers now, by name), or among every server the backend's lines
 * name when `servers` is empty. A server not in the configuration (added at runtime) gets the
 * backend's `default-server`.
 */
export function backendCheckConfig(sections: ConfigSection[], backend: string, servers: string[], source: string): BackendCheckConfig {
  const section = sections.find((s) => (s.kind === 'backend' || s.kind === 'listen') && s.name === backend)
  if (!section) throw new InputError(`${source} has no backend or listen section named ${backend}`)
  const inherited = {...defaultServer(section.defaults), ...defaultServer(section)}
  const lines = new Map<string, ServerCheckConfig>()
  for (const l of section.lines.filter((l) => l.words[0] === 'server' || l.words[0] === 'server-template')) {
    const params = l.words.slice(l.words[0] === 'server' ? 3 : 4)
    for (const name of serverNames(l)) lines.set(name, {...inherited, ...checkKeywords(params, l)})
  }
  const each = (servers.length > 0 ? servers : [...lines.keys()]).map((name) => lines.get(name) ?? inherited)
  if (each.length === 0) each.push(inherited)
  const pick = <K extends keyof ServerCheckConfig>(key: K): ServerCheckConfig[K] => mostCommon(each.map((s) => s[key]).filter((v) => v !== undefined))
  const inter = pick('inter') ?? 2
  const checkTimeout = timeout(section, 'check') ?? timeout(section.defaults, 'check')
  return {
    inter,
    fastinter: pick('fastinter') ?? inter,
    downinter: pick('downinter') ?? inter,
    fall: pick('fall') ?? 3,
    rise: pick('rise') ?? 2,
    slowstart: pick('slowstart') ?? 0,
    observe: pick('observe') ?? 'none',
    errorLimit: pick('errorLimit') ?? 10,
    onError: pick('onError') ?? 'fastinter',
    checkTimeout: checkTimeout ?? inter,
    timeoutServer: timeout(section, 'server') ?? timeout(section.defaults, 'server') ?? null,
    at: `${section.at.file}:${section.at.line}`,
  }
}
