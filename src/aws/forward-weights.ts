import type {Action, TargetGroupTuple} from '@aws-sdk/client-elastic-load-balancing-v2'
import {FailedError} from '../errors.js'
import type {WeightMap, WeightsPort} from '../ports/control-plane.js'
import {forwardOwner} from './backend.js'
import {awsCall} from './errors.js'
import type {Elbv2Calls} from './sdk.js'

/** The ELBv2 calls a rule's or a listener's weighted forward takes. */
export type ForwardCalls = Pick<Elbv2Calls, 'describeRules' | 'modifyRule' | 'describeListeners' | 'modifyListener'>

/** What an ALB takes in one weighted forward (ELBv2 API reference, TargetGroupTuple). */
export const forwardLimits = {maxWeight: 999, maxGroups: 5}

/**
 * The weights of an ALB listener rule's forward action (or a listener's default action) between
 * target groups, keyed by the runbook's pool names; a group the runbook does not name keeps its
 * ARN as its key. A pool whose group is not on the forward weighs 0, and is added when it gets
 * traffic. The load balancer routes the next request by a change, so the TTL is 0.
 *
 * A change rewrites the whole action (ModifyRule and ModifyListener replace actions, they do not
 * patch them), so it reads the action first and keeps everything but the weights: stickiness,
 * order, other actions (an authenticate-oidc action's secret by UseExistingClientSecret: asSentBack). sluice checks the weights itself, as the API does: moto, the emulator
 * the tests run against, takes any number.
 */
export class ForwardWeights implements WeightsPort {
  /** The ARN: what a change is recorded against, and what finds this port again (ControlPlane.poolWeights). */
  readonly label: string
  /** The ARN in words, for messages. */
  private readonly what: string
  private readonly owner: 'rule' | 'listener'

  constructor(
    private readonly elbv2: ForwardCalls,
    private readonly arn: string,
    /** Pool → target group ARN. */
    private readonly groups: Record<string, string>,
  ) {
    const owner = forwardOwner(arn)
    if (!owner) throw new FailedError(`${arn} is neither a listener rule's nor a listener's ARN`)
    this.owner = owner
    this.label = arn
    this.what = owner === 'rule' ? `listener rule ${arn}` : `the default action of listener ${arn}`
  }

  async ttl(): Promise<number> {
    return 0
  }

  async readWeights(signal?: AbortSignal): Promise<WeightMap> {
    const {forward} = await this.forward(signal)
    const weights: WeightMap = Object.fromEntries(Object.keys(this.groups).map((pool) => [pool, 0]))
    for (const tuple of tuplesOf(forward)) weights[this.poolOf(tuple.TargetGroupArn!)] = tuple.Weight ?? 1
    return weights
  }

  async applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void> {
    const {actions, forward} = await this.forward(signal)
    const now = new Map(tuplesOf(forward).map((t) => [t.TargetGroupArn!, t.Weight ?? 1]))
    for (const [key, weight] of Object.entries(weights)) {
      const arn = this.groups[key] ?? (now.has(key) ? key : undefined)
      if (!arn) throw new FailedError(`${this.what}: no target group for "${key}"; the runbook's pools are ${Object.keys(this.groups).join(', ')}`)
      if (!Number.isInteger(weight) || weight < 0 || weight > forwardLimits.maxWeight)
        throw new FailedError(`${this.what}: a weight of ${weight} for ${key} is out of range; an ALB takes whole numbers from 0 to ${forwardLimits.maxWeight}`)
      now.set(arn, weight)
    }
    // Groups at 0 that were not on the forward stay off it: adding them changes nothing but the count.
    const tuples = [...now].filter(([arn, weight]) => weight > 0 || tuplesOf(forward).some((t) => t.TargetGroupArn === arn))
    if (tuples.length > forwardLimits.maxGroups)
      throw new FailedError(`${this.what}: a forward takes at most ${forwardLimits.maxGroups} target groups, and these weights name ${tuples.length}`)
    if (!tuples.some(([, weight]) => weight > 0)) throw new FailedError(`${this.what}: every weight would be 0, which sends no request anywhere`)
    const changed: Action = {
      ...forward,
      TargetGroupArn: undefined,
      ForwardConfig: {...forward.ForwardConfig, TargetGroups: tuples.map(([arn, weight]) => ({TargetGroupArn: arn, Weight: weight}))},
    }
    const next = actions.map((a) => (a === forward ? changed : asSentBack(a)))
    if (this.owner === 'rule') await this.call('ModifyRule', (abortSignal) => this.elbv2.modifyRule({RuleArn: this.arn, Actions: next}, abortSignal), signal)
    else await this.call('ModifyListener', (abortSignal) => this.elbv2.modifyListener({ListenerArn: this.arn, DefaultActions: next}, abortSignal), signal)
  }

  /** The rule's (or listener's default) actions, and the one forward among them. */
  private async forward(signal?: AbortSignal): Promise<{actions: Action[]; forward: Action}> {
    const actions =
      this.owner === 'rule'
        ? ((await this.call('DescribeRules', (abortSignal) => this.elbv2.describeRules({RuleArns: [this.arn]}, abortSignal), signal)).Rules?.[0]?.Actions ?? [])
        : ((await this.call('DescribeListeners', (abortSignal) => this.elbv2.describeListeners({ListenerArns: [this.arn]}, abortSignal), signal)).Listeners?.[0]
            ?.DefaultActions ?? [])
    const forwards = actions.filter((a) => a.Type === 'forward')
    if (forwards.length !== 1)
      throw new FailedError(
        `${this.what} has ${forwards.length === 0 ? 'no forward action' : `${forwards.length} forward actions`}, so there is no one split between target groups to weigh`,
      )
    return {actions, forward: forwards[0]}
  }

  /** One ELBv2 call on this rule or listener, its failures naming the call and the rule. */
  private call<T>(operation: string, send: (abortSignal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return awsCall('ELBv2', operation, this.what, send, signal)
  }

  private poolOf(arn: string): string {
    return Object.entries(this.groups).find(([, group]) => group === arn)?.[0] ?? arn
  }
}

/**
 * An action read from DescribeRules or DescribeListeners, as ModifyRule and ModifyListener take it
 * back. Those answers leave out one thing the action has: an authenticate-oidc action's
 * ClientSecret (AWS never returns it; moto, which the tests run against, does, and the test proxy
 * strips it as AWS does). Re-sent without it, the change would be refused: ClientSecret "is
 * required if you are creating a rule. If you are modifying a rule, you can omit this parameter if
 * you set UseExistingClientSecret to true" (ELBv2 API reference, AuthenticateOidcActionConfig),
 * and giving both is refused too ("You cannot both specify a client secret and set
 * UseExistingClientSecret to true", InvalidLoadBalancerAction). So the rule keeps the secret it has
 * and sluice never holds it. Everything else round-trips whole, authenticate-cognito included: it
 * names a user pool client and carries no secret of its own.
 */
function asSentBack(action: Action): Action {
  if (action.Type !== 'authenticate-oidc' || !action.AuthenticateOidcConfig) return action
  const {ClientSecret: _omitted, ...config} = action.AuthenticateOidcConfig
  return {...action, AuthenticateOidcConfig: {...config, UseExistingClientSecret: true}}
}

/** A forward's groups and weights; a plain forward to one group (TargetGroupArn alone) is that group at weight 1. */
function tuplesOf(forward: Action): TargetGroupTuple[] {
  const tuples = forward.ForwardConfig?.TargetGroups ?? []
  if (tuples.length > 0) return tuples
  return forward.TargetGroupArn ? [{TargetGroupArn: forward.TargetGroupArn, Weight: 1}] : []
}
