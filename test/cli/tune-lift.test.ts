import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {TuneResult} from '../../src/tune/tune.js'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('tune-lift')
const dir = mkdtempSync(join(tmpdir(), 'sluice-tune-lift-'))
const shipped = readFileSync('test/fixtures/runbooks/sync-lift-by-degrees.yaml', 'utf8')
const scenario = join(process.cwd(), 'test/fixtures/scenarios/sync-return.yaml')

/** The fixture runbook in a directory of its own, naming its scenario by its whole path so a tuned copy beside it finds it too; `edit` changes its text. */
function runbookFile(name: string, edit: (text: string) => string = (t) => t): string {
  const file = join(dir, `${name}.yaml`)
  expect(shipped).toContain('../scenarios/sync-return.yaml')
  writeFileSync(file, edit(shipped.replace('../scenarios/sync-return.yaml', scenario)))
  return file
}
const runbook = runbookFile('sync-lift-by-degrees')

// test/fixtures/scenarios/sync-return.yaml: ten servers of 100 rps under 800 rps, a quarter of it
// sync, whose clients wait Retry-After (120 s) and try again; letting sync back brings their waiting
// retries with it. The runbook lets it back in five steps of 180 s.
describe('sluice tune on a lift by degrees', () => {
  it('reshapes the lift to pass every rehearsal, sooner than written; the file it writes rehearses with exit 0 and keeps its comments', async () => {
    const out = join(dir, 'tuned.yaml')
    // Three seeds, not five, to keep the suite short: seed 2 at demand 10% up already fails the lift as written.
    const r = await sluice(['tune', runbook, '--seeds', '3', '--json', '--write', out])
    expect(r.code, r.stderr).toBe(0)
    const result = JSON.parse(r.stdout) as TuneResult
    // As written it holds at the scenario's demand, not on every seed 10% above it.
    expect(result.robustness.shipped.filter((v) => !v.passed).length).toBeGreaterThan(0)
    expect(result.robustness.shipped.filter((v) => !v.passed).every((v) => v.demandPercent === 110)).toBe(true)
    expect(result.robustness.tuned.every((v) => v.passed)).toBe(true)
    expect(result.steps).toHaveLength(1)
    const [lift] = result.steps
    expect(lift).toMatchObject({index: 2, action: 'lift', set: 'sync', before: {schedule: [10, 25, 50, 75, 100], bake: 180}})
    expect(lift.schedule.at(-1)).toBe(100)
    // Whole gate intervals (10 s), from a second up: a lift is not held to a DNS TTL.
    expect(lift.bake % 10).toBe(0)
    // Full traffic is the lift's last step here: the runbook has no ramp.
    expect(result.secondsToFullTraffic.before).toBe(300 + 4 * 180)
    expect(result.secondsToFullTraffic.after).toBe(300 + (lift.schedule.length - 1) * lift.bake)
    expect(result.soonerPercent).toBeGreaterThan(0)
    const text = readFileSync(out, 'utf8')
    expect(text).toContain('# Each share of sync let back brings its waiting retries with it.')
    expect(text).toContain(`    schedule: [${lift.schedule.join(', ')}]\n    bake: ${lift.bake}\n`)
    const rehearsed = await sluice(['run', out, '--dry-run', '--json'])
    expect(rehearsed.code, rehearsed.stderr).toBe(0)
  }, 180_000)

  it('in text: the lift in the table of what it tuned, with what bounds a lift', async () => {
    // A terminal wide enough for the whole table, as tune's own sentences want one.
    const r = await sluice(['tune', runbook, '--seeds', '1', '--demand-margin', '0', '--no-slow-minority'], {env: {COLUMNS: '200'}})
    expect(r.stdout).toContain("Lifts by degrees (a lift's schedule is the percent of its type let back):")
    // A lift is called one: not a ramp.
    expect(r.stdout).toContain('The shipped lifts pass the rehearsal.\nThe tuned lifts pass 1 of 1 rehearsal.')
    expect(r.stdout).toMatch(/^ {2}step {4}lift {2,}set {2,}shipped/m)
    // The definition of full traffic under the time names both kinds; nothing else names a ramp.
    expect(
      r.stdout
        .split('\n')
        .filter((l) => !l.startsWith('  (seconds of rehearsal time'))
        .join('\n'),
    ).not.toMatch(/\bramps?\b/)
    expect(r.stdout).toMatch(/step 3 {2}Lift the restriction on sync: .* {2}sync \(lift\) {2}\[10, 25, 50, 75, 100\] bake 180 s/)
    // At 80 columns only the step's title is cut: its number, the set and both schedules stay whole.
    const narrow = await sluice(['tune', runbook, '--seeds', '1', '--demand-margin', '0', '--no-slow-minority'], {env: {COLUMNS: '80'}})
    expect(narrow.stdout).toMatch(/^ {2}step 3 {2}Lift th… {2}sync \(lift\) {2}\[10, 25, 50, 75, 100\] bake 180 s {2}\[[\d, ]+\] bake \d+ s$/m)
  }, 180_000)

  it('a lift at once lets the waiting retries all in: the rehearsal fails its gate (what tune leaves as written)', async () => {
    const lifting = '    schedule: [10, 25, 50, 75, 100]\n    bake: 180\n    gate: {metric: error-rate, threshold: 2, pool: web}\n'
    expect(shipped).toContain(lifting)
    const out = runbookFile('at-once', (text) => text.replace(lifting, ''))
    const r = await sluice(['run', out, '--dry-run'])
    expect(r.code).toBe(3)
    expect(r.stdout).toMatch(/Outcome: gate-failed — step 4 \(Errors stay away\)/)
    const tuned = await sluice(['tune', out])
    expect(tuned.code).toBe(2)
    expect(tuned.stderr).toMatch(/has no ramp step, or lift with a schedule, to tune/)
  })
})
