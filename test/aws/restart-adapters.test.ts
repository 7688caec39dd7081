import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {AwsOverTime} from './aws-over-time.js'
import {registeredTargets} from './readback.js'
import {uniqueName} from './seed.js'
import {seedEcsService, seedInstanceGroup} from './seed-restarts.js'
import {spawnRun} from './spawned-run.js'
import {cfg, journalOf, moto, useStateFixture, type Fixture} from './state-fixture.js'

// A cycle whose restarts go through AWS, through the CLI, on moto with AWS's behaviour over time
// played by the test proxy (aws-over-time.ts): SSM commands that take seconds and can fail, an
// instance's status checks `initializing` after a reboot, an ECS service that replaces a stopped
// task after a while and registers the new one `initial`, then `healthy`. Each is also killed
// (kill -9) in the middle of its restarts and resumed: no target is restarted twice, none is left
// out of rotation.

let fx: Fixture
useStateFixture((current) => (fx = current))
let aws: AwsOverTime | undefined
afterEach(async () => {
  await aws?.stop()
  aws = undefined
})

function cycleRunbook(name: string, targetGroupArn: string, step: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  targetGroups: {app: ${targetGroupArn}}
steps:
  - action: cycle
    pool: app
    drainTimeout: 5
    healthyTimeout: 30
${step}`,
  )
  return file
}

type Entry = {
  type: string
  message?: string
  found?: string
  mutation?: {phase: string; kind: string; ok?: boolean; before: unknown; after: unknown; note?: string; error?: string}
}
const outcomes = async (runId: string, kind: string) =>
  ((await journalOf(runId, fx.env)).entries as Entry[]).filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.kind === kind)

/** The run's progress lines that match. */
const progress = async (runId: string, matching: RegExp) =>
  ((await journalOf(runId, fx.env)).entries as Entry[]).filter((e) => e.type === 'progress' && matching.test(e.message ?? '')).map((e) => e.message)

/** Waits until `ready` holds, checking every 50 ms, for at most 30 s. */
async function until(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const registered = async (arn: string) => (await registeredTargets(cfg, arn)).map((t) => t.split(':')[0]).sort()

describe('ssm: a restart through SSM Run Command', () => {
  it('sends each instance its command once, waits for it, and journals its status and output; a failed one keeps its batch out', async () => {
    aws = await AwsOverTime.install(fx.proxy, moto, {invocationSeconds: 1.5})
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm'), instances: 4})
    const file = cycleRunbook(
      'ssm-cycle',
      group.targetGroupArn,
      `    batch: 2
    restart: {ssm: {document: AWS-RunShellScript, parameters: {commands: ["systemctl restart app"]}}, timeout: 20}
`,
    )
    const done = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(done.code, done.stderr).toBe(0)
    const runId = (JSON.parse(done.stdout) as {runId: string}).runId
    for (const id of group.instanceIds) expect(aws.sendCommands(id), `SendCommands to ${id}`).toBe(1)
    expect(aws.commands.map((c) => c.comment)).toEqual(group.instanceIds.map(() => `sluice ${runId} step 1 restart`))
    expect(aws.commands[0].parameters).toEqual({commands: ['systemctl restart app']})
    const notes = (await outcomes(runId, 'restart')).map((e) => e.mutation!.note)
    expect(notes).toHaveLength(4)
    // It waited for the invocation (1.5 s, emulated) rather than taking an answer at once; how much
    // longer a loaded machine took is not this test's to say (an upper bound failed CI at 3 s).
    for (const note of notes) {
      const waited = /^SSM command \S+ \(AWS-RunShellScript\) on i-\w+: Success, exit 0 after (\d+) s/.exec(note ?? '')
      expect(waited, note).not.toBeNull()
      expect(Number(waited![1])).toBeGreaterThanOrEqual(1)
    }
    expect(await registered(group.targetGroupArn)).toEqual([...group.instanceIds].sort())

    // One instance's command fails: its batch stays out of rotation, the cycle stops, and the error says why.
    aws.ssmEnds(group.instanceIds[1], {ends: 'Failed', responseCode: 3, stderr: 'unit app.service not found'})
    const failed = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(failed.code, failed.stderr).not.toBe(0)
    expect(failed.stderr + failed.stdout).toMatch(
      /restart failed for i-\w+:\d+: SSM command \S+ \(AWS-RunShellScript\) on i-\w+: Failed, exit 3 after \d+ s: unit app\.service not found/,
    )
    expect(await registered(group.targetGroupArn)).toEqual(group.instanceIds.slice(2).sort())
  }, 120_000)

  it('killed while its commands run, the resume waits for them and sends none again; every instance is back', async () => {
    aws = await AwsOverTime.install(fx.proxy, moto, {invocationSeconds: 3})
    const group = await seedInstanceGroup(cfg, {name: uniqueName('ssm-kill'), instances: 4})
    const file = cycleRunbook(
      'ssm-killed',
      group.targetGroupArn,
      `    batch: 2\n    restart: {ssm: {document: AWS-RunShellScript, parameters: {commands: [reboot-app]}}, timeout: 30}\n`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await until(() => aws!.commands.length === 2, 'the first batch sent its commands')
    run.signal('SIGKILL')
    expect((await run.ended).signal).toBe('SIGKILL')
    // Out of rotation, mid-restart.
    expect(await registered(group.targetGroupArn)).toEqual(group.instanceIds.slice(2).sort())

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    for (const id of group.instanceIds) expect(aws.sendCommands(id), `SendCommands to ${id}`).toBe(1)
    expect(await registered(group.targetGroupArn)).toEqual([...group.instanceIds].sort())
    // The resume found each command the killed run had sent and waited for it to end.
    const finished = await progress(runId, /sent before the resume/)
    expect(finished).toHaveLength(2)
    for (const line of finished)
      expect(line).toMatch(/^i-\w+:80: sent before the resume; SSM command \S+ \(AWS-RunShellScript\) on i-\w+: Success, exit 0 \(waited [0-4] s for it\)/)
  }, 120_000)
})

describe('ec2-reboot: a restart by rebooting the instance', () => {
  it('reboots each instance once and waits out its status checks; killed mid-reboot, the resume reboots nothing again', async () => {
    aws = await AwsOverTime.install(fx.proxy, moto, {rebootSeconds: 2.5})
    const group = await seedInstanceGroup(cfg, {name: uniqueName('reboot'), instances: 3})
    const file = cycleRunbook('reboot-cycle', group.targetGroupArn, `    batch: 1\n    restart: {ec2-reboot: {settle: 1}, timeout: 30}\n`)
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await until(() => aws!.reboots(group.instanceIds[0]) === 1, 'the first reboot')
    run.signal('SIGKILL')
    expect((await run.ended).signal).toBe('SIGKILL')

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    for (const id of group.instanceIds) expect(aws.reboots(id), `reboots of ${id}`).toBe(1)
    expect(await registered(group.targetGroupArn)).toEqual([...group.instanceIds].sort())
    // Each reboot was seen through its checks' initializing window, not taken as done at once.
    const notes = (await outcomes(runId, 'restart')).filter((e) => e.found === undefined).map((e) => e.mutation!.note)
    expect(notes).toHaveLength(2)
    for (const note of notes) expect(note).toMatch(/^EC2 instance i-\w+ rebooted: status checks ok after [3-9] s$/)
    expect(await progress(runId, /reboot begun/)).toEqual([
      expect.stringMatching(/^i-\w+:80: EC2 instance i-\w+ reboot begun before the resume \(not sent again\): status checks ok after [1-9] s$/),
    ])
  }, 120_000)
})

describe('ecs-replace: a restart by replacing the ECS task', () => {
  it("stops each task once, waits for the service's replacement to be healthy, and never registers the old address; killed and resumed, none is stopped twice", async () => {
    aws = await AwsOverTime.install(fx.proxy, moto)
    const service = await seedEcsService(cfg, {name: uniqueName('ecs'), tasks: 3, port: 8080})
    const emulated = aws.ecsService({cluster: service.clusterName, service: service.serviceName, replaceAfterSeconds: 2, healthyAfterSeconds: 2})
    const file = cycleRunbook(
      'ecs-cycle',
      service.targetGroupArn,
      `    batch: 1\n    restart: {ecs-replace: {cluster: ${service.clusterName}, service: ${service.serviceName}}, timeout: 60}\n`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await until(() => aws!.stops(service.taskIps[1]) === 1, 'the second task stopped')
    run.signal('SIGKILL')
    expect((await run.ended).signal).toBe('SIGKILL')
    // Its replacement is registered before the resume reads the group: listed there beside the task it replaces.
    await until(() => emulated.replacements.length === 2, "the second task's replacement registered")

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    for (const ip of service.taskIps) expect(aws.stops(ip), `stops of the task at ${ip}`).toBe(1)
    // The service is whole: three tasks, none of the old ones, every one healthy in the group.
    const now = await registeredTargets(cfg, service.targetGroupArn)
    expect(now).toHaveLength(3)
    for (const ip of service.taskIps)
      expect(
        now.some((t) => t.startsWith(`${ip}:`)),
        `${ip} registered again`,
      ).toBe(false)
    expect(aws.errors).toEqual([])
    // The service's new tasks are new: none of them was stopped by the resumed cycle.
    for (const replacement of emulated.replacements) expect(aws.stops(replacement.ip), `stops of the new task at ${replacement.ip}`).toBe(0)
    expect(emulated.replacements).toHaveLength(3)
    const intents = ((await journalOf(runId, fx.env)).entries as Entry[])
      .filter((e) => e.type === 'mutation' && e.mutation!.phase === 'intent')
      .map((e) => e.mutation!)
    expect(intents.map((m) => m.kind)).not.toContain('register')
    // One replacement per task, and the one the kill cut off finished by the resume, which says so.
    expect(
      intents.filter((m) => m.kind === 'replace').map((m) => [(m.before as string[])[0].split(':')[0], (m.after as {finishing?: boolean}).finishing ?? false]),
    ).toEqual([
      [service.taskIps[0], false],
      [service.taskIps[1], false],
      [service.taskIps[1], true],
      [service.taskIps[2], false],
    ])
    const finished = (await outcomes(runId, 'replace')).filter((e) => (e.mutation!.after as {finishing?: boolean}).finishing)
    expect(finished.map((e) => e.mutation!.note)).toEqual([
      expect.stringMatching(
        /^ECS service \S+: task at [\d.]+ already stopped by the run this one resumes; 3 of 3 tasks running and healthy in its target group after \d+ s/,
      ),
    ])
  }, 120_000)
})
