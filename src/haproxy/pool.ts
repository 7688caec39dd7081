import type {Clock, Target, PoolPort, TargetHealth} from '../ports/control-plane.js'
import {pollUntil, waitUntilHealthy} from '../ports/target-groups.js'
import {FailedError} from '../errors.js'
import type {RuntimeApi} from './runtime.js'
import {serverStats, serversState, type Row} from './stats.js'

/** Seconds between looks while waiting: HAProxy answers locally and cheaply, and checks run every few hundred ms. */
const poll = 0.5

// srv_admin_state bits (HAProxy's SRV_ADMF_*): forced, inherited, config and resolver
// maintenance, and forced or inherited drain.
const maintBits = 0x01 | 0x02 | 0x04 | 0x20 | 0x40
const drainBits = 0x08 | 0x10
// srv_op_state (SRV_ST_*).
const op = {stopped: 0, starting: 1, running: 2, stopping: 3}
// srv_check_result (CHK_RES_*): not yet checked.
const checkUnknown = 0

/**
 * Sluice's health vocabulary from HAProxy's server state. Maintenance is `unused` (no traffic, no
 * checks); drain is `draining` (no new sessions, checks still run); otherwise the operational
 * state: running or starting (slow start counts: it takes traffic) is `healthy`, down before any
 * check has run is `initial`, down after one is `unhealthy`.
 */
export function healthOf(row: Row): TargetHealth {
  const admin = Number(row.srv_admin_state)
  if (admin & maintBits) return 'unused'
  if (admin & drainBits) return 'draining'
  const state = Number(row.srv_op_state)
  if (state === op.running || state === op.starting) return 'healthy'
  if (state === op.stopping) return 'draining'
  return Number(row.srv_check_result) === checkUnknown ? 'initial' : 'unhealthy'
}

export interface HaproxyPoolOptions {
  /**
   * The slow start haproxy.cfg gives this backend's servers (`server … slowstart 30s`), as the
   * runbook declares it. HAProxy neither reports nor changes it at runtime, so sluice can only
   * hold a step to it; undeclared, a step that names a slow start is refused.
   */
  slowStartSeconds?: number
}

/**
 * One HAProxy backend as a target group: its servers are the targets, named by server name.
 *
 * Out of rotation means the `drain` admin state, not `maint`: a draining server takes no new
 * sessions but keeps its health checks, so while its restart hook runs HAProxy sees it go down,
 * and after `ready` it takes traffic only once `rise` checks pass, through its slow start.
 * Leaving `maint` instead marks a server up at once, before any check (HAProxy 2.6 logs "UP/READY
 * (leaving forced maintenance)"), which would send traffic to a server still restarting.
 * Sessions that stickiness (cookies, stick tables) pins to a draining server still reach it;
 * waitDrained waits those out too, since it watches the server's current sessions.
 */
export class HaproxyPool implements PoolPort {
  readonly label: string

  constructor(
    private readonly api: RuntimeApi,
    private readonly clock: Clock,
    readonly name: string,
    private readonly backend: string,
    private readonly options: HaproxyPoolOptions = {},
  ) {
    this.label = `haproxy backend ${backend} (${api.label})`
  }

  async targets(signal?: AbortSignal): Promise<Target[]> {
    return (await serversState(this.api, this.backend, signal)).map((row) => {
      const warmth = this.slowStartShare(row)
      return {
        id: row.srv_name,
        targetId: row.srv_name,
        health: healthOf(row),
        ...(row.srv_addr && row.srv_addr !== '-' ? {ip: row.srv_addr} : {}),
        ...(Number(row.srv_port) > 0 ? {port: Number(row.srv_port)} : {}),
        ...(warmth < 1 ? {warmth} : {}),
      }
    })
  }

  /**
   * A server in slow start (operational state `starting`) takes a weight growing linearly over the
   * declared `slowstart` from its last change of state, as HAProxy computes it; 1 otherwise, and
   * where no slow start is declared (HAProxy does not report it).
   */
  private slowStartShare(row: Row): number {
    const slowStart = this.options.slowStartSeconds ?? 0
    if (Number(row.srv_op_state) !== op.starting || slowStart <= 0) return 1
    return Math.max(0.01, Math.min(1, Number(row.srv_time_since_last_change) / slowStart))
  }

  async deregister(ids: string[]): Promise<void> {
    await this.setState(ids, 'drain')
  }

  async register(ids: string[]): Promise<void> {
    await this.setState(ids, 'ready')
  }

  /** Drained = no current session on any of the servers (`show stat` scur), bounded by the timeout. */
  waitDrained(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    const drained = async () => {
      const rows = new Map((await serverStats(this.api, this.backend, signal)).map((r) => [r.svname, r]))
      return ids.every((id) => Number(rows.get(id)?.scur ?? 0) === 0)
    }
    return pollUntil(drained, timeoutSeconds, this.clock, poll, signal)
  }

  waitHealthy(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    return waitUntilHealthy(this, ids, timeoutSeconds, this.clock, poll, signal)
  }

  async slowStart(): Promise<number> {
    if (this.options.slowStartSeconds === undefined)
      throw new FailedError(
        `${this.label}: HAProxy cannot report a server's slow start at runtime; declare the \`slowstart\` haproxy.cfg gives its servers in the runbook (targets.haproxy slowStart), or leave slowStart out of the step`,
      )
    return this.options.slowStartSeconds
  }

  async setSlowStart(seconds: number): Promise<void> {
    throw new FailedError(
      `${this.label}: HAProxy cannot change slow start at runtime (it is \`server … slowstart ${seconds}s\` in haproxy.cfg, applied by a reload, which sluice does not do); set it in the config and declare it in the runbook`,
    )
  }

  /** HAProxy has no panic threshold: below any share of healthy servers it still routes only to healthy ones (or to `backup` servers). */
  async failoverPercent(): Promise<number | null> {
    return null
  }

  async setFailoverPercent(percent: number | null): Promise<void> {
    if (percent === null) return
    throw new FailedError(
      `${this.label}: HAProxy has no routing failover (panic threshold) to set to ${percent}%; the nearest are \`backup\` servers and \`option allbackups\` in haproxy.cfg`,
    )
  }

  /**
   * Checks every server exists before changing any, so an unknown name changes nothing; then one
   * command per server (HAProxy has no batch form).
   */
  private async setState(ids: string[], state: 'drain' | 'ready'): Promise<void> {
    const known = new Set((await serversState(this.api, this.backend)).map((r) => r.srv_name))
    const unknown = ids.filter((id) => !known.has(id))
    if (unknown.length > 0) throw new FailedError(`${this.label} has no server ${unknown.join(', ')}; it has ${[...known].join(', ')}`)
    for (const id of ids) await this.api.change(`set server ${this.backend}/${id} state ${state}`, `server ${this.backend}/${id}`)
  }
}
