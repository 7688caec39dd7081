import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {setWeightsByHand} from './by-hand.js'
import {cfg, seedMetrics, useLiveFixture, weightChanges, weights, type Fixture} from './live-fixture.js'
import {spawnRun} from './spawned-run.js'
import {journalOf, killWhen} from './state-fixture.js'

// The way back is a run: a rollback killed, held or aborted goes on only backwards; it holds the
// run's lock and answers controls from any terminal; it reads the world before it moves traffic.

let fx: Fixture
useLiveFixture((current) => (fx = current))

/**
 * maintenance 20 → 50 → 80 → 100 behind an error-rate gate on the load balancer, each step baked
 * `bake` s; the way back goes onto mailbox through the weights it passed (mailbox 50 → 80 → 100),
 * each step judged by that gate moved to mailbox. `gated: false` drops the gate.
 */
function ramp(bake: number, name = 'way-back', gated = true, schedule = [20, 50, 80, 100]): string {
  const file = join(fx.dir, `${name}.yaml`)
  const gate = gated ? `\n    gate: {metric: error-rate, threshold: 1, window: 60, interval: 1, successes: 1}` : ''
  writeFileSync(
    file,
    `name: ${name}
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - action: ramp
    set: maintenance
    schedule: [${schedule.join(', ')}]
    bake: ${bake}${gate}
`,
  )
  return file
}

const share = (w: Record<string, number>) => (100 * (w.mailbox ?? 0)) / ((w.mailbox ?? 0) + (w.maintenance ?? 0))

/** Every weights change from index `from` on moves mailbox's share up, never down. */
function onlyTowardsMailbox(from: number): number[] {
  const shares = weightChanges(fx.proxy).slice(from).map(share)
  for (let i = 1; i < shares.length; i++) expect(shares[i], `weights changes ${JSON.stringify(shares)}`).toBeGreaterThanOrEqual(shares[i - 1])
  return shares
}

async function runIdOf(env: Record<string, string>): Promise<string> {
  const runs = JSON.parse((await sluice(['journal', '--json'], {env})).stdout).runs as Array<{runId: string}>
  expect(runs).toHaveLength(1)
  return runs[0].runId
}

describe('a rollback that stopped goes on backwards, never forwards', () => {
  it('run killed at maintenance 80%, its rollback killed after one step back: resume finishes the rollback', async () => {
    await seedMetrics(fx, 0)
    const file = ramp(1)
    await killWhen(['run', file, '--yes'], /maintenance at 80%/, fx.env)
    const runId = await runIdOf(fx.env)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 20, maintenance: 80})
    const forwards = weightChanges(fx.proxy).length
    await killWhen(['rollback', runId, '--yes'], /way back: mailbox 50%/, fx.env)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
    // The journal says it is on its way back, not a run that stopped forwards.
    expect((await journalOf(runId, fx.env)).status).toBe('rolling-back')
    const listed = JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs as Array<{status: string; detail?: string}>
    expect(listed[0]).toMatchObject({status: 'dead'})
    expect(listed[0].detail).toMatch(/^rolling back; /)

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0)
    expect(resumed.stderr).toContain(`run ${runId} is partway through its rollback (rolling-back): resume goes on with the rollback, never forwards`)
    expect(resumed.stdout).toContain(`run ${runId} rolled back`)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
    expect(onlyTowardsMailbox(forwards)).toEqual([50, 80, 100])
    expect((await journalOf(runId, fx.env)).status).toBe('rolled-back')
    // Each change on the way back carries the time it was made, as a run's changes do (watch shows it).
    const lines = readFileSync(join(fx.env.SLUICE_STATE, 'runs', `${runId}.jsonl`), 'utf8')
      .trim()
      .split('\n')
    const back = lines.map((l) => JSON.parse(l) as {at: string; clock?: number; mutation?: {step: number}}).filter((e) => e.mutation?.step === -1)
    expect(back.length).toBeGreaterThanOrEqual(6)
    for (const e of back) expect(Math.abs(e.clock! * 1000 - Date.parse(e.at))).toBeLessThan(5000)
    // Done means done: a second resume has nothing to do.
    const again = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('was rolled back; there is nothing to resume')
  }, 120_000)

  it('an `abort --rollback` killed after one step back: resume finishes the rollback', async () => {
    await seedMetrics(fx, 0)
    const run = spawnRun(['run', ramp(60, 'way-back', true, [10, 20, 50, 80, 100]), '--yes'], fx.env)
    const runId = await run.runId()
    await advance(run, runId, /maintenance at 10%/, /maintenance at 20%/)
    await advance(run, runId, /maintenance at 20%/, /maintenance at 50%/)
    const forwards = weightChanges(fx.proxy).length
    // The abort puts the ramp back to its last good weights (maintenance 20%), then the rollback starts back from there.
    await killWhen(['abort', runId, '--rollback', '--yes'], /way back: mailbox 90%/, fx.env)
    expect((await run.ended).code).toBe(130)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 90, maintenance: 10})
    expect((await journalOf(runId, fx.env)).status).toBe('rolling-back')
    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
    expect(onlyTowardsMailbox(forwards)).toEqual([80, 90, 100])
  }, 120_000)
})

/** Ends a bake with a promote from another terminal once `at` shows, and waits for `next`. */
async function advance(run: ReturnType<typeof spawnRun>, runId: string, at: RegExp, next: RegExp): Promise<void> {
  await run.seen(at)
  const promoted = await sluice(['promote', runId], {env: fx.env})
  expect(promoted.code, promoted.stderr + promoted.stdout).toBe(0)
  expect(promoted.stdout).toMatch(/the run took it up: ended the bake of \S+( \d+)? at .* early/)
  await run.seen(next)
}

describe('a rollback is a run: journal, pause, promote, abort and watch work on it from any terminal', () => {
  it('listed as running (rolling back); paused, continued, promoted past a bake, aborted, watched to its end; resumed to the end', async () => {
    await seedMetrics(fx, 0)
    const file = ramp(60, 'way-back', true, [10, 20, 50, 80, 100])
    const forward = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await forward.runId()
    await advance(forward, runId, /maintenance at 10%/, /maintenance at 20%/)
    await advance(forward, runId, /maintenance at 20%/, /maintenance at 50%/)
    await advance(forward, runId, /maintenance at 50%/, /maintenance at 80%/)
    forward.signal('SIGKILL')
    await forward.ended
    const back = spawnRun(['rollback', runId, '--yes'], fx.env)
    await back.seen(/way back: mailbox 50%/)
    const watch = spawnRun(['watch', runId], fx.env)

    const listed = JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs as Array<{status: string; detail?: string}>
    expect(listed[0]).toMatchObject({status: 'running', detail: 'rolling back'})

    const paused = await sluice(['pause', runId], {env: fx.env})
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.stdout).toContain('the run took it up: paused')
    await back.seen(/pause by .*: paused/)
    const continued = await sluice(['promote', runId], {env: fx.env})
    expect(continued.code, continued.stderr).toBe(0)
    expect(continued.stdout).toContain('the run took it up: continued from the pause')
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
    await advance(back, runId, /way back: mailbox 50%/, /way back: mailbox 80%/)

    const aborted = await sluice(['abort', runId], {env: fx.env})
    expect(aborted.code, aborted.stderr).toBe(0)
    expect(aborted.stdout).toContain('the run took it up: aborting')
    const end = await back.ended
    expect(end.code, end.stderr).toBe(130)
    expect(end.stdout).toContain(`rollback of run ${runId} stopped`)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 80, maintenance: 20})
    // The watch followed the way back to its end, and ended as it did.
    const watched = await watch.ended
    expect(watched.stdout + watched.stderr).toMatch(/way back: mailbox 80%/)
    expect(watched.code, watched.stderr).toBe(130)
    expect((await journalOf(runId, fx.env)).status).toBe('rollback-held')

    // Resumed, it goes on back; its last bake is ended from another terminal too.
    const resumed = spawnRun(['resume', runId, '--yes'], fx.env)
    await advance(resumed, runId, /way back: mailbox 90%/, /way back: mailbox 100%/)
    const done = await resumed.ended
    expect(done.code, done.stderr + done.stdout).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
    expect((await journalOf(runId, fx.env)).status).toBe('rolled-back')
  }, 120_000)
})

describe('rollback reads the world before it moves traffic', () => {
  it('after a hand change to 50/50: refused (exit 4) naming the difference, nothing changed; --from-live goes from 50% only towards mailbox', async () => {
    await seedMetrics(fx, 0)
    const forward = await sluice(['run', ramp(1), '--yes', '--json'], {env: fx.env})
    const runId = (JSON.parse(forward.stdout) as {runId: string}).runId
    await setWeightsByHand(cfg, fx.targets.zoneId, fx.targets.record, {mailbox: 50, maintenance: 50})
    const before = weightChanges(fx.proxy).length
    const refused = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(refused.code, refused.stderr + refused.stdout).toBe(4)
    expect(refused.stdout).toMatch(/not as the run left it: the weights of .*: the journal says mailbox=0 maintenance=100; now mailbox=50 maintenance=50/)
    expect(refused.stdout).toContain(`--from-live`)
    expect(weightChanges(fx.proxy)).toHaveLength(before)

    const fromLive = await sluice(['rollback', runId, '--yes', '--from-live'], {env: fx.env})
    expect(fromLive.code, fromLive.stderr + fromLive.stdout).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})
    const shares = onlyTowardsMailbox(before)
    expect(shares[0]).toBeGreaterThan(50)
    // Each change's before is what was there, not what the journal said.
    const journal = await journalOf(runId, fx.env)
    const back = journal.entries.filter((e) => e.type === 'mutation' && e.mutation?.phase === 'intent' && (e.mutation as {step?: number}).step === -1)
    expect(back[0].mutation!.before).toEqual({mailbox: 50, maintenance: 50})
  }, 120_000)

  it('rolling back an older run leaves what a newer run changed since, naming that run', async () => {
    await seedMetrics(fx, 0)
    const older = await sluice(['run', ramp(1), '--yes', '--json'], {env: fx.env})
    const olderId = (JSON.parse(older.stdout) as {runId: string}).runId
    await new Promise((r) => setTimeout(r, 1100))
    const file = join(fx.dir, 'newer.yaml')
    writeFileSync(
      file,
      `name: newer
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
steps:
  - {action: ramp, set: mailbox, schedule: [40], bake: 1}
`,
    )
    const newer = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(newer.code, newer.stderr).toBe(0)
    const newerId = (JSON.parse(newer.stdout) as {runId: string}).runId
    const before = weightChanges(fx.proxy).length
    const rolled = await sluice(['rollback', olderId, '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr + rolled.stdout).toBe(0)
    expect(rolled.stdout).toContain(`run ${newerId} (newer) has changed it since and left it as it is now`)
    expect(weightChanges(fx.proxy)).toHaveLength(before)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 40, maintenance: 60})
  }, 120_000)
})

describe('the way back is gated', () => {
  it('weights moved by steps with no gate: refused (exit 4) saying why, nothing changed; --ungated takes them back', async () => {
    const forward = await sluice(['run', ramp(1, 'ungated', false), '--yes', '--json'], {env: fx.env})
    const runId = (JSON.parse(forward.stdout) as {runId: string}).runId
    const before = weightChanges(fx.proxy).length
    const refused = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(refused.code, refused.stderr + refused.stdout).toBe(4)
    expect(refused.stdout).toContain('would move traffic back with no gate to judge it')
    expect(weightChanges(fx.proxy)).toHaveLength(before)
    const ungated = await sluice(['rollback', runId, '--yes', '--ungated'], {env: fx.env})
    expect(ungated.code, ungated.stderr + ungated.stdout).toBe(0)
    expect(onlyTowardsMailbox(before)).toEqual([20, 50, 80, 100])
  }, 120_000)
})
