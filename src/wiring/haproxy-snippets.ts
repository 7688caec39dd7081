import {InputError} from '../errors.js'
import {parseAddress} from '../input/address.js'
import type {HaproxyTargetsOf} from '../haproxy/backend.js'
import {restrictionConfig} from '../haproxy/rules.js'
import {rampConfig} from '../haproxy/weights.js'

/** A map file the snippets read, and what it holds when HAProxy starts. */
export interface SnippetMap {
  file: string
  role: 'restrict' | 'ramp'
  /** Its lines when HAProxy starts: none for the restriction map, `<backend> <percent>` for the ramp map. */
  starts: string[]
}

/** The haproxy.cfg lines a runbook on HAProxy needs, section by section. */
export interface HaproxySnippets {
  /** In `global`: the admin socket sluice talks to. */
  global: string[]
  /** In the frontend that serves the traffic, before any other `use_backend`: the restriction and ramp lines. */
  frontend: string[]
  /** Backend → the lines it needs besides its servers. */
  backends: Record<string, string[]>
  /** The maps the frontend lines read. */
  maps: SnippetMap[]
  /** The ramp snippet's backends: [ramped, other] (the ramped one's map entry is the only one read), or null with no ramp map. */
  ramp: [string, string] | null
}

/**
 * Here, beside the wiring that picks the HAProxy adapters, because the lines are theirs: the
 * haproxy.cfg lines for a runbook's targets.haproxy: the admin socket its `socket` names, the
 * restriction and ramp lines (the same `restrictionConfig` and `rampConfig` a drill's HAProxy runs),
 * and in each backend what a runbook's fields declare (`slowstart`) or its gates need (`option
 * abortonclose` for gates on HAProxy's counters). `rampSets` are the backends the runbook's ramps
 * name, in order: the first is the ramped one, the map starting with it at 0 and the other at 100.
 */
export function haproxySnippets(targets: HaproxyTargetsOf, rampSets: string[], where: string): HaproxySnippets {
  const h = targets.haproxy
  const gated = targets.metrics?.source === 'haproxy'
  const backends = Object.fromEntries(
    Object.entries(h.backends).map(([pool, backend]) => [
      backend,
      [...(gated ? ['option abortonclose'] : []), ...(h.slowStart?.[pool] === undefined ? [] : [`default-server slowstart ${h.slowStart[pool]}s`])],
    ]),
  )
  const frontend: string[] = []
  const maps: SnippetMap[] = []
  if (h.restrictMap) {
    frontend.push(...restrictionConfig(h.restrictMap).split('\n'))
    maps.push({file: h.restrictMap, role: 'restrict', starts: []})
  }
  let ramp: [string, string] | null = null
  if (h.rampMap) {
    ramp = rampPair(Object.keys(backends), rampSets, where)
    frontend.push(...rampConfig(h.rampMap, ramp[0], ramp[1]).split('\n'))
    maps.push({file: h.rampMap, role: 'ramp', starts: [`${ramp[1]} 100`, `${ramp[0]} 0`]})
  }
  return {global: [statsSocket(h.socket)], frontend: frontend.map((l) => l.trim()), backends, maps, ramp}
}

/** The `stats socket` line that opens the Runtime API at the runbook's address, at admin level (sluice changes maps and server states). */
function statsSocket(socket: string): string {
  const address = parseAddress(socket)
  if (address.kind === 'unix') return `stats socket ${address.path} mode 600 level admin`
  const host = address.host.includes(':') ? `ipv6@[${address.host}]` : `ipv4@${address.host}`
  return `stats socket ${host}:${address.port} level admin`
}

/** The two backends the ramp snippet splits between: the ramps' own, else the runbook's only other backend. */
function rampPair(backends: string[], rampSets: string[], where: string): [string, string] {
  const named = [...new Set(rampSets)]
  if (named.length > 2)
    throw new InputError(`${where}: its ramps move ${named.join(', ')}, but the ramp snippet splits traffic between two backends; ramp between two of them`)
  if (named.length === 2) return [named[0], named[1]]
  const others = backends.filter((b) => !named.includes(b))
  const ramped = named[0] ?? others.shift()
  if (ramped === undefined || others.length !== 1)
    throw new InputError(
      `${where}: targets.haproxy.rampMap is set, but which two backends does the ramp split between? ` +
        `${named.length === 0 ? 'no ramp step names one' : `its ramps name only ${named[0]}`} and targets.haproxy.backends has ${backends.join(', ')}; ` +
        'name both in ramp steps, or list two backends',
    )
  return [ramped, others[0]]
}

/** The snippets as one text, a section at a time, to paste into haproxy.cfg. */
export function snippetText(s: HaproxySnippets, runbook: string): string[] {
  const lines = [`# haproxy.cfg for runbook ${runbook}`, 'global', ...s.global.map((l) => `  ${l}`)]
  if (s.frontend.length > 0) lines.push('', '# in the frontend that serves this traffic, before any other use_backend:', ...s.frontend.map((l) => `  ${l}`))
  for (const [backend, needs] of Object.entries(s.backends)) {
    lines.push('', `backend ${backend}`, ...needs.map((l) => `  ${l}`), '  # its servers, as you have them')
  }
  if (s.maps.length > 0) {
    lines.push('', '# map files, in place before HAProxy starts (it will not start without them):')
    for (const m of s.maps) lines.push(m.starts.length === 0 ? `# ${m.file}: empty` : `# ${m.file}:`, ...m.starts.map((l) => `#   ${l}`))
  }
  return lines
}
