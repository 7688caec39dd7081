import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {elsewhere} from '../helpers/elsewhere.js'
import {AwsOverTime} from '../aws/aws-over-time.js'
import {registeredTargets} from '../aws/readback.js'
import {seedS3State, uniqueName} from '../aws/seed.js'
import {seedInstanceGroup} from '../aws/seed-restarts.js'
import {spawnRun} from '../aws/spawned-run.js'
import {cfg, LEASE, moto, useStateFixture, type Fixture} from '../aws/state-fixture.js'
import {writeTimeline} from './timeline.js'

// A mailbox pool on EC2 whose servers are restarted through SSM Run Command, with the team's state
// in S3 (no DynamoDB table). alice freezes deploys and cycles the pool; her laptop's lid closes in
// the middle of a batch (SIGSTOP), with that batch's SSM commands still running on the instances.
// bob, on another host whose clock is three minutes behind, resumes her run once her lease has
// lapsed: he must wait for the commands she sent, not send them again, and finish the cycle.
// alice's lid opens (SIGCONT): her run is told it lost the lock, names who holds it, and changes
// nothing more, in AWS or in the journal. Every instance ends restarted and remediated exactly
// once and back in rotation, and the freeze is lifted.

let fx: Fixture
useStateFixture((current) => (fx = current))
let aws: AwsOverTime | undefined
afterEach(async () => {
  await aws?.stop()
  aws = undefined
})

type Entry = {type: string; operator?: string; message?: string; mutation?: {phase: string; kind: string; after?: unknown}}

describe('game day: restarts through SSM on an S3 team store, a laptop lid closed mid-batch', () => {
  it('bob finishes alice’s cycle without sending a command twice; alice, woken, is refused and changes nothing', async () => {
    aws = await AwsOverTime.install(fx.proxy, moto, {invocationSeconds: 2.5})
    const group = await seedInstanceGroup(cfg, {name: uniqueName('mailbox'), instances: 6})
    const store = {SLUICE_STATE: await seedS3State(cfg), SLUICE_LEASE_SECONDS: LEASE}
    const alice = {...fx.env, ...store, SLUICE_OPERATOR: 'alice'}
    const bob = elsewhere({...fx.env, ...store, SLUICE_OPERATOR: 'bob'})
    const pipeline = {...fx.env, ...store, SLUICE_OPERATOR: 'deploy-pipeline'}
    const frozen = async () => (await sluice(['freeze', 'check'], {env: pipeline})).code
    const file = join(fx.dir, 'mailbox-restart.yaml')
    writeFileSync(
      file,
      `name: mailbox-restart
targets:
  targetGroups: {mailbox: ${group.targetGroupArn}}
steps:
  - {action: freeze, reason: INC-5230 mailbox servers wedged}
  - action: cycle
    pool: mailbox
    batch: 2
    drainTimeout: 5
    healthyTimeout: 30
    restart: {ssm: {document: AWS-RunShellScript, parameters: {commands: ["systemctl restart mailbox"]}}, timeout: 30}
    remediate: {ssm: {document: AWS-RunShellScript, parameters: {commands: ["/opt/mailbox/reapply-network-config"]}}, timeout: 30}
  - {action: unfreeze}
`,
    )

    // alice starts; the deploy pipeline is held by her freeze.
    const run = spawnRun(['run', file, '--yes'], alice)
    const runId = await run.runId()
    await until(() => aws!.commands.length >= 1, 'the first restart command')
    expect(await frozen()).toBe(4)
    // Her lid closes as the second batch's restart commands go out: they run on without her.
    await until(() => aws!.commands.length >= 6, "the second batch's restarts")
    run.signal('SIGSTOP')
    let bobDone: {code: number | null; stderr: string}
    try {
      await new Promise((r) => setTimeout(r, Number(LEASE) * 1000 + 500))
      // bob sees the run and resumes it; her locks are his once her lease has lapsed.
      const seen = JSON.parse((await sluice(['journal', '--json'], {env: bob})).stdout).runs as Array<{runId: string; operator: string}>
      expect(seen).toEqual([expect.objectContaining({runId, operator: 'alice'})])
      bobDone = await sluice(['resume', runId, '--yes'], {env: bob})
    } finally {
      run.signal('SIGCONT')
    }
    expect(bobDone.code, bobDone.stderr).toBe(0)
    const sentByThen = aws.commands.length
    const registersByThen = fx.proxy.count('RegisterTargets')

    // alice's laptop wakes: refused (exit 4) naming the lost lock, and nothing more of hers reaches AWS.
    const woke = await run.ended
    expect(woke.code, woke.stderr).toBe(4)
    expect(woke.stderr).toMatch(/no longer holds the lock on \S+: its lease/)
    expect(woke.stderr).not.toMatch(/Unhandled|\n\s+at /)
    expect(aws.commands.length).toBe(sentByThen)
    expect(fx.proxy.count('RegisterTargets')).toBe(registersByThen)

    // Every instance restarted and remediated exactly once, and back in rotation; deploys may go on.
    const byInstance = (document: string) =>
      Object.fromEntries(
        group.instanceIds.map((id) => [id, aws!.commands.filter((c) => c.instanceIds.includes(id) && c.parameters.commands?.[0] === document).length]),
      )
    expect(byInstance('systemctl restart mailbox')).toEqual(Object.fromEntries(group.instanceIds.map((id) => [id, 1])))
    expect(byInstance('/opt/mailbox/reapply-network-config')).toEqual(Object.fromEntries(group.instanceIds.map((id) => [id, 1])))
    expect((await registeredTargets(cfg, group.targetGroupArn)).map((t) => t.split(':')[0]).sort()).toEqual([...group.instanceIds].sort())
    expect(await frozen()).toBe(0)

    // The journal says who did what: alice began, bob resumed and finished.
    const shown = JSON.parse((await sluice(['journal', runId, '--json'], {env: alice})).stdout) as {status: string; entries: Entry[]}
    expect(shown.status).toBe('completed')
    expect(shown.entries.find((e) => e.type === 'resume')).toMatchObject({operator: 'bob'})
    // bob waited for the two restarts alice had sent, rather than sending them again.
    const waited = shown.entries.filter((e) => e.type === 'progress' && /sent before the resume/.test(e.message ?? ''))
    expect(waited.map((e) => e.message)).toEqual([
      expect.stringMatching(/^i-\w+:80: sent before the resume; SSM command \S+ \(AWS-RunShellScript\) on i-\w+: Success, exit 0 \(waited \d+ s for it\)/),
      expect.stringMatching(/^i-\w+:80: sent before the resume; SSM command /),
    ])
    expect(JSON.parse((await sluice(['locks', '--json'], {env: bob})).stdout)).toEqual({locks: []})
    await writeTimeline('restarts-through-aws', 'Game day: restarts through SSM on an S3 team store, a laptop lid closed mid-batch', [runId], alice)
  }, 300_000)
})

/** Waits until `ready` holds, checking every 50 ms, for at most a minute. */
async function until(ready: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`never saw ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
