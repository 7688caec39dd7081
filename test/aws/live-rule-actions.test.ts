import {
  AddTagsCommand,
  CreateRuleCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  ElasticLoadBalancingV2Client,
  ModifyRuleCommand,
  type Action,
  type Rule,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {beforeEach, describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, dnsRunbook, useLiveFixture, type Fixture} from './live-fixture.js'
import {seedTargetGroupBeside} from './seed.js'

// The weighted-target-groups steps here say `split: off`: what they test is the rule's changes, and their
// CloudWatch seed counts the blue group only. The split served, measured from each group's
// RequestCount as it lags a change, is test/aws/live-split-served.test.ts.

// Listener rules as AWS holds them, not as moto does. DescribeRules leaves an authenticate-oidc
// action's ClientSecret out of its answer, and ModifyRule refuses the action back without it
// unless UseExistingClientSecret is true: the test proxy does both (test/aws/proxy.ts), and a
// ramp of such a rule goes through it. And a rule tagged as sluice's restriction whose action
// forwards restricts nothing: status says so, restrict replaces it, lift removes it.

let fx: Fixture
let green: string
const current = useLiveFixture()

beforeEach(async () => {
  fx = current()
  green = await seedTargetGroupBeside(cfg, fx.targets.targetGroupArn)
})

const oidc: Action = {
  Type: 'authenticate-oidc',
  Order: 1,
  AuthenticateOidcConfig: {
    Issuer: 'https://idp.example.com',
    AuthorizationEndpoint: 'https://idp.example.com/authorize',
    TokenEndpoint: 'https://idp.example.com/token',
    UserInfoEndpoint: 'https://idp.example.com/userinfo',
    ClientId: 'sluice-test',
    ClientSecret: 'oidc-client-secret-not-to-be-sent',
  },
}

/** A client of the proxy (as sluice sees AWS) or of moto itself. */
const elbVia = (endpoint: string) => new ElasticLoadBalancingV2Client({...cfg, endpoint})

async function createRule(elb: ElasticLoadBalancingV2Client, priority: number, actions: Action[], tags?: Record<string, string>): Promise<string> {
  const rule = await elb.send(
    new CreateRuleCommand({
      ListenerArn: fx.targets.listenerArn,
      Priority: priority,
      Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: [priority === 100 ? '/mail/*' : '/sync/*']}}],
      Actions: actions,
    }),
  )
  const arn = rule.Rules![0].RuleArn!
  if (tags) await elb.send(new AddTagsCommand({ResourceArns: [arn], Tags: Object.entries(tags).map(([Key, Value]) => ({Key, Value}))}))
  return arn
}

const forward = (blue: number, greenWeight: number, order = 2): Action => ({
  Type: 'forward',
  Order: order,
  ForwardConfig: {
    TargetGroups: [
      {TargetGroupArn: fx.targets.targetGroupArn, Weight: blue},
      {TargetGroupArn: green, Weight: greenWeight},
    ],
  },
})

describe('a rule with an authenticate-oidc action', () => {
  it('the proxy answers as AWS does: no ClientSecret in DescribeRules, and a ModifyRule re-sending that answer is refused', async () => {
    const moto = elbVia(cfg.endpoint)
    const proxied = elbVia(fx.proxy.endpoint)
    try {
      const ruleArn = await createRule(moto, 100, [oidc, forward(100, 0)])
      const [read] = (await proxied.send(new DescribeRulesCommand({RuleArns: [ruleArn]}))).Rules!
      const auth = read.Actions!.find((a) => a.Type === 'authenticate-oidc')!
      expect(auth.AuthenticateOidcConfig).toMatchObject({Issuer: 'https://idp.example.com', ClientId: 'sluice-test'})
      expect(auth.AuthenticateOidcConfig).not.toHaveProperty('ClientSecret')
      await expect(proxied.send(new ModifyRuleCommand({RuleArn: ruleArn, Actions: read.Actions}))).rejects.toMatchObject({
        name: 'InvalidLoadBalancerActionException',
        $metadata: {httpStatusCode: 400},
      })
      const both: Action = {...auth, AuthenticateOidcConfig: {...auth.AuthenticateOidcConfig!, ClientSecret: 'x', UseExistingClientSecret: true}}
      await expect(proxied.send(new ModifyRuleCommand({RuleArn: ruleArn, Actions: [both, forward(100, 0)]}))).rejects.toThrow(
        'You cannot both specify a client secret and set UseExistingClientSecret to true',
      )
    } finally {
      moto.destroy()
      proxied.destroy()
    }
  })

  it('a ramp of its forward re-sends the action with UseExistingClientSecret and never a secret, and completes', async () => {
    const moto = elbVia(cfg.endpoint)
    let ruleArn: string
    try {
      ruleArn = await createRule(moto, 100, [oidc, forward(100, 0)])
    } finally {
      moto.destroy()
    }
    const file = dnsRunbook(
      fx,
      'shift-behind-oidc',
      `  targetGroups: {blue: ${fx.targets.targetGroupArn}, green: ${green}}
steps:
  - action: weighted-target-groups
    split: off
    rule: ${ruleArn}
    pool: green
    schedule: [50, 100]
    bake: 1
`,
    )
    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr + run.stdout).toBe(0)
    const modifies = fx.proxy.of('ModifyRule')
    expect(modifies.map((c) => c.status)).toEqual([200, 200])
    for (const c of modifies) {
      const params = new URLSearchParams(c.body)
      expect(params.get('Actions.member.1.Type')).toBe('authenticate-oidc')
      expect(params.get('Actions.member.1.AuthenticateOidcConfig.UseExistingClientSecret')).toBe('true')
      expect([...params.keys()].filter((k) => k.endsWith('.ClientSecret'))).toEqual([])
    }
    const check = elbVia(cfg.endpoint)
    try {
      const [rule] = (await check.send(new DescribeRulesCommand({RuleArns: [ruleArn]}))).Rules!
      const auth = rule.Actions!.find((a) => a.Type === 'authenticate-oidc')!
      expect(auth.Order).toBe(1)
      expect(auth.AuthenticateOidcConfig).toMatchObject({Issuer: 'https://idp.example.com', ClientId: 'sluice-test'})
      expect(rule.Actions!.find((a) => a.Type === 'forward')!.ForwardConfig!.TargetGroups).toEqual([
        {TargetGroupArn: fx.targets.targetGroupArn, Weight: 0},
        {TargetGroupArn: green, Weight: 100},
      ])
    } finally {
      check.destroy()
    }
  }, 120_000)
})

describe('a rule tagged as the restriction of a type whose action forwards', () => {
  /** The listener's rules tagged as sluice's restriction of `type`, with their actions. */
  async function syncRules(): Promise<Rule[]> {
    const elb = elbVia(cfg.endpoint)
    try {
      const rules = ((await elb.send(new DescribeRulesCommand({ListenerArn: fx.targets.listenerArn}))).Rules ?? []).filter((r) => !r.IsDefault)
      if (rules.length === 0) return []
      const tags = await elb.send(new DescribeTagsCommand({ResourceArns: rules.map((r) => r.RuleArn!)}))
      const sync = new Set(
        (tags.TagDescriptions ?? []).filter((d) => d.Tags?.some((t) => t.Key === 'sluice:restriction' && t.Value === 'sync')).map((d) => d.ResourceArn),
      )
      return rules.filter((r) => sync.has(r.RuleArn))
    } finally {
      elb.destroy()
    }
  }

  /** sluice's 503 switched off by hand: the rule stays, tagged, and forwards every request. */
  async function switchedOff(): Promise<string> {
    const elb = elbVia(cfg.endpoint)
    try {
      return await createRule(elb, 1, [{Type: 'forward', TargetGroupArn: fx.targets.targetGroupArn}], {
        'sluice:restriction': 'sync',
        'sluice:managed-by': 'sluice',
      })
    } finally {
      elb.destroy()
    }
  }

  const flags = () => ['--listener', fx.targets.listenerArn, '--yes', '--json']

  it('status names it as restricting nothing; restrict replaces it with a 503; lift removes one', async () => {
    const offArn = await switchedOff()
    const file = dnsRunbook(fx, 'status-sync', `  listener: ${fx.targets.listenerArn}\nsteps:\n  - action: lift\n    type: sync\n`)
    const status = await sluice(['status', file], {env: fx.env})
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toContain('sync (/sync/*; Retry-After 0 s; restricts nothing: every request passes)')

    const restrict = await sluice(['restrict', '--type', 'sync', '--path', '/sync/*', ...flags()], {env: fx.env})
    expect(restrict.code, restrict.stderr + restrict.stdout).toBe(0)
    expect(JSON.parse(restrict.stdout).steps[0].message).toBe('sync traffic now gets 503 with Retry-After: 120, in place of one that restricted nothing')
    const after = await syncRules()
    expect(after).toHaveLength(1)
    expect(after[0].RuleArn).not.toBe(offArn)
    expect(after[0].Actions?.map((a) => [a.Type, a.FixedResponseConfig?.StatusCode])).toEqual([['fixed-response', '503']])

    // Switched off by hand again, then lifted: gone, and said for what it was.
    await sluice(['lift', '--type', 'sync', ...flags()], {env: fx.env})
    await switchedOff()
    const lift = await sluice(['lift', '--type', 'sync', ...flags()], {env: fx.env})
    expect(lift.code, lift.stderr + lift.stdout).toBe(0)
    expect(JSON.parse(lift.stdout).steps[0].message).toBe(
      `removed the restriction on sync from listener ${fx.targets.listenerArn}; it restricts nothing: every request passes, so no traffic comes back`,
    )
    expect(await syncRules()).toEqual([])
  }, 120_000)
})
