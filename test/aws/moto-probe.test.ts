// Pins down what moto 5.2 actually does for the calls sluice makes. Where moto is more lenient
// than AWS the test says so in its name: sluice must do that validation itself, and a green
// run against moto proves nothing about it.
import {spawn} from 'node:child_process'
import {Readable} from 'node:stream'
import {fileURLToPath} from 'node:url'
import {describe, expect, inject, test} from 'vitest'
import {CloudWatchClient, GetMetricDataCommand, GetMetricStatisticsCommand, type MetricDataQuery, type Dimension} from '@aws-sdk/client-cloudwatch'
import {
  CreateRuleCommand,
  DeleteRuleCommand,
  DeregisterTargetsCommand,
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupAttributesCommand,
  DescribeTargetHealthCommand,
  ElasticLoadBalancingV2Client,
  ModifyTargetGroupAttributesCommand,
  type TargetGroupAttribute,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import {
  ChangeResourceRecordSetsCommand,
  GetChangeCommand,
  GetHostedZoneCommand,
  ListHostedZonesByNameCommand,
  ListResourceRecordSetsCommand,
  Route53Client,
  type ResourceRecordSet,
} from '@aws-sdk/client-route-53'
import {awsTestEnv, clientConfig, INSTALL_HINT, resetMoto, startMoto} from './moto.js'
import {putAlbMetrics, seedLoadBalancer, seedZone, uniqueName} from './seed.js'

const endpoint = inject('motoEndpoint')
const cfg = clientConfig(endpoint)
const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

async function failure(promise: Promise<unknown>): Promise<{name: string; code?: string; message: string; status?: number}> {
  try {
    await promise
  } catch (error) {
    const e = error as {name: string; Code?: string; message: string; $metadata?: {httpStatusCode?: number}}
    return {name: e.name, code: e.Code, message: e.message, status: e.$metadata?.httpStatusCode}
  }
  throw new Error('expected the call to fail')
}

describe('the harness', () => {
  test('startMoto runs an independent server on its own port, resetMoto empties it, and stop() ends it', async () => {
    const moto = await startMoto()
    expect(moto.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(moto.endpoint).not.toBe(endpoint)
    // Reset only this private server: the shared one is in use by other files' tests.
    const r53 = new Route53Client(clientConfig(moto.endpoint))
    await seedZone(clientConfig(moto.endpoint), {zoneName: 'reset.example.com', record: 'api', sets: {a: 1}})
    expect((await r53.send(new ListHostedZonesByNameCommand({}))).HostedZones).toHaveLength(1)
    await resetMoto(moto.endpoint)
    expect((await r53.send(new ListHostedZonesByNameCommand({}))).HostedZones).toHaveLength(0)
    await moto.stop()
    await expect(fetch(`${moto.endpoint}/moto-api/`)).rejects.toThrow()
  })

  test('startMoto fails with the pip install hint when moto_server is not on PATH', async () => {
    const path = process.env.PATH
    process.env.PATH = '/nonexistent'
    try {
      await expect(startMoto()).rejects.toThrow("pip install 'moto[server]'")
      expect(INSTALL_HINT).toContain("pip install 'moto[server]'")
    } finally {
      process.env.PATH = path
    }
  })

  test('awsTestEnv alone is enough for a spawned SDK process to reach moto', async () => {
    const zoneName = `${uniqueName('env')}.example.com`
    // No endpoint, region or credentials in code: everything must come from the environment.
    const script = `
      import {Route53Client, CreateHostedZoneCommand} from '@aws-sdk/client-route-53'
      await new Route53Client({}).send(new CreateHostedZoneCommand({Name: '${zoneName}', CallerReference: '${zoneName}'}))
    `
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: repoRoot,
      env: {PATH: process.env.PATH ?? '', HOME: '/nonexistent', ...awsTestEnv(endpoint)},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise((resolve) => child.on('close', resolve))
    expect({code, stderr}).toEqual({code: 0, stderr: ''})

    const r53 = new Route53Client(cfg)
    const zones = await r53.send(new ListHostedZonesByNameCommand({DNSName: zoneName}))
    expect(zones.HostedZones?.map((z) => z.Name)).toEqual([`${zoneName}.`])
  })
})

describe('Route 53 on moto', () => {
  const r53 = new Route53Client(cfg)
  const weighted = (name: string, setId: string, weight: number, ip: string): ResourceRecordSet => ({
    Name: name,
    Type: 'A',
    SetIdentifier: setId,
    Weight: weight,
    TTL: 60,
    ResourceRecords: [{Value: ip}],
  })

  async function zone(sets: Record<string, number> = {blue: 200, green: 55, canary: 0}) {
    return seedZone(cfg, {zoneName: `${uniqueName('z')}.example.com`, record: 'api', sets})
  }

  test('ListResourceRecordSets from StartRecordName/Type lists each weighted set with SetIdentifier and Weight, in insertion order, and runs on past the name', async () => {
    const z = await zone()
    // Sorts after api.<zone>, so it shows the listing does not stop at the requested name.
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {Changes: [{Action: 'CREATE', ResourceRecordSet: weighted(z.record.replace(/^api/, 'www'), 'blue', 1, '192.0.2.9')}]},
      }),
    )
    const out = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(z.record).toMatch(/^api\.z-[0-9a-f]{8}\.example\.com\.$/)
    expect(out.ResourceRecordSets?.map((r) => [r.Name, r.SetIdentifier, r.Weight, r.ResourceRecords?.[0].Value])).toEqual([
      [z.record, 'blue', 200, '192.0.2.1'],
      [z.record, 'green', 55, '192.0.2.2'],
      [z.record, 'canary', 0, '192.0.2.3'],
      [z.record.replace(/^api/, 'www'), 'blue', 1, '192.0.2.9'],
    ])
    expect(out.IsTruncated).toBe(false)
  })

  test('paging inside one weighted name is broken: no NextRecordIdentifier, StartRecordIdentifier is ignored, so following Next* repeats the first set forever', async () => {
    const z = await zone()
    const first = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A', MaxItems: 1}))
    expect(first.ResourceRecordSets?.map((r) => r.SetIdentifier)).toEqual(['blue'])
    expect(first).toMatchObject({IsTruncated: true, MaxItems: 1, NextRecordName: z.record, NextRecordType: 'A'})
    expect(first.NextRecordIdentifier).toBeUndefined()

    const second = await r53.send(
      new ListResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        StartRecordName: first.NextRecordName,
        StartRecordType: first.NextRecordType,
        StartRecordIdentifier: 'green',
        MaxItems: 1,
      }),
    )
    // A paginator that trusts IsTruncated never ends against moto; it must stop when a page repeats.
    expect(second.ResourceRecordSets?.map((r) => r.SetIdentifier)).toEqual(['blue'])
    expect(second.IsTruncated).toBe(true)
  })

  test('paging across different names and types works with MaxItems=1', async () => {
    const z = await zone({only: 10})
    const seen: string[] = []
    let start: {StartRecordName?: string; StartRecordType?: ListResourceRecordSetsCommand['input']['StartRecordType']} = {}
    for (let page = 0; page < 10; page++) {
      const out = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, MaxItems: 1, ...start}))
      seen.push(...(out.ResourceRecordSets ?? []).map((r) => `${r.Type} ${r.Name}`))
      if (!out.IsTruncated) break
      start = {StartRecordName: out.NextRecordName, StartRecordType: out.NextRecordType}
    }
    const apex = z.record.replace(/^api\./, '')
    expect(seen).toEqual([`NS ${apex}`, `SOA ${apex}`, `A ${z.record}`])
  })

  test('UPSERT accepts Weight 300 and -1 and stores them (AWS allows only 0-255: sluice must validate)', async () => {
    const z = await zone()
    const out = await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {
          Changes: [
            {Action: 'UPSERT', ResourceRecordSet: weighted(z.record, 'blue', 300, '192.0.2.1')},
            {Action: 'UPSERT', ResourceRecordSet: weighted(z.record, 'green', -1, '192.0.2.2')},
          ],
        },
      }),
    )
    expect(out.ChangeInfo?.Status).toBe('INSYNC')
    const list = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(list.ResourceRecordSets?.map((r) => [r.SetIdentifier, r.Weight])).toEqual([
      ['blue', 300],
      ['green', -1],
      ['canary', 0],
    ])
  })

  test('one ChangeResourceRecordSets batch of several UPSERTs applies all of them, in place', async () => {
    const z = await zone()
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {
          Changes: [
            {Action: 'UPSERT', ResourceRecordSet: weighted(z.record, 'blue', 0, '192.0.2.1')},
            {Action: 'UPSERT', ResourceRecordSet: weighted(z.record, 'green', 255, '192.0.2.2')},
            {Action: 'UPSERT', ResourceRecordSet: weighted(z.record, 'canary', 5, '192.0.2.3')},
          ],
        },
      }),
    )
    const list = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(list.ResourceRecordSets?.map((r) => [r.SetIdentifier, r.Weight])).toEqual([
      ['blue', 0],
      ['green', 255],
      ['canary', 5],
    ])
  })

  test('changes are INSYNC at once, under a change id moto reuses for every change; GetChange says INSYNC for any id, even a made-up one', async () => {
    const a = await zone()
    const b = await zone()
    const change = (zoneId: string, record: string) =>
      r53.send(
        new ChangeResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          ChangeBatch: {Changes: [{Action: 'UPSERT', ResourceRecordSet: weighted(record, 'blue', 1, '192.0.2.1')}]},
        }),
      )
    const first = await change(a.zoneId, a.record)
    const second = await change(b.zoneId, b.record)
    expect(first.ChangeInfo?.Status).toBe('INSYNC')
    expect(first.ChangeInfo?.Id).toMatch(/^\/change\/C[A-Z0-9]+$/)
    expect(second.ChangeInfo?.Id).toBe(first.ChangeInfo?.Id)

    const got = await r53.send(new GetChangeCommand({Id: first.ChangeInfo!.Id}))
    // The SDK strips /change/ from the id it sends, and moto echoes what it was sent.
    expect(got.ChangeInfo).toMatchObject({Id: first.ChangeInfo!.Id!.replace('/change/', ''), Status: 'INSYNC'})
    const madeUp = await r53.send(new GetChangeCommand({Id: 'CNOSUCHCHANGE'}))
    expect(madeUp.ChangeInfo).toMatchObject({Id: 'CNOSUCHCHANGE', Status: 'INSYNC'})
  })

  test('CREATE of an existing set identifier with different values is accepted and duplicates the set (AWS rejects it)', async () => {
    const z = await zone({blue: 10})
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {Changes: [{Action: 'CREATE', ResourceRecordSet: weighted(z.record, 'blue', 20, '192.0.2.1')}]},
      }),
    )
    const list = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(list.ResourceRecordSets?.map((r) => [r.SetIdentifier, r.Weight])).toEqual([
      ['blue', 10],
      ['blue', 20],
    ])
  })

  test('DELETE with a SetIdentifier removes that identifier from every name and type in the zone', async () => {
    const z = await zone({blue: 10, green: 20})
    const www = z.record.replace(/^api/, 'www')
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {Changes: [{Action: 'CREATE', ResourceRecordSet: weighted(www, 'blue', 1, '192.0.2.9')}]},
      }),
    )
    await r53.send(
      new ChangeResourceRecordSetsCommand({
        HostedZoneId: z.zoneId,
        ChangeBatch: {Changes: [{Action: 'DELETE', ResourceRecordSet: {...weighted(z.record, 'blue', 10, '192.0.2.1'), TTL: 60}}]},
      }),
    )
    const list = await r53.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(list.ResourceRecordSets?.map((r) => [r.Name, r.SetIdentifier])).toEqual([[z.record, 'green']])
  })

  test('an unknown hosted zone is NoSuchHostedZone, HTTP 404', async () => {
    const expected = {name: 'NoSuchHostedZone', code: 'NoSuchHostedZone', message: 'No hosted zone found with ID: ZNOSUCHZONE0', status: 404}
    expect(await failure(r53.send(new ListResourceRecordSetsCommand({HostedZoneId: 'ZNOSUCHZONE0'})))).toEqual(expected)
    expect(await failure(r53.send(new GetHostedZoneCommand({Id: 'ZNOSUCHZONE0'})))).toEqual(expected)
    expect(
      await failure(
        r53.send(
          new ChangeResourceRecordSetsCommand({
            HostedZoneId: 'ZNOSUCHZONE0',
            ChangeBatch: {Changes: [{Action: 'UPSERT', ResourceRecordSet: weighted('api.example.com', 'blue', 1, '192.0.2.1')}]},
          }),
        ),
      ),
    ).toEqual(expected)
  })
})

describe('ELBv2 on moto', () => {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const health = async (targetGroupArn: string, targets?: string[]) => {
    const out = await elb.send(new DescribeTargetHealthCommand({TargetGroupArn: targetGroupArn, Targets: targets?.map((Id) => ({Id, Port: 443}))}))
    return out.TargetHealthDescriptions?.map((d) => [d.Target?.Id, d.TargetHealth?.State, d.TargetHealth?.Reason])
  }
  const attributes = async (targetGroupArn: string) => {
    const out = await elb.send(new DescribeTargetGroupAttributesCommand({TargetGroupArn: targetGroupArn}))
    return Object.fromEntries((out.Attributes ?? []).map((a) => [a.Key, a.Value]))
  }
  const modify = (targetGroupArn: string, attrs: TargetGroupAttribute[]) =>
    elb.send(new ModifyTargetGroupAttributesCommand({TargetGroupArn: targetGroupArn, Attributes: attrs}))

  test('seedLoadBalancer returns ARNs and CloudWatch dimension values that match each other', async () => {
    const name = uniqueName('seed')
    const lb = await seedLoadBalancer(cfg, {name, targets: 2})
    expect(lb.loadBalancerDimension).toMatch(new RegExp(`^app/${name}/[0-9a-f]{16}$`))
    expect(lb.loadBalancerArn.endsWith(`:loadbalancer/${lb.loadBalancerDimension}`)).toBe(true)
    expect(lb.targetGroupDimension).toMatch(new RegExp(`^targetgroup/${name}/[0-9a-f]{16}$`))
    expect(lb.targetGroupArn.endsWith(`:${lb.targetGroupDimension}`)).toBe(true)
    expect(lb.listenerArn).toContain(`:listener/${lb.loadBalancerDimension}/`)
    expect(lb.targetIps).toEqual(['10.0.1.10', '10.0.1.11'])
  })

  test('targets are healthy immediately after RegisterTargets (never initial)', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('reg'), targets: 3})
    expect(await health(lb.targetGroupArn)).toEqual([
      ['10.0.1.10', 'healthy', undefined],
      ['10.0.1.11', 'healthy', undefined],
      ['10.0.1.12', 'healthy', undefined],
    ])
  })

  test('a deregistered target vanishes at once (never draining); asked for by id it is unused, an unknown IP is unavailable', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('dereg'), targets: 3})
    await elb.send(new DeregisterTargetsCommand({TargetGroupArn: lb.targetGroupArn, Targets: [{Id: '10.0.1.10', Port: 443}]}))
    expect(await health(lb.targetGroupArn)).toEqual([
      ['10.0.1.11', 'healthy', undefined],
      ['10.0.1.12', 'healthy', undefined],
    ])
    expect(await health(lb.targetGroupArn, ['10.0.1.10', '10.0.9.9'])).toEqual([
      ['10.0.1.10', 'unused', 'Target.NotRegistered'],
      ['10.0.9.9', 'unavailable', 'Target.NotRegistered'],
    ])
  })

  test('deregistering a target that is not registered is InvalidTargetException', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('dereg2'), targets: 1})
    const dereg = () => elb.send(new DeregisterTargetsCommand({TargetGroupArn: lb.targetGroupArn, Targets: [{Id: '10.0.1.10', Port: 443}]}))
    await dereg()
    expect(await failure(dereg())).toEqual({
      name: 'InvalidTargetException',
      code: 'InvalidTarget',
      message: 'The specified target does not exist or is not in the same VPC as the target group.',
      status: 400,
    })
  })

  test('target group attributes include deregistration_delay and slow_start but no target_group_health.* keys', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('attr'), targets: 1})
    const attrs = await attributes(lb.targetGroupArn)
    expect(attrs).toMatchObject({'deregistration_delay.timeout_seconds': '300', 'slow_start.duration_seconds': '0'})
    expect(Object.keys(attrs).filter((k) => k.startsWith('target_group_health.'))).toEqual([])
  })

  test('ModifyTargetGroupAttributes range-checks deregistration_delay but accepts slow_start 5 (AWS: 30-900) and unknown keys, and echoes only what changed', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('mod'), targets: 1})
    const out = await modify(lb.targetGroupArn, [{Key: 'slow_start.duration_seconds', Value: '5'}])
    expect(out.Attributes).toEqual([{Key: 'slow_start.duration_seconds', Value: '5'}])

    expect(await failure(modify(lb.targetGroupArn, [{Key: 'deregistration_delay.timeout_seconds', Value: '3601'}]))).toEqual({
      name: 'ValidationError',
      code: 'ValidationError',
      message: "'deregistration_delay.timeout_seconds' value '3601' must be between '0-3600' inclusive",
      status: 400,
    })
    await modify(lb.targetGroupArn, [
      {Key: 'deregistration_delay.timeout_seconds', Value: '0'},
      {Key: 'target_group_health.dns_failover.minimum_healthy_targets.count', Value: '1'},
      {Key: 'no.such.attribute', Value: 'x'},
    ])
    expect(await attributes(lb.targetGroupArn)).toMatchObject({
      'slow_start.duration_seconds': '5',
      'deregistration_delay.timeout_seconds': '0',
      'target_group_health.dns_failover.minimum_healthy_targets.count': '1',
      'no.such.attribute': 'x',
    })
  })

  test('a fixed-response 503 rule with a path-pattern and Tags round-trips through DescribeRules and DescribeTags; DeleteRule twice is fine', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('rule'), targets: 1})
    const created = await elb.send(
      new CreateRuleCommand({
        ListenerArn: lb.listenerArn,
        Priority: 1,
        Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: ['/*']}}],
        Actions: [{Type: 'fixed-response', FixedResponseConfig: {StatusCode: '503', ContentType: 'text/plain', MessageBody: 'frozen'}}],
        Tags: [{Key: 'sluice:owner', Value: 'freeze'}],
      }),
    )
    const ruleArn = created.Rules![0].RuleArn!
    expect(ruleArn).toContain(':listener-rule/app/')

    const rules = await elb.send(new DescribeRulesCommand({ListenerArn: lb.listenerArn}))
    expect(rules.Rules).toEqual([
      {
        RuleArn: ruleArn,
        Priority: '1',
        Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: ['/*']}}],
        Actions: [{Type: 'fixed-response', FixedResponseConfig: {StatusCode: '503', ContentType: 'text/plain', MessageBody: 'frozen'}}],
        IsDefault: false,
      },
      {
        RuleArn: expect.stringContaining(':listener-rule/app/'),
        Priority: 'default',
        Conditions: [],
        Actions: [{Type: 'forward', TargetGroupArn: lb.targetGroupArn}],
        IsDefault: true,
      },
    ])

    const tags = await elb.send(new DescribeTagsCommand({ResourceArns: [ruleArn]}))
    expect(tags.TagDescriptions).toEqual([{ResourceArn: ruleArn, Tags: [{Key: 'sluice:owner', Value: 'freeze'}]}])

    const samePriority = elb.send(
      new CreateRuleCommand({
        ListenerArn: lb.listenerArn,
        Priority: 1,
        Conditions: [{Field: 'path-pattern', PathPatternConfig: {Values: ['/other']}}],
        Actions: [{Type: 'fixed-response', FixedResponseConfig: {StatusCode: '503'}}],
      }),
    )
    expect(await failure(samePriority)).toEqual({
      name: 'PriorityInUseException',
      code: 'PriorityInUse',
      message: 'The specified priority is in use.',
      status: 400,
    })

    await elb.send(new DeleteRuleCommand({RuleArn: ruleArn}))
    const after = await elb.send(new DescribeRulesCommand({ListenerArn: lb.listenerArn}))
    expect(after.Rules?.map((r) => r.Priority)).toEqual(['default'])
    // AWS answers RuleNotFound here; moto succeeds, so "already gone" paths can't be exercised on moto.
    await expect(elb.send(new DeleteRuleCommand({RuleArn: ruleArn}))).resolves.toBeDefined()
  })

  test('an unknown target group ARN is TargetGroupNotFoundException; an unknown listener ARN is ListenerNotFoundException', async () => {
    const lb = await seedLoadBalancer(cfg, {name: uniqueName('nf'), targets: 1})
    const badTg = lb.targetGroupArn.replace(/[0-9a-f]{16}$/, '0000000000000000')
    const badListener = lb.listenerArn.replace(/[0-9a-f]{16}$/, '0000000000000000')
    const tgNotFound = {
      name: 'TargetGroupNotFoundException',
      code: 'TargetGroupNotFound',
      message: 'One or more target groups not found',
      status: 400,
    }
    expect(await failure(elb.send(new DescribeTargetHealthCommand({TargetGroupArn: badTg})))).toEqual(tgNotFound)
    expect(await failure(elb.send(new DescribeTargetGroupAttributesCommand({TargetGroupArn: badTg})))).toEqual(tgNotFound)
    expect(await failure(elb.send(new DescribeRulesCommand({ListenerArn: badListener})))).toEqual({
      name: 'ListenerNotFoundException',
      code: 'ListenerNotFound',
      message: 'The specified listener does not exist.',
      status: 400,
    })
  })
})

describe('CloudWatch on moto', () => {
  // moto turns some requests into HTTP 500s, which the SDK would otherwise retry with backoff.
  const cw = new CloudWatchClient({...cfg, maxAttempts: 1})
  const MINUTE = 60_000

  async function seeded() {
    const name = uniqueName('cw')
    const lb = `app/${name}/0123456789abcdef`
    const tg = `targetgroup/${name}/fedcba9876543210`
    const thisMinute = Math.floor(Date.now() / MINUTE) * MINUTE
    // Five points, one per minute for the last five minutes, a few seconds into each minute.
    const points = [5, 4, 3, 2, 1].map((ago, i) => ({
      at: new Date(thisMinute - ago * MINUTE + 5_000),
      requests: 100 + i,
      target5xx: i,
      elb5xx: 1,
      latencySeconds: (i + 1) / 10,
    }))
    await putAlbMetrics(cfg, {loadBalancer: lb, targetGroup: tg, points})
    const minutes = [5, 4, 3, 2, 1].map((ago) => new Date(thisMinute - ago * MINUTE))
    return {lb, tg, thisMinute, minutes}
  }

  const query = (Id: string, MetricName: string, Stat: string, Dimensions: Dimension[]): MetricDataQuery => ({
    Id,
    MetricStat: {Metric: {Namespace: 'AWS/ApplicationELB', MetricName, Dimensions}, Period: 60, Stat},
  })
  const results = async (start: number, end: number, queries: MetricDataQuery[], ScanBy?: 'TimestampAscending' | 'TimestampDescending') => {
    const out = await cw.send(new GetMetricDataCommand({StartTime: new Date(start), EndTime: new Date(end), MetricDataQueries: queries, ScanBy}))
    const byId: Record<string, {Timestamps?: Date[]; Values?: number[]; StatusCode?: string}> = {}
    for (const r of out.MetricDataResults ?? []) byId[r.Id!] = {Timestamps: r.Timestamps, Values: r.Values, StatusCode: r.StatusCode}
    return byId
  }

  test('GetMetricData Sum over 60 s returns one value per minute, newest first by default and oldest first with ScanBy TimestampAscending', async () => {
    const {lb, tg, thisMinute, minutes} = await seeded()
    const lbOnly = [{Name: 'LoadBalancer', Value: lb}]
    const withTg = [...lbOnly, {Name: 'TargetGroup', Value: tg}]
    const queries = [
      query('req', 'RequestCount', 'Sum', lbOnly),
      query('tgreq', 'RequestCount', 'Sum', withTg),
      query('t5xx', 'HTTPCode_Target_5XX_Count', 'Sum', withTg),
      query('e5xx', 'HTTPCode_ELB_5XX_Count', 'Sum', lbOnly),
      query('avg', 'TargetResponseTime', 'Average', lbOnly),
    ]
    const desc = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, queries)
    expect(desc.req).toEqual({Timestamps: [...minutes].reverse(), Values: [104, 103, 102, 101, 100], StatusCode: 'Complete'})
    expect(desc.tgreq.Values).toEqual([104, 103, 102, 101, 100])
    expect(desc.t5xx.Values).toEqual([4, 3, 2, 1, 0])
    expect(desc.e5xx.Values).toEqual([1, 1, 1, 1, 1])
    expect(desc.avg.Values?.map((v) => Math.round(v * 100) / 100)).toEqual([0.5, 0.4, 0.3, 0.2, 0.1])

    const asc = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, queries.slice(0, 1), 'TimestampAscending')
    expect(asc.req).toEqual({Timestamps: minutes, Values: [100, 101, 102, 103, 104], StatusCode: 'Complete'})
  })

  test('periods are counted from StartTime, not aligned to the minute as AWS does', async () => {
    const {lb, thisMinute, minutes} = await seeded()
    const out = await results(
      thisMinute - 10 * MINUTE + 30_000,
      thisMinute + MINUTE,
      [query('req', 'RequestCount', 'Sum', [{Name: 'LoadBalancer', Value: lb}])],
      'TimestampAscending',
    )
    // Each point at :05 falls in the bucket that started at the previous minute's :30.
    expect(out.req.Timestamps).toEqual(minutes.map((m) => new Date(m.getTime() - 30_000)))
    expect(out.req.Values).toEqual([100, 101, 102, 103, 104])
  })

  test('a metric with no data gives empty Timestamps and Values with StatusCode Complete', async () => {
    const {lb, thisMinute} = await seeded()
    const out = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, [
      query('none', 'HTTPCode_ELB_4XX_Count', 'Sum', [{Name: 'LoadBalancer', Value: lb}]),
    ])
    expect(out.none).toEqual({Timestamps: [], Values: [], StatusCode: 'Complete'})
  })

  test('dimensions must match exactly and in the same order as published; an empty list matches every series of the metric', async () => {
    const {lb, tg, thisMinute} = await seeded()
    const lbDim = {Name: 'LoadBalancer', Value: lb}
    const tgDim = {Name: 'TargetGroup', Value: tg}
    const out = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, [
      query('tgOnly', 'RequestCount', 'Sum', [tgDim]),
      query('reversed', 'RequestCount', 'Sum', [tgDim, lbDim]),
      query('all', 'RequestCount', 'Sum', []),
    ])
    expect(out.tgOnly.Values).toEqual([])
    // AWS ignores dimension order; moto's Dimension sort is broken, so order matters here.
    expect(out.reversed.Values).toEqual([])
    // Other tests' series land in here too, so only a lower bound holds: both of this test's series, summed.
    expect(out.all.Values![0]).toBeGreaterThanOrEqual(2 * 104)
  })

  test("Stat 'p99' makes moto fail with an HTTP 500 when there is data, and return empty Values when there is none", async () => {
    const {lb, thisMinute} = await seeded()
    const lbOnly = [{Name: 'LoadBalancer', Value: lb}]
    const err = await failure(results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, [query('p99', 'TargetResponseTime', 'p99', lbOnly)]))
    // moto's HTML error page reaches the SDK's JSON deserializer.
    expect(err).toMatchObject({name: 'SyntaxError', status: 500})

    const empty = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, [
      query('p99', 'TargetResponseTime', 'p99', [{Name: 'LoadBalancer', Value: 'app/none/0'}]),
    ])
    expect(empty.p99.Values).toEqual([])

    // GetMetricStatistics doesn't fail, but leaves ExtendedStatistics out of every datapoint.
    const stats = await cw.send(
      new GetMetricStatisticsCommand({
        Namespace: 'AWS/ApplicationELB',
        MetricName: 'TargetResponseTime',
        Dimensions: lbOnly,
        StartTime: new Date(thisMinute - 10 * MINUTE),
        EndTime: new Date(thisMinute + MINUTE),
        Period: 60,
        ExtendedStatistics: ['p99'],
      }),
    )
    expect(stats.Datapoints).toHaveLength(5)
    expect(stats.Datapoints?.every((d) => d.ExtendedStatistics === undefined)).toBe(true)
  })

  test('metric math is not evaluated: an expression gives empty Values unless it is just another query id', async () => {
    const {lb, thisMinute} = await seeded()
    const req = query('req', 'RequestCount', 'Sum', [{Name: 'LoadBalancer', Value: lb}])
    const out = await results(thisMinute - 10 * MINUTE, thisMinute + MINUTE, [
      {...req, ReturnData: false},
      {Id: 'rate', Expression: 'req / 60'},
      {Id: 'same', Expression: 'req'},
    ])
    expect(out.req).toBeUndefined()
    expect(out.rate.Values).toEqual([])
    expect(out.same.Values).toEqual([104, 103, 102, 101, 100])
  })
})

describe('throttling', () => {
  // moto has no switch for throttling (nothing under /moto-api/ does it), so retry tests inject it
  // client-side: a middleware below the deserializer answers with the 400 that Route 53 sends when
  // throttled, and the SDK's own deserializer and retry strategy handle it as they would in production.
  function throttleFirst(client: Route53Client, times: number): {calls: number} {
    const seen = {calls: 0}
    client.middlewareStack.add(
      (next) => async (args) => {
        seen.calls++
        if (seen.calls > times) return next(args)
        const body = `<?xml version="1.0"?>
<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>throttled-${seen.calls}</RequestId></ErrorResponse>`
        return {response: {statusCode: 400, reason: 'Bad Request', headers: {'content-type': 'text/xml'}, body: Readable.from([Buffer.from(body)])}}
      },
      {step: 'deserialize', priority: 'low', name: 'injectThrottling'},
    )
    return seen
  }

  test('one injected Throttling on the first attempt is retried and ListResourceRecordSets succeeds', async () => {
    const z = await seedZone(cfg, {zoneName: `${uniqueName('thr')}.example.com`, record: 'api', sets: {blue: 1}})
    const client = new Route53Client({...cfg, retryMode: 'adaptive', maxAttempts: 3})
    const seen = throttleFirst(client, 1)
    const out = await client.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId, StartRecordName: z.record, StartRecordType: 'A'}))
    expect(out.ResourceRecordSets?.map((r) => r.SetIdentifier)).toEqual(['blue'])
    expect(out.$metadata.attempts).toBe(2)
    expect(out.$metadata.totalRetryDelay).toBeGreaterThan(0)
    expect(seen.calls).toBe(2)
  })

  test('when every attempt is throttled the SDK gives up after maxAttempts with a Throttling error', async () => {
    const z = await seedZone(cfg, {zoneName: `${uniqueName('thr')}.example.com`, record: 'api', sets: {blue: 1}})
    // 'standard', not 'adaptive': adaptive's client-side rate limiter adds about 2 s after repeated throttles.
    const client = new Route53Client({...cfg, retryMode: 'standard', maxAttempts: 3})
    const seen = throttleFirst(client, Infinity)
    const error = await client.send(new ListResourceRecordSetsCommand({HostedZoneId: z.zoneId})).catch((e: unknown) => e)
    expect(error).toMatchObject({name: 'Throttling', message: 'Rate exceeded', $metadata: {httpStatusCode: 400, attempts: 3}})
    expect(seen.calls).toBe(3)
  })
})
