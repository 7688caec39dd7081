import type {Clock, Target, PoolPort, TargetHealth} from '../ports/control-plane.js'
import {pollUntil, waitUntilHealthy} from '../ports/target-groups.js'
import {FailedError} from '../errors.js'
import {awsCall} from './errors.js'
import type {Elbv2Calls} from './sdk.js'

/** The ELBv2 calls a target group makes. */
export type TargetGroupCalls = Pick<
  Elbv2Calls,
  'describeTargetHealth' | 'registerTargets' | 'deregisterTargets' | 'describeTargetGroupAttributes' | 'modifyTargetGroupAttributes'
>

/** Seconds between looks at target health while waiting. */
const poll = 5
/** RegisterTargets and DeregisterTargets take many targets per call; stay well inside any limit. */
const perCall = 100

const slowStartRange = {min: 30, max: 900}
const failoverKey = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** A target's id as the runbook and journal see it: `10.0.1.10:443` (ip targets) or `i-0abc:443`. */
function targetKey(id: string, port?: number): string {
  return port === undefined ? id : `${id}:${port}`
}

function parseKey(key: string): {Id: string; Port?: number} {
  const at = key.lastIndexOf(':')
  if (at <= 0) return {Id: key}
  return {Id: key.slice(0, at), Port: Number(key.slice(at + 1))}
}

/**
 * An ELBv2 target group: health, batch drain and return, and the attributes sluice sets. Waits
 * are bounded: a drain by the group's deregistration delay, a return by the caller's timeout.
 */
export class Elbv2TargetGroup implements PoolPort {
  readonly label: string

  constructor(
    private readonly elbv2: TargetGroupCalls,
    private readonly clock: Clock,
    readonly name: string,
    private readonly arn: string,
  ) {
    this.label = `target group ${name} (${arn})`
  }

  async targets(signal?: AbortSignal): Promise<Target[]> {
    const out = await awsCall(
      'ELBv2',
      'DescribeTargetHealth',
      this.label,
      (abortSignal) => this.elbv2.describeTargetHealth({TargetGroupArn: this.arn}, abortSignal),
      signal,
    )
    return (out.TargetHealthDescriptions ?? []).map((d) => {
      const id = targetKey(d.Target!.Id!, d.Target!.Port)
      const health = toHealth(d.TargetHealth?.State)
      const warmth = this.slowStartShare(id, health)
      return {
        id,
        targetId: d.Target!.Id!,
        health,
        ...(/^\d+\.\d+\.\d+\.\d+$/.test(d.Target!.Id!) ? {ip: d.Target!.Id!} : {}),
        ...(d.Target!.Port === undefined ? {} : {port: d.Target!.Port}),
        ...(warmth < 1 ? {warmth} : {}),
      }
    })
  }

  /**
   * Targets this process registered while the group has a slow start: the duration, and when each
   * was first seen healthy (null until then). An ALB does not report slow start, but it starts it
   * when a target turns healthy and ramps its share linearly over the duration, so a target this
   * run brought back is counted at that share; one brought back by another process, as warm.
   */
  private readonly warming = new Map<string, number | null>()
  private warmingFor = 0

  private slowStartShare(id: string, health: TargetHealth): number {
    if (!this.warming.has(id) || this.warmingFor <= 0) return 1
    if (health !== 'healthy') {
      this.warming.set(id, null)
      return 1
    }
    const since = this.warming.get(id) ?? this.clock.now()
    this.warming.set(id, since)
    const share = (this.clock.now() - since) / this.warmingFor
    if (share >= 1) this.warming.delete(id)
    return Math.max(0.01, Math.min(1, share))
  }

  async deregister(ids: string[]): Promise<void> {
    for (const part of chunks(ids, perCall))
      await awsCall('ELBv2', 'DeregisterTargets', this.label, (abortSignal) =>
        this.elbv2.deregisterTargets({TargetGroupArn: this.arn, Targets: part.map(parseKey)}, abortSignal),
      )
  }

  async register(ids: string[]): Promise<void> {
    for (const part of chunks(ids, perCall))
      await awsCall('ELBv2', 'RegisterTargets', this.label, (abortSignal) =>
        this.elbv2.registerTargets({TargetGroupArn: this.arn, Targets: part.map(parseKey)}, abortSignal),
      )
    // Read after the targets are back: a slow start that cannot be read must not keep them out
    // (they are then counted warm, as those another process brought back are).
    this.warmingFor = await this.slowStart().catch(() => 0)
    if (this.warmingFor > 0) for (const id of ids) this.warming.set(id, null)
  }

  async waitDrained(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    // No target drains for longer than the group's deregistration delay.
    const delay = Number((await this.attributes())['deregistration_delay.timeout_seconds'] ?? 300)
    const wanted = new Set(ids)
    const drained = async () => !(await this.targets()).some((t) => wanted.has(t.id) && t.health === 'draining')
    return pollUntil(drained, Math.min(timeoutSeconds, delay + poll), this.clock, poll, signal)
  }

  waitHealthy(ids: string[], timeoutSeconds: number, signal?: AbortSignal): Promise<boolean> {
    return waitUntilHealthy(this, ids, timeoutSeconds, this.clock, poll, signal)
  }

  async slowStart(): Promise<number> {
    return Number((await this.attributes())['slow_start.duration_seconds'] ?? 0)
  }

  async setSlowStart(seconds: number): Promise<void> {
    // AWS allows 0 (off) or 30–900 s; moto accepts anything, so the range is checked here.
    if (seconds !== 0 && (seconds < slowStartRange.min || seconds > slowStartRange.max))
      throw new FailedError(`slow start of ${seconds} s for ${this.label} is out of range: 0 (off) or ${slowStartRange.min}–${slowStartRange.max} s`)
    await this.modifyAttributes({'slow_start.duration_seconds': String(seconds)})
  }

  async failoverPercent(): Promise<number | null> {
    const value = (await this.attributes())[failoverKey]
    return value === undefined || value === 'off' ? null : Number(value)
  }

  async setFailoverPercent(percent: number | null): Promise<void> {
    // AWS takes 1–100 or "off"; moto takes anything, so the range is checked here.
    if (percent !== null && (!Number.isInteger(percent) || percent < 1 || percent > 100))
      throw new FailedError(`routing failover of ${percent}% for ${this.label} is out of range: a whole number from 1 to 100, or off`)
    await this.modifyAttributes({[failoverKey]: percent === null ? 'off' : String(percent)})
  }

  async attributes(): Promise<Record<string, string>> {
    const out = await awsCall('ELBv2', 'DescribeTargetGroupAttributes', this.label, (abortSignal) =>
      this.elbv2.describeTargetGroupAttributes({TargetGroupArn: this.arn}, abortSignal),
    )
    return Object.fromEntries((out.Attributes ?? []).map((a) => [a.Key!, a.Value ?? '']))
  }

  async modifyAttributes(attributes: Record<string, string>): Promise<void> {
    await awsCall('ELBv2', 'ModifyTargetGroupAttributes', this.label, (abortSignal) =>
      this.elbv2.modifyTargetGroupAttributes(
        {TargetGroupArn: this.arn, Attributes: Object.entries(attributes).map(([Key, Value]) => ({Key, Value}))},
        abortSignal,
      ),
    )
  }
}

function toHealth(state: string | undefined): TargetHealth {
  switch (state) {
    case 'healthy':
      return 'healthy'
    case 'initial':
      return 'initial'
    case 'draining':
      return 'draining'
    case 'unused':
      return 'unused'
    default:
      // unhealthy, unavailable, or anything AWS adds later: not serving.
      return 'unhealthy'
  }
}
