import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {spawnRun} from './spawned-run.js'
import {journalOf, killRampWhen, onlyRunId, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))

describe('one run per runbook at a time', () => {
  it('after kill -9, a fresh run is refused at once (exit 4) naming the dead run and its operator, changes nothing; --new-run starts afresh and says so', async () => {
    const file = await killRampWhen(fx, /blue at 30%/, {...fx.env, SLUICE_OPERATOR: 'frank'})
    const runId = await onlyRunId(fx.env)
    const changes = fx.proxy.count('ChangeResourceRecordSets')
    const started = Date.now()
    const again = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(again.code, again.stderr).toBe(4)
    expect(again.stderr).toContain(`Error: run ${runId} of ramp (by frank on `)
    expect(again.stderr).toMatch(
      /never finished: its process is dead \(pid \d+ gone\)\. `sluice resume \S+` continues it, `sluice rollback \S+` undoes what it changed .*--new-run starts afresh/,
    )
    // Refused before it waits for any lock, and before it reads or changes anything.
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(fx.proxy.count('ChangeResourceRecordSets')).toBe(changes)
    expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
    expect(JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs).toHaveLength(1)

    // Under --json the result is the JSON on stdout, and the progress stays on stderr.
    const fresh = await sluice(['run', file, '--yes', '--new-run', '--json'], {env: fx.env})
    expect(fresh.code, fresh.stderr).toBe(0)
    const result = JSON.parse(fresh.stdout) as {runId: string; outcome: string}
    expect(result.outcome).toBe('completed')
    expect(fresh.stderr.split('\n')[0]).toBe(`using local state ${fx.env.SLUICE_STATE} ($SLUICE_STATE)`)
    expect(fresh.stderr).toContain(`plan: 1 step, live run ${result.runId}`)
    expect(fresh.stderr).toMatch(/change weights .* → \{blue:100,green:0\}/)
    expect(fresh.stderr).toMatch(
      new RegExp(`--new-run: run ${runId} of ramp \\(by frank on \\S+\\) never finished and its process is dead \\(pid \\d+ gone\\); starting a new run`),
    )
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    const runs = JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs as Array<{runId: string; status: string}>
    const newer = runs.find((r) => r.runId !== runId)!
    expect(newer.status).toBe('completed')
    expect((await journalOf(newer.runId, fx.env)).entries[0]).toMatchObject({type: 'run-start', supersedes: runId})
  }, 120_000)

  it('a later run that ended having changed nothing (a --new-run not confirmed) does not hide the dead run before it', async () => {
    const file = await killRampWhen(fx, /blue at 30%/, fx.env)
    const dead = await onlyRunId(fx.env)
    // Run ids sort by their start to the second: the refused run must be the newer one.
    await new Promise((r) => setTimeout(r, 1100))
    const unconfirmed = await sluice(['run', file, '--new-run'], {env: fx.env})
    expect(unconfirmed.code, unconfirmed.stderr).toBe(4)
    expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
    // It ended, refused, with nothing changed: not a run that died half-way.
    const runs = JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs as Array<{runId: string; status: string}>
    expect(runs.filter((r) => r.runId !== dead).map((r) => r.status)).toEqual(['refused'])
    const changes = fx.proxy.count('ChangeResourceRecordSets')
    const plain = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(plain.code, plain.stderr).toBe(4)
    expect(plain.stderr).toContain(`Error: run ${dead} of ramp (by `)
    expect(plain.stderr).toContain('never finished')
    expect(fx.proxy.count('ChangeResourceRecordSets')).toBe(changes)
    expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
  }, 120_000)

  it('while a run of the runbook is running, another is refused at once, naming it, even with --new-run', async () => {
    // Held at an approval until the test aborts it, however long a busy machine takes to start
    // the two other runs (a 20 s bake once ran out first, and the run finished under them).
    const file = runbookFor(
      fx,
      'slow',
      `  - {action: ramp, set: blue, schedule: [10], bake: 1}
  - {action: approve, message: Go on to 100%?}
  - {action: ramp, set: blue, schedule: [100], bake: 1}
`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    await run.seen(/waiting for approval/)
    const runId = await onlyRunId(fx.env)
    for (const extra of [[], ['--new-run']]) {
      const second = await sluice(['run', file, '--yes', ...extra], {env: fx.env})
      expect(second.code, second.stderr).toBe(4)
      expect(second.stderr).toContain(`Error: run ${runId} of slow (by `)
      expect(second.stderr).toContain(`is running: one run per runbook at a time. \`sluice watch ${runId}\` follows it`)
    }
    expect((await sluice(['abort', runId], {env: fx.env})).code).toBe(0)
    expect((await run.ended).code).toBe(130)
  }, 120_000)
})
