import type {Rule, RuleCondition} from '@aws-sdk/client-elastic-load-balancing-v2'
import type {Restriction, RestrictionPort} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import {awsCall} from './errors.js'
import type {Elbv2Calls} from './sdk.js'

/** The ELBv2 calls a listener's restriction rules take. */
export type ListenerRulesCalls = Pick<Elbv2Calls, 'describeRules' | 'describeTags' | 'createRule' | 'deleteRule'>

/** Priorities sluice reserves on a listener: evaluated before the service's own rules. */
export const reservedPriorities = {first: 1, last: 20}
const typeTag = 'sluice:restriction'
const ownerTag = 'sluice:managed-by'

/**
 * Restrictions as ALB listener rules: a fixed 503 at a priority reserved for sluice, tagged with
 * the traffic type so `lift` and `status` find them from any machine. ALB's fixed responses cannot
 * carry headers, so Retry-After travels in the JSON body.
 */
export class ListenerRules implements RestrictionPort {
  readonly label: string

  constructor(
    private readonly elbv2: ListenerRulesCalls,
    private readonly listenerArn: string,
  ) {
    this.label = `listener ${listenerArn}`
  }

  private async sluiceRules(): Promise<Array<{rule: Rule; type: string}>> {
    const rules: Rule[] = []
    let marker: string | undefined
    do {
      const out = await awsCall('ELBv2', 'DescribeRules', this.label, (abortSignal) =>
        this.elbv2.describeRules({ListenerArn: this.listenerArn, Marker: marker}, abortSignal),
      )
      rules.push(...(out.Rules ?? []))
      marker = out.NextMarker
    } while (marker)
    const candidates = rules.filter((r) => !r.IsDefault && r.RuleArn)
    const found: Array<{rule: Rule; type: string}> = []
    // DescribeTags takes at most 20 ARNs a call.
    for (let i = 0; i < candidates.length; i += 20) {
      const part = candidates.slice(i, i + 20)
      const out = await awsCall('ELBv2', 'DescribeTags', this.label, (abortSignal) =>
        this.elbv2.describeTags({ResourceArns: part.map((r) => r.RuleArn!)}, abortSignal),
      )
      for (const d of out.TagDescriptions ?? []) {
        const type = d.Tags?.find((t) => t.Key === typeTag)?.Value
        const rule = part.find((r) => r.RuleArn === d.ResourceArn)
        if (type && rule) found.push({rule, type})
      }
    }
    return found
  }

  async list(): Promise<Restriction[]> {
    return (await this.sluiceRules()).map(({rule, type}) => toRestriction(rule, type))
  }

  async add(restriction: Restriction): Promise<void> {
    const conditions: RuleCondition[] = []
    if (restriction.paths.length > 0) conditions.push({Field: 'path-pattern', PathPatternConfig: {Values: restriction.paths}})
    for (const [name, values] of Object.entries(restriction.headers))
      conditions.push({Field: 'http-header', HttpHeaderConfig: {HttpHeaderName: name, Values: values}})
    if (conditions.length === 0)
      throw new FailedError(
        `restricting ${restriction.type} on ${this.label} needs paths or headers to match: a listener rule cannot match a traffic type by name`,
      )
    // A rule of the type already there (one that restricts nothing: restrict replaces it) goes once
    // the new one is in: between the two, requests meet one or the other, never neither.
    const earlier = (await this.sluiceRules()).filter((r) => r.type === restriction.type)
    const used = new Set<number>()
    let marker: string | undefined
    do {
      const out = await awsCall('ELBv2', 'DescribeRules', this.label, (abortSignal) =>
        this.elbv2.describeRules({ListenerArn: this.listenerArn, Marker: marker}, abortSignal),
      )
      for (const r of out.Rules ?? []) if (!r.IsDefault) used.add(Number(r.Priority))
      marker = out.NextMarker
    } while (marker)
    let priority = reservedPriorities.first
    while (used.has(priority) && priority <= reservedPriorities.last) priority++
    if (priority > reservedPriorities.last)
      throw new FailedError(`${this.label} has no free priority in sluice's reserved range ${reservedPriorities.first}–${reservedPriorities.last}`)
    await awsCall('ELBv2', 'CreateRule', this.label, (abortSignal) =>
      this.elbv2.createRule(
        {
          ListenerArn: this.listenerArn,
          Priority: priority,
          Conditions: conditions,
          Actions: [
            {
              Type: 'fixed-response',
              FixedResponseConfig: {
                StatusCode: '503',
                ContentType: 'application/json',
                MessageBody: JSON.stringify({
                  error: 'temporarily restricted during recovery',
                  type: restriction.type,
                  retryAfterSeconds: restriction.retryAfterSeconds,
                }),
              },
            },
          ],
          Tags: [
            {Key: typeTag, Value: restriction.type},
            {Key: ownerTag, Value: 'sluice'},
            {Key: 'sluice:retry-after', Value: String(restriction.retryAfterSeconds)},
          ],
        },
        abortSignal,
      ),
    )
    for (const {rule} of earlier)
      await awsCall('ELBv2', 'DeleteRule', rule.RuleArn!, (abortSignal) => this.elbv2.deleteRule({RuleArn: rule.RuleArn}, abortSignal))
  }

  async remove(type: string): Promise<boolean> {
    const matching = (await this.sluiceRules()).filter((r) => r.type === type)
    for (const {rule} of matching)
      await awsCall('ELBv2', 'DeleteRule', rule.RuleArn!, (abortSignal) => this.elbv2.deleteRule({RuleArn: rule.RuleArn}, abortSignal))
    return matching.length > 0
  }
}

/**
 * A sluice rule as the restriction it is. One whose last action forwards (its 503 switched off by
 * hand, or a rule of the service's tagged by mistake) passes every request on: it is listed with
 * a share of 0, a restriction that restricts nothing, never as the type turned away.
 */
function toRestriction(rule: Rule, type: string): Restriction {
  const paths = rule.Conditions?.flatMap((c) => (c.Field === 'path-pattern' ? (c.PathPatternConfig?.Values ?? c.Values ?? []) : [])) ?? []
  const headers: Record<string, string[]> = {}
  for (const c of rule.Conditions ?? [])
    if (c.Field === 'http-header' && c.HttpHeaderConfig?.HttpHeaderName) headers[c.HttpHeaderConfig.HttpHeaderName] = c.HttpHeaderConfig.Values ?? []
  let retryAfterSeconds = 0
  const actions = [...(rule.Actions ?? [])].sort((a, b) => (a.Order ?? 0) - (b.Order ?? 0))
  try {
    retryAfterSeconds = Number(
      (JSON.parse(actions.find((a) => a.Type === 'fixed-response')?.FixedResponseConfig?.MessageBody ?? '{}') as {retryAfterSeconds?: unknown})
        .retryAfterSeconds ?? 0,
    )
  } catch {
    // A body someone edited by hand: the rule is still ours, only the figure is unknown.
  }
  return {type, paths, headers, retryAfterSeconds, ...(actions.at(-1)?.Type === 'forward' ? {share: 0} : {})}
}
