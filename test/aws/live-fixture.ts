import {chmodSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {DescribeRulesCommand, DescribeTargetGroupAttributesCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {afterEach, beforeEach, inject} from 'vitest'
import type {LiveTargets} from './live-runbook.js'
import {awsTestEnv, clientConfig} from './moto.js'
import {RecordingProxy} from './proxy.js'
import {readWeights, registeredTargets} from './readback.js'
import {putAlbMetrics, seedLoadBalancer, seedZone, targetGroupDimension, uniqueName} from './seed.js'
import {gatedRamp, spawnRun, when, type SpawnedRun} from './spawned-run.js'

/**
 * What the live tests share, split over several files so vitest runs them in parallel workers
 * against the one moto server: every test seeds its own uniquely named zone and load balancer.
 */
export const moto = inject('motoEndpoint')
export const cfg = clientConfig(moto)

export interface Fixture {
  proxy: RecordingProxy
  targets: LiveTargets
  dir: string
  hook: string
  hookLog: string
  env: Record<string, string>
}

export const weights = (zoneId: string, record: string) => readWeights(cfg, zoneId, record)
export const registered = (arn: string) => registeredTargets(cfg, arn)

export async function groupAttributes(arn: string): Promise<Record<string, string>> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const out = await elb.send(new DescribeTargetGroupAttributesCommand({TargetGroupArn: arn}))
  elb.destroy()
  return Object.fromEntries((out.Attributes ?? []).map((a) => [a.Key!, a.Value!]))
}

export async function ruleCount(listenerArn: string): Promise<number> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const out = await elb.send(new DescribeRulesCommand({ListenerArn: listenerArn}))
  elb.destroy()
  return (out.Rules ?? []).filter((r) => !r.IsDefault).length
}

/** Minute points from five minutes ago to ten minutes ahead, for the load balancer and the group. */
export async function seedMetrics(fx: Fixture, errorPercent: number): Promise<void> {
  const now = Date.now()
  const points = Array.from({length: 16}, (_, i) => ({at: new Date(now + (i - 5) * 60_000), requests: 1000, target5xx: errorPercent * 10, elb5xx: 0}))
  await putAlbMetrics(cfg, {loadBalancer: fx.targets.loadBalancer, targetGroup: targetGroupDimension(fx.targets.targetGroupArn), points})
}

/** Each deadline test hangs its own AWS call (`operation`) at its own step (`reached`) of the gated ramp; `meanwhile` acts on the run once it hangs. */
export async function runGatedRampHanging(
  fx: Fixture,
  reached: RegExp,
  operation: string,
  meanwhile?: (run: SpawnedRun) => void,
): Promise<{end: Awaited<SpawnedRun['ended']>; stoppedIn: number}> {
  await seedMetrics(fx, 0)
  const run = spawnRun(['run', gatedRamp(fx), '--yes'], fx.env)
  await run.seen(reached)
  fx.proxy.hold(operation)
  const hung = await when(() => fx.proxy.held.length > 0)
  meanwhile?.(run)
  const end = await run.ended
  return {end, stoppedIn: (end.at - hung) / 1000}
}

/** The weights each ChangeResourceRecordSets carried, in order, from the calls the proxy saw. */
export function weightChanges(proxy: RecordingProxy): Array<Record<string, number>> {
  return proxy
    .of('ChangeResourceRecordSets')
    .filter((c) => c.status === 200)
    .map((c) => {
      const sets = [...c.body.matchAll(/<SetIdentifier>([^<]+)<\/SetIdentifier>[\s\S]*?<Weight>(\d+)<\/Weight>/g)]
      return Object.fromEntries(sets.map((m) => [m[1], Number(m[2])]))
    })
}

/** Most live runbooks differ only after the fixture's weighted record: `rest` is their other targets and steps. Writes NAME.yaml, returns its path. */
export function dnsRunbook(fx: Fixture, name: string, rest: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}\ntargets:\n  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}\n${rest}`,
  )
  return file
}

export const mutating = ['ChangeResourceRecordSets', 'RegisterTargets', 'DeregisterTargets', 'CreateRule', 'DeleteRule', 'ModifyTargetGroupAttributes']

/**
 * Before each test of the calling file: a recording proxy in front of moto, a zone with a weighted
 * record (mailbox 100, maintenance 0), a load balancer with 8 targets, a directory with a hook
 * that logs its calls, and the environment for a spawned sluice, `options.env` on top (the
 * lengths in ./lengths.js). Returns the current fixture.
 * `onEach` is handed each test's fixture, as it is set up: most files keep it in a variable of their own.
 *
 * The lease is sluice's own 30 s unless a file asks for the test lease: no test here waits one
 * out (a run killed on this host is judged dead by its pid at once), and a control waits for the
 * run to take it up for at most a lease, so with a 3 s lease a `sluice promote` here would answer
 * "has not taken it up yet" (not what it did) on a machine busy enough to delay the run 3 s.
 */
export function useLiveFixture(onEach?: (fx: Fixture) => void, options: {env?: Record<string, string>} = {}): () => Fixture {
  let fx: Fixture | undefined
  beforeEach(async () => {
    const proxy = new RecordingProxy(moto)
    await proxy.start()
    const name = uniqueName('mail')
    const zone = await seedZone(cfg, {zoneName: `${name}.example.com`, record: 'outlook', ttl: 1, sets: {mailbox: 100, maintenance: 0}})
    const lb = await seedLoadBalancer(cfg, {name, targets: 8})
    const dir = mkdtempSync(join(tmpdir(), 'sluice-live-'))
    const hookLog = join(dir, 'hooks.log')
    const hook = join(dir, 'hook.sh')
    writeFileSync(hook, `#!/bin/sh\necho "$1 $2 $3 $4 target=$SLUICE_TARGET_ID" >> '${hookLog}'\n`)
    chmodSync(hook, 0o755)
    fx = {
      proxy,
      dir,
      hook,
      hookLog,
      targets: {
        zoneId: zone.zoneId,
        record: zone.record,
        targetGroupArn: lb.targetGroupArn,
        listenerArn: lb.listenerArn,
        loadBalancer: lb.loadBalancerDimension,
      },
      env: {...awsTestEnv(proxy.endpoint), SLUICE_STATE: join(dir, 'state'), ...options.env},
    }
    onEach?.(fx)
  })
  afterEach(async () => {
    await fx?.proxy.stop()
  })
  return () => {
    if (!fx) throw new Error('the live fixture is set up before each test')
    return fx
  }
}
