import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {spawnRun, when} from './spawned-run.js'
import {journalOf, registeredOf, runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))

// Issue 47: a target that falls out of rotation while a cycle runs (the last server a collapsing
// pool's traffic reached, still working off its queue) goes into the next batch, through ELBv2's
// own DescribeTargetHealth. Before, batches were fixed when the cycle began: the fallen target was
// left to a later batch, filled the disruption budget, and the next batch waited for it until the
// cycle failed.
describe('a cycle against ELBv2 (moto, checks failed by the proxy)', () => {
  it('reads the target group before every batch: a target that fails its checks mid-cycle is restarted in the next batch, within the budget', async () => {
    const before = await registeredOf(fx)
    expect(before.length).toBe(8)
    const ids = before.map((t) => t.split(':')[0])
    const victim = ids.at(-1)!
    const log = join(fx.dir, 'restarts.log')
    const hook = join(fx.dir, 'restart.sh')
    writeFileSync(hook, `#!/bin/sh\necho "$SLUICE_TARGET_ID" >> '${log}'\nsleep 1\n`)
    chmodSync(hook, 0o755)
    const file = runbookFor(
      fx,
      'cycle-reread',
      `  - {action: cycle, pool: blue, batch: 2, budget: 2, healthyTimeout: 15, bake: 1, restart: {command: [${hook}]}}\n`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    // While the first batch restarts, the last target starts failing its checks.
    await run.seen(/batch 1 of 4 \([^)]*\): restart/)
    fx.proxy.failChecks(fx.targetGroupArn, [victim])
    // Its restart (in the batch after, as the hook's log shows) is what brings it back.
    await when(() => existsSync(log) && readFileSync(log, 'utf8').split('\n').includes(victim))
    fx.proxy.failChecks(fx.targetGroupArn, [])
    const ended = await run.ended
    expect(ended.code, ended.stderr).toBe(0)
    expect(ended.stderr).toMatch(/done cycled 8 targets in 4 batches/)

    const restarted = readFileSync(log, 'utf8').trim().split('\n')
    expect(restarted).toHaveLength(8)
    expect(new Set(restarted)).toEqual(new Set(ids))
    // The fallen target went into batch 2 (restarts 3 and 4), not the last batch it was listed in.
    expect(restarted.slice(2, 4)).toContain(victim)
    expect(restarted.slice(0, 2)).not.toContain(victim)
    // Never more than the budget out: each deregistration took two, the fallen target among the second.
    const journal = await journalOf(runId, fx.env)
    const outs = journal.entries
      .filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.ok && e.mutation!.kind === 'deregister')
      .map((e) => (e.mutation!.before as string[]).map((t) => t.split(':')[0]))
    expect(outs.map((o) => o.length)).toEqual([2, 2, 2, 2])
    expect(outs[1]).toContain(victim)
    expect(await registeredOf(fx)).toEqual(before)
  }, 120_000)
})
