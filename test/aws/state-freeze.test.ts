import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {uniqueName} from './seed.js'
import {runbook, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
const current = useStateFixture()
beforeEach(() => {
  fx = current()
})

describe('freeze and freeze check, in another process', () => {
  it.each([
    ['the local store', () => fx.env],
    ['the team store', () => ({...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
  ])('with %s', async (_name, env) => {
    const e = env()
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
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
    expect((await sluice(['freeze', '--reason', 'again'], {env: e})).code).toBe(0)
    expect((await sluice(['unfreeze', '--force'], {env: {...e, SLUICE_OPERATOR: 'mallory'}})).code).toBe(0)
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
  }, 120_000)
})

describe('a runbook\'s unfreeze step and another team\'s freeze', () => {
  it('leaves that freeze in place, says so, and the run completes (exit 0) with every change applied', async () => {
    const theirs = await sluice(['freeze', '--reason', 'payments release hold'], {env: {...fx.env, SLUICE_OPERATOR: 'payments-oncall'}})
    expect(theirs.code, theirs.stderr).toBe(0)
    const file = runbook(fx, 'freeze-ramp-unfreeze', `  - {action: freeze, reason: mailbox recovery}\n  - {action: ramp, set: blue, schedule: [100], bake: 1}\n  - {action: unfreeze}\n`)
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

describe('a team store that throttles', () => {
  it('says so on stderr with the retries and backoff it cost, and the freeze still lands', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('throttled')}`}
    // Create the table first, so only the freeze's own writes are throttled.
    expect((await sluice(['freeze', 'check'], {env})).code).toBe(0)
    fx.proxy.inject({
      operation: 'PutItem', times: 2, status: 400, contentType: 'application/x-amz-json-1.0',
      body: '{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}',
    })
    const frozen = await sluice(['freeze', '--reason', 'slow store'], {env})
    expect(frozen.code, frozen.stderr).toBe(0)
    expect(frozen.stderr).toMatch(/notice: dynamodb:\/\/\S+ is throttling or failing calls: 1 call \(the last PutItem\) needed 2 retries, \d+\.\d s of backoff in all; the run goes on, slower/)
    expect((await sluice(['freeze', 'check'], {env})).code).toBe(4)
  }, 120_000)
})
