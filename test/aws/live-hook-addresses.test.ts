import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {CreateSubnetCommand, CreateVpcCommand, EC2Client, RunInstancesCommand} from '@aws-sdk/client-ec2'
import {CreateTargetGroupCommand, ElasticLoadBalancingV2Client, RegisterTargetsCommand} from '@aws-sdk/client-elastic-load-balancing-v2'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, mutating, registered, useLiveFixture, type Fixture} from './live-fixture.js'
import {uniqueName} from './seed.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

/** An `instance` target group on port 8080 with `count` running EC2 instances registered, and their private addresses. */
async function instanceGroup(count: number): Promise<{arn: string; addresses: Record<string, string>}> {
  const ec2 = new EC2Client(cfg)
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const vpc = await ec2.send(new CreateVpcCommand({CidrBlock: '10.20.0.0/16'}))
    const subnet = await ec2.send(new CreateSubnetCommand({VpcId: vpc.Vpc!.VpcId!, CidrBlock: '10.20.1.0/24', AvailabilityZone: 'us-east-1a'}))
    const run = await ec2.send(new RunInstancesCommand({ImageId: 'ami-12c6146b', MinCount: count, MaxCount: count, SubnetId: subnet.Subnet!.SubnetId!}))
    const addresses = Object.fromEntries(run.Instances!.map((i) => [i.InstanceId!, i.PrivateIpAddress!]))
    const tg = await elb.send(
      new CreateTargetGroupCommand({Name: uniqueName('inst'), Protocol: 'HTTP', Port: 8080, VpcId: vpc.Vpc!.VpcId!, TargetType: 'instance'}),
    )
    const arn = tg.TargetGroups![0].TargetGroupArn!
    await elb.send(new RegisterTargetsCommand({TargetGroupArn: arn, Targets: Object.keys(addresses).map((Id) => ({Id, Port: 8080}))}))
    return {arn, addresses}
  } finally {
    ec2.destroy()
    elb.destroy()
  }
}

/** A `lambda` target group with one function registered: a target with no address and no port. */
async function lambdaGroup(): Promise<{arn: string; fn: string}> {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  try {
    const tg = await elb.send(new CreateTargetGroupCommand({Name: uniqueName('fn'), TargetType: 'lambda'}))
    const arn = tg.TargetGroups![0].TargetGroupArn!
    const fn = `arn:aws:lambda:us-east-1:123456789012:function:${uniqueName('mailbox-api')}`
    await elb.send(new RegisterTargetsCommand({TargetGroupArn: arn, Targets: [{Id: fn}]}))
    return {arn, fn}
  } finally {
    elb.destroy()
  }
}

/** A hook that logs its arguments and the SLUICE_TARGET_* variables, `-` for one that is unset. */
function recordingHook(): {hook: string; log: string} {
  const log = join(fx.dir, 'addresses.log')
  const hook = join(fx.dir, 'addresses.sh')
  writeFileSync(hook, `#!/bin/sh\necho "$* id=\${SLUICE_TARGET_ID-} ip=\${SLUICE_TARGET_IP--} port=\${SLUICE_TARGET_PORT--}" >> '${log}'\n`)
  chmodSync(hook, 0o755)
  return {hook, log}
}

/** A runbook cycling pool `web` one target at a time, with the hooks given as YAML flow sequences. */
function cycleRunbook(arn: string, hooks: {restart?: string; remediate?: string}): string {
  const file = join(fx.dir, 'cycle-web.yaml')
  writeFileSync(
    file,
    `name: cycle-web
targets:
  targetGroups: {web: ${arn}}
steps:
  - action: cycle
    pool: web
    batch: 1
    drainTimeout: 5
    healthyTimeout: 20
${hooks.restart ? `    restart: {command: ${hooks.restart}, timeout: 10}\n` : ''}${hooks.remediate ? `    remediate: {command: ${hooks.remediate}, timeout: 10}\n` : ''}`,
  )
  return file
}

describe('hooks get what they name or refuse', () => {
  it("{ip} of an instance target is the instance's private address, from EC2 DescribeInstances, which iam-policy allows", async () => {
    const {arn, addresses} = await instanceGroup(3)
    const {hook, log} = recordingHook()
    const file = cycleRunbook(arn, {restart: `[${hook}, restart, '{id}']`, remediate: `[${hook}, remediate, '{ip}', '{port}']`})

    const policy = await sluice(['iam-policy', file, '--json'], {env: fx.env})
    expect(policy.code, policy.stderr).toBe(0)
    const allowed = (JSON.parse(policy.stdout) as {Statement: Array<{Action: string[]}>}).Statement.flatMap((s) => s.Action)
    expect(allowed).toContain('ec2:DescribeInstances')
    const readOnly = await sluice(['iam-policy', file, '--read-only', '--json'], {env: fx.env})
    expect((JSON.parse(readOnly.stdout) as {Statement: Array<{Action: string[]}>}).Statement.flatMap((s) => s.Action)).toContain('ec2:DescribeInstances')

    const plan = await sluice(['plan', file, '--live'], {env: fx.env})
    expect(plan.code, plan.stderr).toBe(0)
    const run = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(run.code, run.stderr).toBe(0)

    const lines = readFileSync(log, 'utf8').trim().split('\n').sort()
    const expected = Object.entries(addresses).flatMap(([id, ip]) => [
      `remediate ${ip} 8080 id=${id} ip=${ip} port=8080`,
      // The restart names {id} only: the address is not looked up for it, and its variable is unset, never empty.
      `restart ${id} id=${id} ip=- port=8080`,
    ])
    expect(lines).toEqual(expected.sort())
    // Looked up once, in the plan's and the run's preflight each: an instance keeps its address.
    expect(fx.proxy.count('DescribeInstances')).toBe(2)
    expect((await registered(arn)).sort()).toEqual(
      Object.keys(addresses)
        .map((id) => `${id}:8080`)
        .sort(),
    )
  }, 120_000)

  it('{ip} and {port} on a Lambda target group: plan --live and the run refuse (exit 2) naming the placeholder, the hook and the target type; nothing runs or changes', async () => {
    const {arn, fn} = await lambdaGroup()
    const {hook, log} = recordingHook()
    const file = cycleRunbook(arn, {remediate: `[${hook}, '{ip}', '{port}']`})

    for (const command of [
      ['plan', file, '--live'],
      ['run', file, '--yes'],
    ]) {
      const out = await sluice(command, {env: fx.env})
      expect(out.code, out.stderr).toBe(2)
      expect(out.stderr).toContain(
        `cycle-web.yaml:10:26: steps[0].remediate.command: the remediate hook names {ip}, which 1 of the 1 targets of target group web (${arn}) cannot give: ${fn} is a Lambda function (a lambda target), which has no address.`,
      )
      expect(out.stderr).toContain(
        `the remediate hook names {port}, which 1 of the 1 targets of target group web (${arn}) cannot give: ${fn} is registered without a port`,
      )
      expect(out.stderr).toContain(
        'Nothing was changed: a hook never runs with {ip} empty. Name what these targets have instead ({id}, which every target has)',
      )
    }
    // The single-action command names the flag that gave the hook.
    const single = await sluice(['cycle', '--pool', 'web', '--target-group', `web=${arn}`, '--batch', '1', '--remediate', `${hook} {ip}`, '--yes'], {
      env: fx.env,
    })
    expect(single.code, single.stderr).toBe(2)
    expect(single.stderr).toContain(
      `--remediate: steps[0].remediate.command: the remediate hook names {ip}, which 1 of the 1 targets of target group web (${arn}) cannot give`,
    )
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
    expect(existsSync(log)).toBe(false)
    // The readback names a target by id:port, and a Lambda target has no port.
    expect(await registered(arn)).toEqual([`${fn}:undefined`])
  }, 120_000)
})
