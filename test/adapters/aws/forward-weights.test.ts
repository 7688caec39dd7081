import type {Action} from '@aws-sdk/client-elastic-load-balancing-v2'
import {describe, expect, it} from 'vitest'
import {ForwardWeights, type ForwardCalls} from '../../../src/aws/forward-weights.js'
import {accessDenied, expectDenied, fakeCalls, names} from './fake-calls.js'

const base = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012'
const rule = `${base}:listener-rule/app/api/50dc6c495c0c9188/f2f7dc8efc522ab2/9683b2d02a6cabee`
const listener = `${base}:listener/app/api/50dc6c495c0c9188/f2f7dc8efc522ab2`
const tg = (name: string) => `${base}:targetgroup/${name}/0123456789abcdef`
const pools = {blue: tg('blue'), green: tg('green')}

const oidc: Action = {
  Type: 'authenticate-oidc',
  Order: 1,
  AuthenticateOidcConfig: {
    Issuer: 'https://idp',
    AuthorizationEndpoint: 'https://idp/a',
    TokenEndpoint: 'https://idp/t',
    UserInfoEndpoint: 'https://idp/u',
    ClientId: 'c',
    ClientSecret: 's3cret',
  },
}
const forward = (groups: Array<[string, number]>): Action => ({
  Type: 'forward',
  Order: 2,
  ForwardConfig: {
    TargetGroups: groups.map(([arn, w]) => ({TargetGroupArn: arn, Weight: w})),
    TargetGroupStickinessConfig: {Enabled: true, DurationSeconds: 300},
  },
})

/** A rule (and a listener) whose actions are `actions`. */
function elbv2(actions: Action[]) {
  return fakeCalls<ForwardCalls>({
    describeRules: async () => ({Rules: [{RuleArn: rule, Actions: actions}]}),
    describeListeners: async () => ({Listeners: [{ListenerArn: listener, DefaultActions: actions}]}),
    modifyRule: async () => ({}),
    modifyListener: async () => ({}),
  })
}

describe("a listener rule's weighted forward over a fake of its narrow interface", () => {
  it("reads the weights by the runbook's pools; a pool off the forward weighs 0, a group the runbook does not name keeps its ARN", async () => {
    const {calls, made} = elbv2([
      forward([
        [tg('blue'), 3],
        [tg('legacy'), 1],
      ]),
    ])
    expect(await new ForwardWeights(calls, rule, pools).readWeights()).toEqual({blue: 3, green: 0, [tg('legacy')]: 1})
    expect(made[0]).toEqual({call: 'describeRules', input: {RuleArns: [rule]}, signal: true})
  })

  it('a plain forward to one group is that group at weight 1', async () => {
    const {calls} = elbv2([{Type: 'forward', TargetGroupArn: tg('blue')}])
    expect(await new ForwardWeights(calls, rule, pools).readWeights()).toEqual({blue: 1, green: 0})
  })

  it('rewrites the whole action list: the weights changed, stickiness and order kept, an OIDC secret never re-sent', async () => {
    const {calls, made} = elbv2([oidc, forward([[tg('blue'), 100]])])
    await new ForwardWeights(calls, rule, pools).applyWeights({blue: 75, green: 25})
    expect(names(made)).toEqual(['describeRules', 'modifyRule'])
    const {ClientSecret: _secret, ...config} = oidc.AuthenticateOidcConfig!
    expect(made[1].input).toEqual({
      RuleArn: rule,
      Actions: [
        {...oidc, AuthenticateOidcConfig: {...config, UseExistingClientSecret: true}},
        {
          ...forward([]),
          TargetGroupArn: undefined,
          ForwardConfig: {
            TargetGroupStickinessConfig: {Enabled: true, DurationSeconds: 300},
            TargetGroups: [
              {TargetGroupArn: tg('blue'), Weight: 75},
              {TargetGroupArn: tg('green'), Weight: 25},
            ],
          },
        },
      ],
    })
  })

  it("a group at 0 that was not on the forward stays off it; a listener's default action changes by ModifyListener", async () => {
    const {calls, made} = elbv2([{Type: 'forward', TargetGroupArn: tg('blue')}])
    await new ForwardWeights(calls, listener, pools).applyWeights({blue: 5, green: 0})
    expect(names(made)).toEqual(['describeListeners', 'modifyListener'])
    expect(made[1].input).toEqual({
      ListenerArn: listener,
      DefaultActions: [{Type: 'forward', TargetGroupArn: undefined, ForwardConfig: {TargetGroups: [{TargetGroupArn: tg('blue'), Weight: 5}]}}],
    })
  })

  it('refuses a rule with no forward, or two, and an ARN that is neither a rule nor a listener', async () => {
    const none = elbv2([{Type: 'fixed-response', FixedResponseConfig: {StatusCode: '503'}}])
    await expect(new ForwardWeights(none.calls, rule, pools).readWeights()).rejects.toThrow(
      `listener rule ${rule} has no forward action, so there is no one split between target groups to weigh`,
    )
    const two = elbv2([forward([[tg('blue'), 1]]), forward([[tg('green'), 1]])])
    await expect(new ForwardWeights(two.calls, listener, pools).applyWeights({blue: 1})).rejects.toThrow(
      `the default action of listener ${listener} has 2 forward actions`,
    )
    expect(names(two.made)).toEqual(['describeListeners'])
    expect(() => new ForwardWeights(none.calls, tg('blue'), pools)).toThrow(`${tg('blue')} is neither a listener rule's nor a listener's ARN`)
  })

  it('AccessDenied names the call, the rule and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<ForwardCalls>({
      describeRules: async () => ({Rules: [{RuleArn: rule, Actions: [forward([[tg('blue'), 1]])]}]}),
      modifyRule: async () => Promise.reject(accessDenied()),
    })
    await expectDenied(new ForwardWeights(calls, rule, pools).applyWeights({green: 1}), 'elasticloadbalancing:ModifyRule', `listener rule ${rule}`)
    const listening = fakeCalls<ForwardCalls>({describeListeners: async () => Promise.reject(accessDenied())})
    await expectDenied(
      new ForwardWeights(listening.calls, listener, pools).readWeights(),
      'elasticloadbalancing:DescribeListeners',
      `the default action of listener ${listener}`,
    )
  })
})
