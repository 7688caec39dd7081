import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {elsewhere} from '../helpers/elsewhere.js'
import {ruleCount, useLiveFixture, weightChanges, weights, type Fixture} from '../aws/live-fixture.js'
import {uniqueName} from '../aws/seed.js'
import {spawnRun, type SpawnedRun} from '../aws/spawned-run.js'
import {MetricsServer, metricsTargets, requestsFollowWeights} from './metrics-server.js'
import {writeTimeline} from './timeline.js'

// Two operators and a newer run on one team store (DynamoDB, in moto): alice on this host, bob
// on another whose clock is three minutes behind, and the deploy pipeline. alice's mitigation dies
// half-way; bob, who cannot take over her runbook while it is unfinished, moves the weights with a
// runbook of his own; alice, back, rolls hers back: what bob changed since is his, and stays.

let fx: Fixture
useLiveFixture((current) => (fx = current))
const metrics = new MetricsServer()
beforeEach(async () => {
  await metrics.start()
  // A gate that names no pool reads the whole load balancer: `$pool` is empty.
  for (const pool of ['mailbox', 'maintenance', '']) {
    metrics.set('error-rate', pool, 0.1)
    metrics.set('request-rate', pool, 800)
  }
  // Each pool's requests follow the record's weights, so a ramp sees each change served (issue 49).
  requestsFollowWeights(metrics, ['mailbox', 'maintenance'], 800, () => weights(fx.targets.zoneId, fx.targets.record))
})
afterEach(() => metrics.stop())

function runbook(name: string, steps: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  listener: ${fx.targets.listenerArn}
${metricsTargets(metrics.url)}steps:
${steps}`,
  )
  return file
}

const gate = '{metric: error-rate, threshold: 2, window: 60, interval: 1, successes: 1}'

describe('game day: two operators and a newer run on one team store', () => {
  it('alice dies half-way; bob is refused her runbook, runs his own; alice rolls hers back around his', async () => {
    const store = {SLUICE_STATE: `dynamodb://${uniqueName('gameday')}`, SLUICE_LEASE_SECONDS: '3'}
    const alice = {...fx.env, ...store, SLUICE_OPERATOR: 'alice'}
    const bob = elsewhere({...fx.env, ...store, SLUICE_OPERATOR: 'bob'})
    const pipeline = {...fx.env, ...store, SLUICE_OPERATOR: 'deploy-pipeline'}
    const dns = () => weights(fx.targets.zoneId, fx.targets.record)
    const frozen = async () => (await sluice(['freeze', 'check'], {env: pipeline})).code
    const promote = async (run: SpawnedRun, runId: string, at: RegExp, next: RegExp) => {
      await run.seen(at)
      const promoted = await sluice(['promote', runId], {env: bob})
      expect(promoted.code, promoted.stderr + promoted.stdout).toBe(0)
      expect(promoted.stdout).toMatch(/the run took it up: ended the bake/)
      await run.seen(next)
    }

    // alice mitigates: freeze, turn background sync away, move traffic to maintenance in steps.
    const mitigate = runbook(
      'mitigate',
      `  - {action: freeze, reason: INC-5120 mailbox errors}
  - {action: restrict, type: background-sync, paths: ['/sync/*']}
  - {action: ramp, set: maintenance, schedule: [20, 50, 100], bake: 60, gate: ${gate}}
`,
    )
    const run = spawnRun(['run', mitigate, '--yes'], alice)
    const aliceRun = await run.runId()
    await run.seen(/maintenance at 20%/)
    expect(await frozen()).toBe(4)
    // bob, on the other host, sees it running and cannot start the same runbook beside it.
    const seen = JSON.parse((await sluice(['journal', '--json'], {env: bob})).stdout).runs as Array<{runId: string; status: string}>
    expect(seen).toEqual([expect.objectContaining({runId: aliceRun, status: 'running'})])
    const beside = await sluice(['run', mitigate, '--yes'], {env: bob})
    expect(beside.code, beside.stderr).toBe(4)
    expect(beside.stderr).toContain(`run ${aliceRun} of mitigate (by alice on `)
    expect(beside.stderr).toContain('is running: one run per runbook at a time')
    await promote(run, aliceRun, /maintenance at 20%/, /maintenance at 50%/)
    // alice's laptop dies mid-bake.
    run.signal('SIGKILL')
    await run.ended
    expect(await dns()).toEqual({mailbox: 50, maintenance: 50})

    // bob is refused her runbook (it never finished: resume or roll it back is hers to decide) …
    const again = await sluice(['run', mitigate, '--yes'], {env: bob})
    expect(again.code, again.stderr).toBe(4)
    expect(again.stderr).toContain(`run ${aliceRun} of mitigate (by alice on `)
    expect(again.stderr).toContain('never finished')
    // … and moves the weights with his own: its locks wait out her dead process's lease.
    const shift = runbook('shift', `  - {action: ramp, set: mailbox, schedule: [60], bake: 1, gate: ${gate}}\n`)
    const shifted = await sluice(['run', shift, '--yes', '--json'], {env: bob})
    expect(shifted.code, shifted.stderr).toBe(0)
    const bobRun = (JSON.parse(shifted.stdout) as {runId: string}).runId
    expect(await dns()).toEqual({mailbox: 60, maintenance: 40})
    expect(await frozen()).toBe(4)

    // alice is back and rolls her run back: the weights are bob's now, and stay; her restriction and freeze go.
    const before = weightChanges(fx.proxy).length
    const rolled = await sluice(['rollback', aliceRun, '--yes'], {env: alice})
    expect(rolled.code, rolled.stderr + rolled.stdout).toBe(0)
    expect(rolled.stdout).toContain(`run ${bobRun} (shift) has changed it since and left it as it is now`)
    expect(rolled.stdout).toMatch(/undone: lift the restriction on background-sync/)
    expect(rolled.stdout).toMatch(/undone: clear the change freeze the run set/)
    expect(weightChanges(fx.proxy)).toHaveLength(before)
    expect(await dns()).toEqual({mailbox: 60, maintenance: 40})
    expect(await ruleCount(fx.targets.listenerArn)).toBe(0)
    expect(await frozen()).toBe(0)

    // Seen from bob's host: both runs ended, nothing locked.
    const runs = JSON.parse((await sluice(['journal', '--json'], {env: bob})).stdout).runs as Array<{runId: string; status: string}>
    expect(Object.fromEntries(runs.map((r) => [r.runId, r.status]))).toEqual({[aliceRun]: 'rolled-back', [bobRun]: 'completed'})
    expect(JSON.parse((await sluice(['locks', '--json'], {env: bob})).stdout)).toMatchObject({locks: []})
    await writeTimeline('team-store', 'Game day: two operators and a newer run on one team store', [aliceRun, bobRun], alice)
  }, 300_000)
})
