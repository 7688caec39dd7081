import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {DescribeRulesCommand, ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, dnsRunbook, groupAttributes, registered, seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

const failover = 'target_group_health.unhealthy_state_routing.minimum_healthy_targets.percentage'

/** Everything a run can change, read back from the API and the state directory. */
async function snapshot() {
  const elb = new ElasticLoadBalancingV2Client(cfg)
  const rules = await elb.send(new DescribeRulesCommand({ListenerArn: fx.targets.listenerArn}))
  elb.destroy()
  const freeze = join(fx.dir, 'state', 'freeze.json')
  return {
    weights: await weights(fx.targets.zoneId, fx.targets.record),
    rules: (rules.Rules ?? []).filter((r) => !r.IsDefault).map((r) => r.Priority),
    // AWS lists every attribute, routing failover as 'off' by default; moto omits it until it is set.
    attributes: {[failover]: 'off', ...(await groupAttributes(fx.targets.targetGroupArn))},
    registered: await registered(fx.targets.targetGroupArn),
    freeze: existsSync(freeze) ? readFileSync(freeze, 'utf8') : null,
  }
}

function runbook(name: string, steps: string): string {
  const targetsAndSteps = `  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  listener: ${fx.targets.listenerArn}
steps:
${steps}`
  return dnsRunbook(fx, name, targetsAndSteps)
}

/** The id of a completed live run of `file`: every rollback test starts from one. */
async function completedRun(file: string): Promise<string> {
  const run = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
  expect(run.code, run.stderr).toBe(0)
  return (JSON.parse(run.stdout) as {runId: string}).runId
}

describe("rollback undoes only a run's net effect", () => {
  it('after a completed live run of outlook-staged-return, everything reads back exactly as before the run', async () => {
    await seedMetrics(fx, 0)
    const before = await snapshot()
    const file = liveCopy('runbooks/outlook-staged-return.yaml', fx.targets, fx.dir, fx.hook)
    const runId = await completedRun(file)
    expect((await snapshot()).attributes).not.toEqual(before.attributes)
    const rolled = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr + rolled.stdout).toBe(0)
    expect(rolled.stdout).toContain('left alone: the run added the restriction on background-sync and lifted it itself')
    expect(rolled.stdout).toContain('left alone: the run set the freeze and lifted it itself')
    expect(await snapshot()).toEqual(before)
  }, 120_000)

  it('after freeze then unfreeze, rollback exits 0 and changes nothing', async () => {
    const file = runbook('drill', '  - {action: freeze, reason: drill}\n  - {action: unfreeze}\n')
    const rolled = await sluice(['rollback', await completedRun(file), '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout).toContain('changed nothing that needs undoing')
    expect(rolled.stdout).toContain('left alone: the run set the freeze and lifted it itself')
  }, 120_000)

  it('after restrict then lift, rollback leaves no rule', async () => {
    const file = runbook('restrict-lift', '  - {action: restrict, type: sync, paths: [/sync/*]}\n  - {action: lift, type: sync}\n')
    const rolled = await sluice(['rollback', await completedRun(file), '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr).toBe(0)
    expect((await snapshot()).rules).toEqual([])
    expect(fx.proxy.count('CreateRule')).toBe(1)
  }, 120_000)

  it('a change that landed but whose outcome was never recorded is settled from real state and undone', async () => {
    const runId = await completedRun(runbook('restrict', '  - {action: restrict, type: sync, paths: [/sync/*]}\n'))
    // What a kill between the API call and the journal's outcome leaves: the rule on the listener,
    // and a journal that ends at the change's intent.
    const path = join(fx.dir, 'state', 'runs', `${runId}.jsonl`)
    const lines = readFileSync(path, 'utf8').trim().split('\n')
    const intent = lines.findIndex((l) => l.includes('"phase":"intent"') && l.includes('"kind":"restrict"'))
    writeFileSync(path, `${lines.slice(0, intent + 1).join('\n')}\n`)
    expect((await snapshot()).rules).toHaveLength(1)
    const rolled = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stderr).toMatch(/found on rollback: restrict on .*: applied/)
    expect(rolled.stdout).toContain('undone: lift the restriction on sync')
    expect((await snapshot()).rules).toEqual([])
  }, 120_000)
})

describe('resume and hooks', () => {
  it('a cycle of 8 in batches of 25%, killed with a batch out and resumed, still uses batches of 2', async () => {
    const hook = join(fx.dir, 'slow.sh')
    writeFileSync(hook, '#!/bin/sh\nsleep 1\n', {mode: 0o755})
    const file = runbook('cycle', `  - {action: cycle, pool: mailbox, batch: 25%, restart: {command: [${hook}]}}\n`)
    const {killWhen, onlyRunId} = await import('./state-fixture.js')
    await killWhen(['run', file, '--yes'], /batch 2 of 4 \([^)]*\): restart/, fx.env)
    expect(await registered(fx.targets.targetGroupArn)).toHaveLength(6)
    const resumed = await sluice(['resume', await onlyRunId(fx.env), '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    const batches = fx.proxy.of('DeregisterTargets').map((c) => [...c.body.matchAll(/Targets\.member\.\d+\.Id=/g)].length)
    expect(batches).toEqual([2, 2, 2, 2])
    expect(await registered(fx.targets.targetGroupArn)).toHaveLength(8)
  }, 120_000)

  it('a hook that prints a secret: the secret appears nowhere in stdout, stderr or the journal', async () => {
    const hook = join(fx.dir, 'leaky.sh')
    writeFileSync(hook, '#!/bin/sh\necho "cannot log in as $AWS_ACCESS_KEY_ID with $AWS_SECRET_ACCESS_KEY" >&2\nexit 1\n', {mode: 0o755})
    const secret = 'not-a-real-key-but-secret'
    const file = runbook('leaky', `  - {action: cycle, pool: mailbox, batch: 1, restart: {command: [${hook}], env: [AWS_SECRET_ACCESS_KEY]}}\n`)
    // moto takes any secret; this one is long enough to be worth hiding.
    const env = {...fx.env, AWS_SECRET_ACCESS_KEY: secret}
    const run = await sluice(['run', file, '--yes'], {env})
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('[AWS_SECRET_ACCESS_KEY redacted]')
    const runs = join(fx.dir, 'state', 'runs')
    const journal = readdirSync(runs)
      .map((f) => readFileSync(join(runs, f), 'utf8'))
      .join('\n')
    expect(journal).toContain('[AWS_SECRET_ACCESS_KEY redacted]')
    for (const text of [run.stdout, run.stderr, journal]) expect(text).not.toContain(secret)
  }, 120_000)

  it('a hook handed DB_PASS, GITHUB_PAT and SLACK_WEBHOOK_URL prints them: no value appears in any output, --json or journal', async () => {
    const hook = join(fx.dir, 'chatty.sh')
    writeFileSync(hook, '#!/bin/sh\necho "db $DB_PASS pat $GITHUB_PAT hook $SLACK_WEBHOOK_URL" >&2\nexit 1\n', {mode: 0o755})
    const values = {DB_PASS: 'hunter2-marker', GITHUB_PAT: 'ghp_marker0123456789', SLACK_WEBHOOK_URL: 'https://hooks.slack.example/marker/T000/B000'}
    const file = runbook(
      'chatty',
      `  - {action: cycle, pool: mailbox, batch: 1, restart: {command: [${hook}], env: [DB_PASS, GITHUB_PAT, SLACK_WEBHOOK_URL]}}\n`,
    )
    const env = {...fx.env, ...values}
    const run = await sluice(['run', file, '--yes', '--json'], {env})
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('db [DB_PASS redacted] pat [GITHUB_PAT redacted] hook [SLACK_WEBHOOK_URL redacted]')
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    const runs = join(fx.dir, 'state', 'runs')
    const files = readdirSync(runs)
      .map((f) => readFileSync(join(runs, f), 'utf8'))
      .join('\n')
    const shown = await sluice(['journal', runId, '--json'], {env})
    const watched = await sluice(['watch', runId, '--json'], {env})
    for (const text of [run.stdout, run.stderr, files, shown.stdout, watched.stdout])
      for (const value of Object.values(values)) expect(text).not.toContain(value)
  }, 120_000)
})
