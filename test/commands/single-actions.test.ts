import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {isolatedEnv, type CliResult} from '../helpers/cli.js'
import {commands, cycle, gateThresholdWithoutMetric, ramp} from '../helpers/single-action-cases.js'
import {sluiceInProcess} from '../helpers/command.js'
import {expectBadInput, expectCompleted} from '../helpers/expect-cli.js'

// As the spawned tests run them: no AWS credentials or config, and a state directory of its own;
// put back afterwards, since the unit project shares its workers between files.
const isolated = isolatedEnv('actions')
const savedEnv = Object.fromEntries(Object.keys(isolated).map((k) => [k, process.env[k]]))
beforeAll(() => {
  Object.assign(process.env, isolated)
})
afterAll(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

/** A single-action command in this process, its exit code where a spawned one has its process's. */
async function sluice(args: string[]): Promise<CliResult> {
  const {exit, stdout, stderr} = await sluiceInProcess(args)
  return {code: exit, stdout, stderr}
}

/** The run's --json report, once it exits 0: the tests below judge the report, not the exit. */
async function completedJson(args: string[]): Promise<RunJson> {
  const result = await sluice(args)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as RunJson
}

describe('the single-action commands (in process)', () => {
  it.each(commands)('$name --dry-run rehearses the step and exits 0', async ({args, done, more}) => {
    const rehearsed = await sluice([...args, '--dry-run'])
    expectCompleted(rehearsed, done)
    more?.(rehearsed)
  })

  it.each(commands.filter((c) => c.live))(
    '$name live without the flags naming what it changes exits 2 and says which flags, or --dry-run',
    async ({name, args, live}) => {
      // Less the rehearsal's --scenario, which a live run refuses on its own.
      const liveArgs = args.filter((a, k, all) => a !== '--scenario' && all[k - 1] !== '--scenario')
      expectBadInput(
        await sluice(liveArgs),
        new RegExp(
          `^Error: sluice ${name}: live, it needs ${live!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to name what it changes; or rehearse with --dry-run$`,
        ),
      )
    },
  )

  it('ramp --json: completed, every percentage of the schedule passed its gate, west ends at 50%', async () => {
    const json = await sluice([...ramp, '--dry-run', '--json'])
    expect(json.code, json.stderr).toBe(0)
    const run = JSON.parse(json.stdout) as RunJson
    expect(run.mode).toBe('rehearsal')
    expect(run.outcome).toBe('completed')
    expect(run.exitCode).toBe(0)
    expect(run.steps).toHaveLength(1)
    expect(run.steps[0].action).toBe('ramp')
    expect(run.steps[0].status).toBe('done')
    expect(run.steps[0].message).toBe('west at 50%')
    const contexts = [...new Set(run.steps[0].verdicts.map((v) => v.context))]
    expect(contexts).toEqual(['west 1%', 'west 5%', 'west 25%', 'west 50%'])
    for (const v of run.steps[0].verdicts) {
      expect(v.outcome, v.context).toBe('pass')
      expect(v.threshold).toBe(1)
    }
    expect(json.stderr).not.toMatch(/^\[\+\d\d:\d\d\] \[step /m) // --json draws no progress
  })

  it('cycle --json: every batch went round and the step is done', async () => {
    const run = await completedJson([...cycle, '--dry-run', '--json'])
    expect(run.outcome).toBe('completed')
    expect(run.exitCode).toBe(0)
    expect(run.steps[0].action).toBe('cycle')
    expect(run.steps[0].status).toBe('done')
    expect(run.steps[0].message).toBe('cycled 20 targets in 10 batches')
  })

  it("restrict reports the share of demand turned away: no more than the restricted type's share", async () => {
    // outlook-recovery: background-sync is 20% of demand (types: interactive 0.8, background-sync 0.2),
    // and clients try twice. Every background-sync request is turned away: 20% of demand, not more.
    const run = await completedJson(['restrict', '--type', 'background-sync', '--path', '/sync/*', '--scenario', 'outlook-recovery', '--dry-run', '--json'])
    expect(run.report!.restrictedAtEnd).toEqual(['background-sync'])
    expect(run.report!.restrictedPercentAtEnd).toBeCloseTo(20, 0)
  })

  it("restrict on a scenario whose clients try once reports the type's share (cafe-2024: 10%)", async () => {
    const run = await completedJson(['restrict', '--type', 'decommissioned-lookup', '--path', '/lookup/*', '--scenario', 'cafe-2024', '--dry-run', '--json'])
    expect(run.report!.restrictedAtEnd).toEqual(['decommissioned-lookup'])
    expect(run.report!.restrictedPercentAtEnd).toBeCloseTo(10, 0)
  })
})

describe('bad flags: exit 2 and one line naming the flag (in process)', () => {
  it('--schedule that is not a list of numbers', async () => {
    const result = await sluice(['ramp', '--set', 'west', '--schedule', '1,five', '--bake', '60', '--scenario', 'two-regions', '--dry-run'])
    expectBadInput(result, /^Error: --schedule: expected comma-separated percentages/)
  })

  it("--bake under the TTL of the scenario's record", async () => {
    // two-regions: dns.ttl 60.
    const result = await sluice(['ramp', '--set', 'west', '--schedule', '1,5,50', '--bake', '30', '--scenario', 'two-regions', '--dry-run'])
    expectBadInput(result, /^Error: --bake: .*bake of 30 s is shorter than the record's TTL of 60 s/)
  })

  it('--bake under the TTL is accepted with --allow-short-bake', async () => {
    const ok = await sluice(['ramp', '--set', 'west', '--schedule', '1,5,50', '--bake', '30', '--allow-short-bake', '--scenario', 'two-regions', '--dry-run'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 1\] warning bake of 30 s is shorter than the TTL of 60 s/m)
  })

  it('--gate-threshold without --gate-metric', async () => {
    const result = await sluice(gateThresholdWithoutMetric)
    expectBadInput(result, /^Error: --gate-threshold: .*--gate-metric/)
  })

  it('an unknown --scenario', async () => {
    const result = await sluice(['ramp', '--set', 'west', '--schedule', '1,5,50', '--bake', '60', '--scenario', 'no-such-scenario', '--dry-run'])
    expectBadInput(result, /^Error: --scenario: .*"no-such-scenario".*two-regions/)
  })

  it('--set naming no pool of the scenario', async () => {
    const result = await sluice(['ramp', '--set', 'north', '--schedule', '1,5,50', '--bake', '60', '--scenario', 'two-regions', '--dry-run'])
    expectBadInput(result, /^Error: --set: .*"north".*east, west/)
  })

  it('cycle --batch larger than --budget', async () => {
    const result = await sluice(['cycle', '--pool', 'cafe', '--batch', '50%', '--budget', '25%', '--scenario', 'cafe-2024', '--dry-run'])
    expectBadInput(result, /^Error: --batch: .*batch of 50% is larger than the disruption budget of 25%/)
  })

  it('cycle --pool naming a pool with no targets (a sorry pool)', async () => {
    const result = await sluice(['cycle', '--pool', 'maintenance', '--batch', '1', '--scenario', 'cafe-2024', '--dry-run'])
    expectBadInput(result, /^Error: --pool: .*"maintenance"/)
  })

  it('lift --type the scenario does not have', async () => {
    const result = await sluice(['lift', '--type', 'no-such-type', '--scenario', 'outlook-recovery', '--dry-run'])
    expectBadInput(result, /^Error: --type: .*"no-such-type".*interactive, background-sync/)
  })

  it('--bake that is not a number', async () => {
    const result = await sluice(['ramp', '--set', 'west', '--schedule', '1,5,50', '--bake', 'soon', '--scenario', 'two-regions', '--dry-run'])
    expectBadInput(result, /^Error: --bake: expected a duration such as 90, 90s, 5m or 1h but received: soon$/)
  })
})
