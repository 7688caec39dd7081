import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {AssumeRoleCommand, STSClient} from '@aws-sdk/client-sts'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, dnsRunbook, mutating, useLiveFixture, weights, type Fixture} from './live-fixture.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

/** moto's answer to GetCallerIdentity for its default credentials. */
const account = '123456789012'
const caller = 'arn:aws:sts::123456789012:user/moto'

const ramp = () => dnsRunbook(fx, 'ramp', 'steps:\n  - {action: ramp, set: maintenance, schedule: [10, 50], bake: 1}\n')

/** The entries of a run's journal in the fixture's local state. */
function journal(runId: string): Array<Record<string, unknown>> {
  return readFileSync(join(fx.env.SLUICE_STATE, 'runs', `${runId}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

const journals = () => (existsSync(join(fx.env.SLUICE_STATE, 'runs')) ? readdirSync(join(fx.env.SLUICE_STATE, 'runs')) : [])

/** STS's answer to credentials it does not know (query protocol, as AWS sends it). */
const invalidToken = {
  operation: 'GetCallerIdentity',
  times: 10,
  status: 403,
  contentType: 'text/xml',
  body: '<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error><RequestId>4e1e1a2c</RequestId></ErrorResponse>',
}

describe('the AWS account a live run acts in', () => {
  it('is named in plan --live (text and --json), in the confirmation, and in the journal run start', async () => {
    const file = ramp()
    const plan = await sluice(['plan', file, '--live'], {env: fx.env})
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toMatch(new RegExp(`Read from AWS account ${account} \\(us-east-1\\) at the endpoint http://127\\.0\\.0\\.1:\\d+ `))
    // ARNs are named by their name without --wide, as every ARN in a plan is.
    expect(plan.stdout).toContain(`  calls as user/moto (account ${account})`)
    expect(fx.proxy.count('GetCallerIdentity')).toBe(1)

    const json = await sluice(['plan', file, '--live', '--json'], {env: fx.env})
    expect(json.code, json.stderr).toBe(0)
    const live = (JSON.parse(json.stdout) as {live: {identity: unknown; now: string[]}}).live
    expect(live.identity).toEqual({account, arn: caller})
    expect(live.now[0]).toBe(`calls as ${caller} (account ${account})`)

    const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(run.code, run.stderr).toBe(0)
    // --yes answers the question, and says which question it answered.
    expect(run.stderr).toMatch(new RegExp(`approved by --yes: Apply ramp on AWS account ${account} \\(us-east-1\\) at the endpoint`))
    expect(run.stderr).toContain(`calls as ${caller} (account ${account})`)
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    const [start] = journal(runId)
    expect(start.type).toBe('run-start')
    expect(start.identity).toEqual({account, arn: caller})
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 120_000)

  it('credentials STS will not name stop the run before it reads, journals or changes anything (exit 1, naming the call)', async () => {
    fx.proxy.inject(invalidToken)
    const run = await sluice(['run', ramp(), '--yes'], {env: fx.env})
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toContain(
      "cannot tell which AWS account the run would act in: STS GetCallerIdentity on the run's credentials failed: InvalidClientTokenId: The security token included in the request is invalid.; nothing was read or changed",
    )
    // The call that failed was the first and only one.
    expect(fx.proxy.calls.map((c) => c.operation)).toEqual(['GetCallerIdentity'])
    for (const op of mutating) expect(fx.proxy.count(op), op).toBe(0)
    expect(journals()).toEqual([])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})

    const plan = await sluice(['plan', ramp(), '--live'], {env: fx.env})
    expect(plan.code, plan.stderr).toBe(1)
    expect(plan.stderr).toContain('STS GetCallerIdentity')
  }, 120_000)

  it("a rollback or resume with another account's credentials is refused (exit 4) naming both accounts, before any lock or read", async () => {
    const done = await sluice(['run', ramp(), '--yes', '--json'], {env: fx.env})
    expect(done.code, done.stderr).toBe(0)
    // A run held at an approval nobody answered within its 1 s: resumable.
    const file = dnsRunbook(
      fx,
      'held',
      'steps:\n  - {action: approve, message: Go on?, timeout: 1}\n  - {action: ramp, set: maintenance, schedule: [100], bake: 1}\n',
    )
    const held = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(held.code, held.stderr).toBe(4)
    // Credentials for account 222222222222, as a profile left in the shell would give.
    const sts = new STSClient(cfg)
    const role = await sts.send(new AssumeRoleCommand({RoleArn: 'arn:aws:iam::222222222222:role/elsewhere', RoleSessionName: 'ops'}))
    sts.destroy()
    const other = {
      ...fx.env,
      AWS_ACCESS_KEY_ID: role.Credentials!.AccessKeyId!,
      AWS_SECRET_ACCESS_KEY: role.Credentials!.SecretAccessKey!,
      AWS_SESSION_TOKEN: role.Credentials!.SessionToken!,
    }
    const calls = fx.proxy.calls.length
    for (const [command, out] of [
      ['rollback', done],
      ['resume', held],
    ] as const) {
      const runId = (JSON.parse(out.stdout) as {runId: string}).runId
      const refused = await sluice([command, runId, '--yes', ...(command === 'rollback' ? ['--ungated'] : [])], {env: other})
      expect(refused.code, refused.stderr).toBe(4)
      expect(refused.stderr).toContain(
        `run ${runId} was started in AWS account ${account} (as ${caller}), but these credentials are for account 222222222222 (arn:aws:sts::222222222222:assumed-role/elsewhere/ops). Nothing was changed`,
      )
    }
    // Each asked who it was and went no further.
    expect(fx.proxy.calls.slice(calls).map((c) => c.operation)).toEqual(['GetCallerIdentity', 'GetCallerIdentity'])
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
  }, 120_000)
})

describe('a live run whose targets are not on AWS', () => {
  it('asks STS nothing: a freeze needs no AWS credentials', async () => {
    const noCredentials = {...fx.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: ''}
    const frozen = await sluice(['freeze', '--reason', 'INC-7 no deploys'], {env: noCredentials})
    expect(frozen.code, frozen.stderr).toBe(0)
    expect((await sluice(['unfreeze'], {env: noCredentials})).code).toBe(0)
    expect(fx.proxy.calls).toEqual([])
  }, 120_000)
})

describe('credentials in an endpoint URL', () => {
  const secret = 'wJalrXUtnFEMIK7MDENGbPxRfiCYSECRET'

  it.each([
    ['--endpoint-url', (url: string) => ({args: ['--endpoint-url', url], env: {}})],
    ['AWS_ENDPOINT_URL', (url: string) => ({args: [], env: {AWS_ENDPOINT_URL: url}})],
    ['AWS_ENDPOINT_URL_ROUTE_53', (url: string) => ({args: [], env: {AWS_ENDPOINT_URL_ROUTE_53: url}})],
  ])(
    'in %s: refused with exit 2 naming it, the password never shown, nothing called or journalled',
    async (from, given) => {
      const host = new URL(fx.proxy.endpoint).host
      for (const url of [`http://AKIDEXAMPLE:${secret}@${host}`, `http://${host}/?X-Amz-Security-Token=${secret}`]) {
        const {args, env} = given(url)
        for (const command of [
          ['run', ramp(), '--yes', ...args],
          ['plan', ramp(), '--live', ...args],
        ]) {
          const out = await sluice(command, {env: {...fx.env, ...env}})
          expect(out.code, out.stderr).toBe(2)
          expect(out.stderr).toContain(`${from}: the endpoint http://${host} carries a `)
          expect(out.stderr).toContain(`give the endpoint as http://${host}`)
          expect(out.stdout + out.stderr).not.toContain(secret)
          expect(out.stdout + out.stderr).not.toContain('AKIDEXAMPLE')
        }
      }
      expect(fx.proxy.calls).toEqual([])
      expect(journals()).toEqual([])
    },
    120_000,
  )
})
