import type {Rule} from '@aws-sdk/client-elastic-load-balancing-v2'
import {describe, expect, it} from 'vitest'
import {ListenerRules, type ListenerRulesCalls} from '../../../src/aws/rules.js'
import type {Restriction} from '../../../src/ports/control-plane.js'
import {accessDenied, expectDenied, fakeCalls, names} from './fake-calls.js'

const listener = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/api/50dc6c495c0c9188/f2f7dc8efc522ab2'
const ruleArn = (n: number) => `arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener-rule/app/api/50dc6c495c0c9188/f2f7dc8efc522ab2/${n}`

/** A rule as DescribeRules answers it: a 503 of sluice's, or the service's own forward. */
function rule(n: number, priority: string, kind: '503' | 'forward', paths = ['/search/*']): Rule {
  return {
    RuleArn: ruleArn(n),
    Priority: priority,
    IsDefault: false,
    Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: paths}}],
    Actions:
      kind === '503'
        ? [{Type: 'fixed-response', Order: 1, FixedResponseConfig: {StatusCode: '503', MessageBody: JSON.stringify({retryAfterSeconds: 120})}}]
        : [{Type: 'forward', Order: 1, TargetGroupArn: 'arn:tg'}],
  }
}

/**
 * A listener with `rules` (and its default), two to a DescribeRules page; `tags` gives each rule
 * ARN's tags. Created rules go on the listener; deleted ones come off it.
 */
function listenerWith(rules: Rule[], tags: Record<string, Record<string, string>>) {
  const all = [...rules, {RuleArn: `${ruleArn(0)}-default`, Priority: 'default', IsDefault: true, Actions: []}]
  let next = 100
  return fakeCalls<ListenerRulesCalls>({
    describeRules: async (input) => {
      const from = Number(input.Marker ?? 0)
      return {Rules: all.slice(from, from + 2), ...(from + 2 < all.length ? {NextMarker: String(from + 2)} : {})}
    },
    describeTags: async (input) => ({
      TagDescriptions: (input.ResourceArns ?? []).map((arn) => ({
        ResourceArn: arn,
        Tags: Object.entries(tags[arn] ?? {}).map(([Key, Value]) => ({Key, Value})),
      })),
    }),
    createRule: async (input) => {
      const arn = ruleArn(next++)
      all.unshift({RuleArn: arn, Priority: String(input.Priority), IsDefault: false, Conditions: input.Conditions, Actions: input.Actions})
      tags[arn] = Object.fromEntries((input.Tags ?? []).map((t) => [t.Key!, t.Value!]))
      return {Rules: [{RuleArn: arn}]}
    },
    deleteRule: async (input) => {
      all.splice(
        all.findIndex((r) => r.RuleArn === input.RuleArn),
        1,
      )
      return {}
    },
  })
}

const search: Restriction = {type: 'search', paths: ['/search/*'], headers: {}, retryAfterSeconds: 60}

describe("a listener's restriction rules over a fake of their narrow interface", () => {
  it('lists only the rules tagged as sluice restrictions, across pages; one whose last action forwards restricts nothing (share 0)', async () => {
    const {calls, made} = listenerWith([rule(1, '1', '503'), rule(2, '2', 'forward', ['/api/*']), rule(3, '30', '503', ['/own/*'])], {
      [ruleArn(1)]: {'sluice:restriction': 'search'},
      [ruleArn(2)]: {'sluice:restriction': 'api'},
    })
    expect(await new ListenerRules(calls, listener).list()).toEqual([
      {type: 'search', paths: ['/search/*'], headers: {}, retryAfterSeconds: 120},
      {type: 'api', paths: ['/api/*'], headers: {}, retryAfterSeconds: 0, share: 0},
    ])
    expect(names(made)).toEqual(['describeRules', 'describeRules', 'describeTags'])
    expect(made[2].input).toEqual({ResourceArns: [ruleArn(1), ruleArn(2), ruleArn(3)]})
  })

  it('asks for tags twenty rules at a time', async () => {
    const rules = Array.from({length: 45}, (_, k) => rule(k + 1, String(k + 21), 'forward'))
    const {calls, made} = listenerWith(rules, {})
    expect(await new ListenerRules(calls, listener).list()).toEqual([])
    expect(made.filter((m) => m.call === 'describeTags').map((m) => (m.input as {ResourceArns: string[]}).ResourceArns.length)).toEqual([20, 20, 5])
  })

  it("adds a tagged 503 at the first free priority of sluice's range, Retry-After in its body", async () => {
    const {calls, made} = listenerWith([rule(1, '1', 'forward', ['/own/*']), rule(2, '2', 'forward', ['/own2/*'])], {})
    await new ListenerRules(calls, listener).add({...search, headers: {'x-tenant': ['a', 'b']}})
    const created = made.find((m) => m.call === 'createRule')!.input
    expect(created).toEqual({
      ListenerArn: listener,
      Priority: 3,
      Conditions: [
        {Field: 'path-pattern', PathPatternConfig: {Values: ['/search/*']}},
        {Field: 'http-header', HttpHeaderConfig: {HttpHeaderName: 'x-tenant', Values: ['a', 'b']}},
      ],
      Actions: [
        {
          Type: 'fixed-response',
          FixedResponseConfig: {
            StatusCode: '503',
            ContentType: 'application/json',
            MessageBody: JSON.stringify({error: 'temporarily restricted during recovery', type: 'search', retryAfterSeconds: 60}),
          },
        },
      ],
      Tags: [
        {Key: 'sluice:restriction', Value: 'search'},
        {Key: 'sluice:managed-by', Value: 'sluice'},
        {Key: 'sluice:retry-after', Value: '60'},
      ],
    })
  })

  it('replaces a rule of the same type that restricts nothing: the new one goes in before the old one goes', async () => {
    const {calls, made} = listenerWith([rule(1, '1', 'forward')], {[ruleArn(1)]: {'sluice:restriction': 'search'}})
    const rules = new ListenerRules(calls, listener)
    await rules.add(search)
    const changes = made.filter((m) => m.call === 'createRule' || m.call === 'deleteRule')
    expect(changes.map((m) => m.call)).toEqual(['createRule', 'deleteRule'])
    expect(changes[1].input).toEqual({RuleArn: ruleArn(1)})
    expect(await rules.list()).toEqual([{type: 'search', paths: ['/search/*'], headers: {}, retryAfterSeconds: 60}])
  })

  it('refuses a restriction with nothing to match, and a listener with no free reserved priority, creating nothing', async () => {
    const full = listenerWith(
      Array.from({length: 20}, (_, k) => rule(k + 1, String(k + 1), 'forward')),
      {},
    )
    const rules = new ListenerRules(full.calls, listener)
    await expect(rules.add({...search, paths: []})).rejects.toThrow(
      `restricting search on listener ${listener} needs paths or headers to match: a listener rule cannot match a traffic type by name`,
    )
    await expect(rules.add(search)).rejects.toThrow(`listener ${listener} has no free priority in sluice's reserved range 1–20`)
    expect(names(full.made)).not.toContain('createRule')
  })

  it('removes every rule of a type, and says whether there was one', async () => {
    const {calls, made} = listenerWith([rule(1, '1', '503'), rule(2, '2', '503')], {
      [ruleArn(1)]: {'sluice:restriction': 'search'},
      [ruleArn(2)]: {'sluice:restriction': 'search'},
    })
    const rules = new ListenerRules(calls, listener)
    expect(await rules.remove('search')).toBe(true)
    expect(made.filter((m) => m.call === 'deleteRule').map((m) => m.input)).toEqual([{RuleArn: ruleArn(1)}, {RuleArn: ruleArn(2)}])
    expect(await rules.remove('search')).toBe(false)
  })

  it('AccessDenied names the call, the listener or rule, and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<ListenerRulesCalls>({describeRules: async () => Promise.reject(accessDenied())})
    await expectDenied(new ListenerRules(calls, listener).list(), 'elasticloadbalancing:DescribeRules', `listener ${listener}`)
    const create = listenerWith([], {})
    const denied = new ListenerRules(
      {
        describeRules: create.calls.describeRules,
        describeTags: create.calls.describeTags,
        deleteRule: create.calls.deleteRule,
        createRule: async () => Promise.reject(accessDenied()),
      },
      listener,
    )
    await expectDenied(denied.add(search), 'elasticloadbalancing:CreateRule', `listener ${listener}`)
    const remove = listenerWith([rule(1, '1', '503')], {[ruleArn(1)]: {'sluice:restriction': 'search'}})
    const undeletable = new ListenerRules(
      {
        describeRules: remove.calls.describeRules,
        describeTags: remove.calls.describeTags,
        createRule: remove.calls.createRule,
        deleteRule: async () => Promise.reject(accessDenied()),
      },
      listener,
    )
    await expectDenied(undeletable.remove('search'), 'elasticloadbalancing:DeleteRule', ruleArn(1))
  })
})
