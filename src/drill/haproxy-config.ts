import {join} from 'node:path'
import {restrictionConfig} from '../haproxy/rules.js'
import {rampConfig} from '../haproxy/weights.js'
import type {HealthCheckConfig} from '../sim/config.js'
import type {Scenario} from '../sim/scenario/schema.js'
import type {FleetInfo} from './fleet.js'
import type {DrillScales} from './scale.js'

/** The files a drill's HAProxy reads, beside its config, as the runbook's targets.haproxy names them. */
/** The scenario's balance, in HAProxy's words. */
const haproxyBalance = {'round-robin': 'roundrobin', random: 'random', 'least-connections': 'leastconn'} as const

export const drillMaps = {restrict: 'restricted.map', ramp: 'ramp.map'} as const

export interface DrillHaproxy {
  /** haproxy.cfg, given the directory it runs in. */
  config: (dir: string) => string
  /** Files beside it: the restriction map (empty) and, with two pools, the ramp map. */
  files: Record<string, string>
  /** Pool → backend: each pool is a backend of its own name. */
  backends: Record<string, string>
  /** The ramped pools, when the scenario has two: [ramped, other]. */
  ramp: [string, string] | null
  /** Pool → slowstart in wall seconds, as haproxy.cfg gives it. */
  slowStart: Record<string, number>
}

const ms = (seconds: number): string => `${Math.max(1, Math.round(seconds * 1000))}ms`

/**
 * HAProxy for a drill, on loopback: a frontend on `port` with sluice's restriction snippet and,
 * for a scenario with two pools, its ramp snippet (weights from the scenario's DNS weights), an
 * admin socket, and one backend per pool. A server pool's servers are the fleet's, checked on
 * /health with the setup's HAProxy check settings times the time scale; a sorry pool is a backend
 * that answers 503 with the scenario's Retry-After, as the simulator's does.
 *
 * What is left at HAProxy's defaults is left so on purpose, to be the HAProxy people run: no
 * maxconn per server (the fleet's servers queue and run out of threads themselves), `retries 3`
 * on a failed connection, no redispatch. The check's timeout is its interval, HAProxy's rule when
 * `timeout check` is not set.
 */
export function drillHaproxy(
  scenario: Scenario,
  healthCheck: HealthCheckConfig,
  slowStartSeconds: number,
  fleet: FleetInfo,
  port: number,
  scales: DrillScales,
  /** A second admin socket at a path of the caller's, for readers from outside the drill (calibrate). */
  socket?: string,
): DrillHaproxy {
  const check = healthCheck.haproxy!
  const {timeScale} = scales
  const backends = Object.fromEntries(scenario.pools.map((p) => [p.name, p.name]))
  const weights = scenario.dns.weights ?? Object.fromEntries(scenario.pools.filter((p) => p.kind === 'servers').map((p) => [p.name, 100]))
  const names = scenario.pools.map((p) => p.name)
  // The ramp map holds percents: the scenario's weights, made to add up to 100.
  let ramp: [string, string] | null = null
  const files: Record<string, string> = {[drillMaps.restrict]: ''}
  if (names.length === 2) {
    const total = names.reduce((sum, n) => sum + (weights[n] ?? 0), 0) || 1
    const first = Math.round(((weights[names[0]] ?? 0) / total) * 100)
    // The pool with the lesser share is the one a ramp usually moves; either works, the map says which gets what.
    ramp = first >= 50 ? [names[1], names[0]] : [names[0], names[1]]
    files[drillMaps.ramp] = `${names[0]} ${first}\n${names[1]} ${100 - first}\n`
  } else if (names.length > 2) {
    throw new Error(`a drill runs scenarios of one or two pools; ${scenario.name} has ${names.length}`)
  }
  const slowStart = Object.fromEntries(scenario.pools.filter((p) => p.kind === 'servers').map((p) => [p.name, slowStartSeconds * timeScale]))
  const serverLine = [
    'check',
    `inter ${ms(healthCheck.interval * timeScale)}`,
    `fastinter ${ms(check.fastinter * timeScale)}`,
    `downinter ${ms(check.downinter * timeScale)}`,
    `fall ${check.fall}`,
    `rise ${check.rise}`,
    ...(check.observe === 'layer7' ? ['observe layer7', `error-limit ${check.errorLimit}`, `on-error ${check.onError}`] : []),
    ...(slowStartSeconds > 0 ? [`slowstart ${ms(slowStartSeconds * timeScale)}`] : []),
  ].join(' ')
  const retryAfter = Math.max(1, Math.round(scenario.clients.retryAfter * timeScale))
  const ports = new Map(fleet.pools.map((p) => [p.name, p.ports]))
  const config = (dir: string): string => {
    const lines = [
      'global',
      `  stats socket ${dir}/admin.sock mode 600 level admin`,
      ...(socket ? [`  stats socket ${socket} mode 600 level admin`] : []),
      '  stats timeout 10s',
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      // The server timeout is the scenario's (healthCheck.timeoutServer), on the drill's clock like
      // every other duration: a session its client gave up on holds its server until then, and a
      // drain waits for it, as the simulator's does. The client side is left long, so an idle
      // keep-alive connection is never closed under a request the generator sends.
      '  timeout client 60s',
      `  timeout server ${ms(check.timeoutServer * timeScale)}`,
      '  timeout http-keep-alive 30s',
      'frontend drill',
      `  bind 127.0.0.1:${port}`,
      restrictionConfig(join(dir, drillMaps.restrict)),
      ramp ? rampConfig(join(dir, drillMaps.ramp), ramp[0], ramp[1]) : `  default_backend ${names[0]}`,
    ]
    for (const pool of scenario.pools) {
      lines.push(`backend ${pool.name}`)
      if (pool.kind === 'sorry') {
        lines.push(`  http-request return status 503 content-type text/plain string "maintenance" hdr Retry-After ${retryAfter}`)
        continue
      }
      lines.push(`  balance ${haproxyBalance[pool.balance]}`, '  option httpchk GET /health', `  default-server ${serverLine}`)
      ports.get(pool.name)!.forEach((p, i) => lines.push(`  server ${pool.name}-${i} 127.0.0.1:${p}`))
    }
    return lines.join('\n') + '\n'
  }
  return {config, files, backends, ramp, slowStart}
}
