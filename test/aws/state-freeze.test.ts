import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {seedS3State, uniqueName} from './seed.js'
import {cfg, killWhen, onlyRunId, ramp, runbook, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))

describe('freeze and freeze check, one command after another', () => {
  it.each([
    ['the local store', async () => fx.env],
    ['the DynamoDB team store', async () => ({...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
    ['the S3 team store', async () => ({...fx.env, SLUICE_STATE: await seedS3State(cfg)})],
  ])(
    'with %s',
    async (_name, env) => {
      const e = await env()
      expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
      const frozen = await sluice(['freeze', '--reason', 'mailbox recovery'], {env: e})
      expect(frozen.code, frozen.stderr).toBe(0)
      const check = await sluice(['freeze', 'check', '--json'], {env: e})
      expect(check.code).toBe(4)
      expect(JSON.parse(check.stdout)).toMatchObject({frozen: true, freeze: {reason: 'mailbox recovery'}})
      // Another operator may not lift it without --force; the one who set it may.
      const other = await sluice(['unfreeze'], {env: {...e, SLUICE_OPERATOR: 'mallory'}})
      expect(other.code).toBe(4)
      expect(other.stderr).toContain("the freeze in place is not this run's to lift")
      const own = await sluice(['unfreeze'], {env: e})
      expect(own.code, own.stderr).toBe(0)
      // Its own: not told, in the plan or anywhere, that it is another's.
      expect(own.stderr).not.toContain("not this run's")
      expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
      expect((await sluice(['freeze', '--reason', 'again'], {env: e})).code).toBe(0)
      expect((await sluice(['unfreeze', '--force'], {env: {...e, SLUICE_OPERATOR: 'mallory'}})).code).toBe(0)
      expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
    },
    120_000,
  )
})

describe("a runbook's unfreeze step and another team's freeze", () => {
  it('leaves that freeze in place, says so, and the run completes (exit 0) with every change applied', async () => {
    const theirs = await sluice(['freeze', '--reason', 'payments release hold'], {env: {...fx.env, SLUICE_OPERATOR: 'payments-oncall'}})
    expect(theirs.code, theirs.stderr).toBe(0)
    const file = runbook(
      fx,
      'freeze-ramp-unfreeze',
      `  - {action: freeze, reason: mailbox recovery}\n  - {action: ramp, set: blue, schedule: [100], bake: 1}\n  - {action: unfreeze}\n`,
    )
    const run = await sluice(['run', file, '--yes'], {env: {...fx.env, SLUICE_OPERATOR: 'alice'}})
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/already frozen since \S+ by payments-oncall: payments release hold/)
    expect(run.stderr).toMatch(/left in place; this run set none of its own to lift/)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    const check = await sluice(['freeze', 'check', '--json'], {env: fx.env})
    expect(check.code).toBe(4)
    expect(JSON.parse(check.stdout)).toMatchObject({freeze: {by: 'payments-oncall', reason: 'payments release hold'}})
  }, 120_000)
})

describe('a run killed between its freeze and its unfreeze, then resumed', () => {
  it("lifts its own freeze without calling it another's; a different run is still told the freeze is not its own, and leaves it", async () => {
    const file = runbook(fx, 'freeze-ramp-unfreeze', `  - {action: freeze, reason: mailbox recovery}\n${ramp}  - {action: unfreeze}\n`)
    await killWhen(['run', file, '--yes'], /blue at 30%/, fx.env)
    const runId = await onlyRunId(fx.env)
    expect((await sluice(['freeze', 'check'], {env: fx.env})).code).toBe(4)

    // Another run, with an unfreeze step of its own: the freeze is that run's, not this one's.
    const other = await sluice(['run', runbook(fx, 'just-unfreeze', `  - {action: unfreeze}\n`), '--yes'], {env: fx.env})
    expect(other.code, other.stderr).toBe(0)
    expect(other.stderr).toMatch(new RegExp(`the freeze in place is not this run's \\(frozen since \\S+ by \\S+ in run ${runId}: mailbox recovery\\)`))
    expect(other.stderr).toContain('left in place; this run set none of its own to lift')
    expect((await sluice(['freeze', 'check'], {env: fx.env})).code).toBe(4)

    // The run itself, resumed: the freeze is its own, lifted without a word against it.
    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).not.toContain("not this run's")
    expect(resumed.stderr).toMatch(new RegExp(`unfrozen \\(was frozen since \\S+ by \\S+ in run ${runId}: mailbox recovery\\)`))
    expect((await sluice(['freeze', 'check'], {env: fx.env})).code).toBe(0)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
  }, 120_000)
})

const dynamoThrottling = {
  status: 400,
  contentType: 'application/x-amz-json-1.0',
  body: '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}',
}

/** The retry mode an AWS SDK v3 call reports in its user agent's feature list (m/…: E standard, F adaptive). */
function retryModeOf(userAgent: string): string {
  const features = /(?:^| )m\/([^ ]+)/.exec(userAgent)?.[1].split(',') ?? []
  return features.includes('F') ? 'adaptive' : features.includes('E') ? 'standard' : 'unsaid'
}

describe('a team store that throttles', () => {
  it('says so on stderr with the retries and backoff it cost, and the freeze still lands', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('throttled')}`}
    // Create the table first, so only the freeze's own writes are throttled.
    expect((await sluice(['freeze', 'check'], {env})).code).toBe(0)
    fx.proxy.inject({...dynamoThrottling, operation: 'PutItem', times: 2})
    const frozen = await sluice(['freeze', '--reason', 'slow store'], {env})
    expect(frozen.code, frozen.stderr).toBe(0)
    expect(frozen.stderr).toMatch(
      /notice: dynamodb:\/\/\S+ is throttling or failing calls: 1 call \(the last PutItem\) needed 2 retries, \d+\.\d s of backoff in all; the run goes on, slower/,
    )
    expect((await sluice(['freeze', 'check'], {env})).code).toBe(4)
  }, 120_000)

  it('with 30% of its calls throttled, a ramp still completes, and the client is not the one that slows itself', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('throttled')}`}
    expect((await sluice(['freeze', 'check'], {env})).code).toBe(0)
    fx.proxy.inject({...dynamoThrottling, operation: '*', service: 'dynamodb', times: Infinity, share: 0.3})
    const file = runbook(fx, 'throttled-ramp', `  - {action: ramp, set: blue, schedule: [20, 60, 100], bake: 2}\n`)
    const run = await sluice(['run', file, '--yes'], {env})
    expect(run.code, run.stderr).toBe(0)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    expect(run.stderr).toMatch(/notice: dynamodb:\/\/\S+ is throttling or failing calls: \d+ calls? \(the last \w+\) needed \d+ retr(y|ies)/)
    const calls = fx.proxy.calls.filter((c) => c.service === 'dynamodb')
    expect(calls.filter((c) => c.status === 400).length).toBeGreaterThan(0)
    // Standard retries for the store, whose adaptive rate limiter held every later call back after
    // one throttle; the control-plane APIs keep adaptive.
    expect(calls.filter((c) => retryModeOf(c.userAgent) !== 'standard')).toEqual([])
    expect(fx.proxy.of('ChangeResourceRecordSets').map((c) => retryModeOf(c.userAgent))).toEqual(['adaptive', 'adaptive', 'adaptive'])
  }, 180_000)
})
