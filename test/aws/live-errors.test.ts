import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {dnsRunbook, mutating, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {route53Throttling} from './proxy.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('live errors change nothing', () => {
  const runbookWith = (targets: string) => {
    const file = join(fx.dir, 'bad.yaml')
    writeFileSync(
      file,
      `name: bad\ntargets:\n${targets}\nsteps:\n  - {action: ramp, set: mailbox, schedule: [50], bake: 1}\n  - {action: cycle, pool: mailbox, batch: 1}\n  - {action: restrict, type: sync, paths: [/sync/*]}\n`,
    )
    return file
  }
  const good = () => ({
    dns: `  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}`,
    tg: `  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}`,
    listener: `  listener: ${fx.targets.listenerArn}`,
  })

  it.each([
    [
      'an unknown hosted zone',
      (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace(fx.targets.zoneId, 'Z0000000000NOSUCH')}),
      /Route53 ListResourceRecordSets on hosted zone Z0000000000NOSUCH failed: NoSuchHostedZone/,
    ],
    [
      'an unknown record',
      (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace(`record: ${fx.targets.record}`, 'record: nosuch.example.com.')}),
      /no weighted A record nosuch\.example\.com\. in hosted zone/,
    ],
    [
      'an unknown set identifier',
      (g: ReturnType<typeof good>) => ({...g, dns: g.dns.replace('maintenance: maintenance', 'standby: maintenance')}),
      /has no weighted set "standby"; it has mailbox, maintenance/,
    ],
    [
      'an unknown target group',
      (g: ReturnType<typeof good>) => ({...g, tg: g.tg.replace(/targetgroup\/[^/]+\//, 'targetgroup/nosuch/')}),
      /ELBv2 DescribeTargetHealth on target group mailbox .*targetgroup\/nosuch\/.* failed: TargetGroupNotFound/,
    ],
    [
      'an unknown listener',
      (g: ReturnType<typeof good>) => ({...g, listener: g.listener.replace(/\/[^/]+$/, '/0000000000000000')}),
      /ELBv2 DescribeRules on listener .*\/0000000000000000 failed: ListenerNotFound/,
    ],
  ])(
    '%s exits 1, names the resource, and changes nothing',
    async (_name, mutate, message) => {
      const g = mutate(good())
      const file = runbookWith([g.dns, g.tg, g.listener].join('\n'))
      const result = await sluice(['run', file, '--yes'], {env: fx.env})
      expect(result.code, result.stderr).toBe(1)
      expect(result.stderr).toMatch(message)
      for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
    },
    120_000,
  )

  it("with no region configured, the region comes from the runbook's ARNs: every read succeeds", async () => {
    const g = good()
    const file = runbookWith([g.dns, g.tg, g.listener].join('\n'))
    // No --region, no AWS_REGION, no profile with a region: only the ARNs name one.
    const result = await sluice(['run', file], {env: {...fx.env, AWS_REGION: '', AWS_DEFAULT_REGION: ''}})
    // Preflight read everything, showed the plan and asked; no terminal and no --yes refuses.
    expect(result.code, result.stderr).toBe(4)
    expect(result.stderr).toContain('pass --yes')
    expect(result.stderr).not.toMatch(/Region is missing/)
    expect(fx.proxy.count('DescribeTargetHealth')).toBeGreaterThan(0)
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
  }, 120_000)

  it('ARNs naming two regions are refused with exit 2 naming both, before any call', async () => {
    const g = good()
    const elsewhere = g.listener.replace(/elasticloadbalancing:[a-z0-9-]+:/, 'elasticloadbalancing:eu-west-1:')
    const file = runbookWith([g.dns, g.tg, elsewhere].join('\n'))
    const result = await sluice(['run', file, '--yes'], {env: {...fx.env, AWS_REGION: '', AWS_DEFAULT_REGION: ''}})
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/the runbook's ARNs name two regions, us-east-1 \(targetGroups\.mailbox\) and eu-west-1 \(listener\)/)
    expect(fx.proxy.calls).toHaveLength(0)
  }, 120_000)

  it("a configured region that is not the ARNs' is refused with exit 2 naming both and where it came from, before any call", async () => {
    const g = good()
    const file = runbookWith([g.dns, g.tg, g.listener].join('\n'))
    const result = await sluice(['run', file, '--yes'], {env: {...fx.env, AWS_REGION: 'eu-west-1'}})
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toContain("--region: eu-west-1 (from AWS_REGION) is not the region the runbook's ARNs name, us-east-1")
    expect(result.stderr).toContain('Give --region us-east-1, or unset AWS_REGION')
    expect(fx.proxy.calls).toHaveLength(0)
  }, 120_000)

  it('a profile that does not exist is named as such, exit 2, before any call', async () => {
    const g = good()
    const file = runbookWith([g.dns, g.tg, g.listener].join('\n'))
    const result = await sluice(['run', file, '--yes', '--profile', 'nope'], {env: fx.env})
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr.trimEnd()).toBe(
      `using local state ${fx.env.SLUICE_STATE} ($SLUICE_STATE)\n` +
        'Error: --profile nope: there is no profile nope in the shared config file (/dev/null) or credentials file (/dev/null); `aws configure list-profiles` lists the profiles there are',
    )
    expect(result.stderr).not.toMatch(/Could not load credentials/)
    expect(fx.proxy.calls).toHaveLength(0)
  }, 120_000)

  it('throttling is retried with backoff and the change still lands once', async () => {
    fx.proxy.inject({operation: 'ChangeResourceRecordSets', times: 2, ...route53Throttling})
    const file = dnsRunbook(fx, 'shift', `steps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code, result.stderr).toBe(0)
    const attempts = fx.proxy.of('ChangeResourceRecordSets')
    expect(attempts.map((a) => a.status)).toEqual([400, 400, 200])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 60, maintenance: 40})
  }, 120_000)

  it('AccessDenied names the operation, the resource and the IAM permission to grant', async () => {
    fx.proxy.inject({
      operation: 'ChangeResourceRecordSets',
      times: 10,
      status: 403,
      contentType: 'text/xml',
      body: '<?xml version="1.0"?>\n<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/oncall is not authorized to perform: route53:ChangeResourceRecordSets</Message></Error><RequestId>1</RequestId></ErrorResponse>',
    })
    const file = dnsRunbook(fx, 'denied', `steps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).toContain(
      `Route53 ChangeResourceRecordSets on ${fx.targets.zoneId} ${fx.targets.record} A was denied: the caller needs IAM permission route53:ChangeResourceRecordSets`,
    )
    // And where to find every permission the runbook needs.
    expect(result.stderr).toContain('`sluice iam-policy RUNBOOK` prints every permission a runbook needs')
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
  }, 120_000)

  it('a live run without a terminal and without --yes is refused with exit 4 and changes nothing', async () => {
    const file = dnsRunbook(fx, 'shift', `steps:\n  - {action: ramp, set: maintenance, schedule: [40], bake: 1}\n`)
    const result = await sluice(['run', file], {env: fx.env})
    expect(result.code).toBe(4)
    expect(result.stderr).toContain('pass --yes')
    // The plan was shown as a diff before the question.
    expect(result.stderr).toMatch(/mailbox=100 maintenance=0 → mailbox=60 maintenance=40/)
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
  }, 120_000)
})
