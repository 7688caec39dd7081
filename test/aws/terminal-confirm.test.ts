import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {expectInOrder, inTerminal, spawnInTerminal} from '../helpers/terminal.js'
import {dnsRunbook, seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {awsTestEnv} from './moto.js'

/** The per-service endpoint variables the test environment sets beside AWS_ENDPOINT_URL, which the question counts. */
const perService = Object.keys(awsTestEnv('http://x')).filter((k) => k.startsWith('AWS_ENDPOINT_URL_')).length

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('a live run in a terminal shows its plan before it asks', () => {
  it('the plan, chained before → after across steps, and what is true now, come before the question', async () => {
    await seedMetrics(fx, 0)
    const targetsAndSteps = `  listener: ${fx.targets.listenerArn}
steps:
  - {action: ramp, set: maintenance, schedule: [10, 50], bake: 1}
  - {action: restrict, type: sync, paths: [/sync/*]}
  - {action: ramp, set: mailbox, schedule: [75, 100], bake: 1}
  - {action: lift, type: sync}
`
    const file = dnsRunbook(fx, 'two-ramps', targetsAndSteps)
    const {code, screen} = await inTerminal(['run', file], fx.env, 'n\r')
    expect(code, screen).toBe(4)
    // The run id comes with the plan, so a second operator can watch it.
    expect(screen).toMatch(/plan: 4 steps, live run \d{8}-\d{6}-[0-9a-f]{4}/)
    expectInOrder(screen, [
      'weights mailbox=100 maintenance=0 → mailbox=90 maintenance=10 → mailbox=50 maintenance=50, one change per step',
      'restricted: none → sync',
      // The second ramp starts where the first one ends, not where the record is now.
      'weights mailbox=50 maintenance=50 → mailbox=75 maintenance=25 → mailbox=100 maintenance=0, one change per step',
      'restricted: sync → none',
      'Now:',
      // Who the calls act as, from STS GetCallerIdentity (moto's account and user).
      'calls as arn:aws:sts::123456789012:user/moto (account 123456789012)',
      // The question names the account and region the run acts in (here from AWS_REGION; else the runbook's ARNs),
      // and the endpoint the calls go to when it is not AWS's own: here moto's, from the environment.
      `Apply two-ramps on AWS account 123456789012 (us-east-1) at the endpoint ${fx.proxy.endpoint} (AWS_ENDPOINT_URL and ${perService} more AWS_ENDPOINT_URL_* variables), not AWS's own?`,
    ])
    expect(fx.proxy.count('ChangeResourceRecordSets')).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
  }, 120_000)

  it('rollback shows what it will undo before it asks, in a terminal too', async () => {
    const steps = `steps:
  - {action: ramp, set: maintenance, schedule: [10, 50], bake: 1}
`
    const file = dnsRunbook(fx, 'ramp', steps)
    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr).toBe(0)
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    // The ramp has no gate: taken back knowingly (--ungated), else it is refused before anything is asked.
    const {code, screen} = await inTerminal(['rollback', runId, '--ungated'], fx.env, 'n\r')
    expect(code, screen).toBe(4)
    expect(screen.indexOf('1. set the weights of')).toBeGreaterThanOrEqual(0)
    expect(screen.indexOf('1. set the weights of')).toBeLessThan(screen.indexOf(`Roll back run ${runId}`))
    // The rollback's question names the account too.
    expectInOrder(screen, [
      `on AWS account 123456789012 (us-east-1) at the endpoint ${fx.proxy.endpoint}`,
      'calls as arn:aws:sts::123456789012:user/moto (account 123456789012)',
      `Roll back run ${runId} (ramp) in AWS account 123456789012?`,
    ])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 120_000)

  it('a terminal that hangs up at the rollback question: the rollback ends unanswered, nothing changed, its locks let go', async () => {
    const file = dnsRunbook(fx, 'ramp', `steps:\n  - {action: ramp, set: maintenance, schedule: [10, 50], bake: 1}\n`)
    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr).toBe(0)
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    const locks = join(fx.env.SLUICE_STATE, 'locks')
    const held = () => (existsSync(locks) ? readdirSync(locks) : [])
    const terminal = spawnInTerminal(['rollback', runId, '--ungated'], fx.env)
    for (let waited = 0; !/Roll back run .*\(y\/N\)/.test(terminal.screen()); waited += 100) {
      expect(waited, terminal.screen()).toBeLessThan(60_000)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // It asks holding the run's lock and the record's, their leases renewed while it waits.
    expect(held().length).toBe(2)
    // The SSH session drops: the terminal's other side goes away, and sluice is sent SIGHUP.
    terminal.kill('SIGKILL')
    await terminal.ended
    // Before, it waited at the question for ever (seen: 1 h 42 min, its leases still renewed), and
    // no other operator could take the record without breaking the locks.
    for (let waited = 0; held().length > 0; waited += 100) {
      expect(waited, `locks still held: ${held().join(', ')}`).toBeLessThan(60_000)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
    const journal = await sluice(['journal', runId, '--json'], {env: fx.env})
    expect(journal.stdout).not.toMatch(/rollback-start/)
  }, 180_000)

  it('resume shows only the steps left, chained from where the run stopped, before it asks; n changes nothing', async () => {
    const steps = `steps:
  - {action: ramp, set: maintenance, schedule: [10], bake: 1}
  - {action: approve, message: Go on to half?, timeout: 1}
  - {action: ramp, set: maintenance, schedule: [30, 50], bake: 1}
  - {action: ramp, set: mailbox, schedule: [100], bake: 1}
`
    const file = dnsRunbook(fx, 'two-stage', steps)
    // Nobody answers the approval within its 1 s, so the run holds there (exit 4), resumable at step 2.
    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr).toBe(4)
    const held = JSON.parse(run.stdout) as {runId: string; steps: Array<{status: string}>}
    expect(held.steps.map((s) => s.status)).toEqual(['done', 'refused', 'skipped', 'skipped'])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 90, maintenance: 10})
    const changes = fx.proxy.count('ChangeResourceRecordSets')
    expect(changes).toBe(1)

    const {code, screen} = await inTerminal(['resume', held.runId], fx.env, 'n\r')
    expect(code, screen).toBe(4)
    expect(screen).toContain(`plan: 3 steps, live run ${held.runId}`)
    // The finished ramp is not planned again; the plan keeps the runbook's step numbers.
    expect(screen).not.toMatch(/^\s*1\. /m)
    expect(screen).not.toMatch(/^\s*\d+\. Ramp maintenance: 10%/m)
    expectInOrder(screen, [
      '2. Approval: Go on to half?',
      // The next ramp starts from the weights the finished one left, and the last from where that one ends.
      '3. Ramp maintenance: 30% → 50%',
      'weights mailbox=90 maintenance=10 → mailbox=70 maintenance=30 → mailbox=50 maintenance=50, one change per step',
      '4. Ramp mailbox: 100%',
      'weights mailbox=50 maintenance=50 → mailbox=100 maintenance=0, one change per step',
      'Now:',
      'calls as arn:aws:sts::123456789012:user/moto (account 123456789012)',
      `Resume two-stage on AWS account 123456789012 (us-east-1) at the endpoint ${fx.proxy.endpoint} (AWS_ENDPOINT_URL and ${perService} more AWS_ENDPOINT_URL_* variables), not AWS's own?`,
    ])
    expect(screen).toContain('two-stage: not confirmed; nothing was changed')
    // Answering n changed nothing: no weight change after the question, the weights where the run left them.
    expect(fx.proxy.count('ChangeResourceRecordSets')).toBe(changes)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 90, maintenance: 10})
  }, 120_000)
})
