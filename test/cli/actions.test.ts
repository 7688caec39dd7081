import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {expectBadInput} from '../helpers/expect-cli.js'
import {isolatedInProcess} from '../helpers/command.js'
import {commands, gateThresholdWithoutMetric} from '../helpers/single-action-cases.js'
import type {RunJson} from '../../src/cli/run-runbook.js'

/** Every command runs without AWS and with its own state directory, in this process. */
const sluice = isolatedInProcess('actions')

// Each single action's --dry-run (the report on stdout, progress on stderr, exit 0) is
// test/commands/single-actions.test.ts; as a real process's two streams, test/smoke/exit-codes.test.ts.
describe('the single-action commands through the CLI (in process)', () => {
  it("freeze and unfreeze work live without AWS: the freeze is kept in the state directory, and is its operator's to lift", async () => {
    const state = mkdtempSync(join(tmpdir(), 'sluice-state-'))
    const frozen = await sluice(['freeze', '--reason', 'incident 42', '--json', '--yes'], {env: {SLUICE_STATE: state, SLUICE_OPERATOR: 'alice'}})
    expect(frozen.code, frozen.stderr).toBe(0)
    const run = JSON.parse(frozen.stdout) as RunJson
    expect(run).toMatchObject({mode: 'live', outcome: 'completed'})
    expect(JSON.parse(readFileSync(join(state, 'freeze.json'), 'utf8'))).toMatchObject({reason: 'incident 42', runId: run.runId, by: 'alice', byHand: true})
    // Another operator's `sluice unfreeze` may not lift it without --force.
    const refused = await sluice(['unfreeze', '--yes'], {env: {SLUICE_STATE: state, SLUICE_OPERATOR: 'bob'}})
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stderr).toContain(`not this run's to lift (frozen since`)
    expect(refused.stderr).toContain(`by alice in run ${run.runId}: incident 42`)
    expect(existsSync(join(state, 'freeze.json'))).toBe(true)
    // The operator who set it lifts it; a second freeze is lifted by another only with --force.
    const own = await sluice(['unfreeze'], {env: {SLUICE_STATE: state, SLUICE_OPERATOR: 'alice'}})
    expect(own.code, own.stderr).toBe(0)
    expect(existsSync(join(state, 'freeze.json'))).toBe(false)
    expect((await sluice(['freeze', '--reason', 'again'], {env: {SLUICE_STATE: state, SLUICE_OPERATOR: 'alice'}})).code).toBe(0)
    const unfrozen = await sluice(['unfreeze', '--force'], {env: {SLUICE_STATE: state, SLUICE_OPERATOR: 'bob'}})
    expect(unfrozen.code, unfrozen.stderr).toBe(0)
    expect(unfrozen.stderr).toMatch(/warning lifting a freeze this run did not set, by force/)
    expect(existsSync(join(state, 'freeze.json'))).toBe(false)
  })
})

describe('bad flags through the CLI (in process): exit 2 and one line naming the flag', () => {
  it('--schedule with a weight over 100%', async () => {
    const result = await sluice(['ramp', '--set', 'west', '--schedule', '1,5,150', '--bake', '60', '--scenario', 'two-regions', '--dry-run'])
    expectBadInput(result, /^Error: --schedule: .*at most 100%, got 150%/)
  })

  it('--gate-threshold without --gate-metric, under --json: the error as JSON on stdout, exit 2', async () => {
    const result = await sluice([...gateThresholdWithoutMetric, '--json'])
    expect(result.code).toBe(2)
    const json = JSON.parse(result.stdout) as {error: {message: string; exit: number}}
    expect(json.error.exit).toBe(2)
    expect(json.error.message).toMatch(/^--gate-threshold: .*--gate-metric/)
  })

  it.each([
    ['cycle', ['--start-at', '30']],
    ['ramp', ['--pace', '60']],
    ['restrict', ['--svg', 'chart.svg']],
  ])('live, %s refuses a rehearsal-only flag with exit 2, naming it, before any AWS call', async (name, flag) => {
    const args = commands.find((c) => c.name === name)!.args.filter((a, k, all) => a !== '--scenario' && all[k - 1] !== '--scenario')
    expectBadInput(await sluice([...args, ...flag]), new RegExp(`${flag[0]}: needs --dry-run; only for a rehearsal: add --dry-run`))
    // The scenario a rehearsal defaults to is no flag given: naming one live is refused too.
    expectBadInput(await sluice([...args, '--scenario', 'two-regions']), /--scenario: needs --dry-run; only for a rehearsal/)
  })

  it('a required flag left out (freeze without --reason) names the flag on one line', async () => {
    const result = await sluice(['freeze', '--dry-run'])
    expectBadInput(result, /--reason\b/)
  })
})
