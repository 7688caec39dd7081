import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {isolatedInProcess} from '../helpers/command.js'
import {stepsBack, stepsText} from '../helpers/way-back.js'

const sluice = isolatedInProcess('rollback-rehearsal')
const dir = mkdtempSync(join(tmpdir(), 'sluice-rollback-rehearsal-'))
const shipped = join(import.meta.dirname, '../../runbooks/drill-cold-return.yaml')
const scenario = join(import.meta.dirname, '../../scenarios/drill-cold-return.yaml')

/** drill-cold-return with blue's stated capacity set to `capacity`: the way back's steps are a quarter of healthy × capacity. */
function coldReturn(capacity: number): string {
  const file = join(dir, `cold-return-${capacity}.yaml`)
  const text = readFileSync(shipped, 'utf8')
  expect(text).toMatch(/capacityPerTarget:\n {4}blue: 100\n/)
  writeFileSync(file, text.replace(/(capacityPerTarget:\n {4}blue: )100\n/, `$1${capacity}\n`).replace('scenario: drill-cold-return', `scenario: ${scenario}`))
  return file
}

// drill-cold-return: every request to green, blue restarted with none; rolled back, 420 rps land on
// a blue whose six servers are cold. Its stated 100 rps a target gives steps of 35 points at the mean.
describe('sluice run --dry-run --rollback', () => {
  it('rehearses the way back: ramped loses less than at once, each step judged on blue by the gate of the step that moved the weights', async () => {
    const [ramped, now] = await Promise.all([
      sluice(['run', 'drill-cold-return', '--dry-run', '--rollback', 'ramped', '--json']),
      sluice(['run', 'drill-cold-return', '--dry-run', '--rollback', 'now', '--json']),
    ])
    expect(ramped.code, ramped.stderr).toBe(0)
    expect(now.code, now.stderr).toBe(0)
    const stepped = (JSON.parse(ramped.stdout) as RunJson).report!.rollback!
    const atOnce = (JSON.parse(now.stdout) as RunJson).report!.rollback!
    expect(stepped.how).toBe('ramped')
    expect(stepped.outcome).toBe('done')
    const steps = stepsBack(stepped.plan[0], 100)
    expect(steps).toHaveLength(3)
    expect(stepped.plan[0]).toContain(
      `${stepsText(steps)}, each baked 30 s behind the gate of step 1: error-rate ≤ 2% over 20 s (blue); traffic goes onto blue`,
    )
    expect(stepped.plan[0]).toMatch(/6 healthy targets × 100 rps = 600 rps against \d+ rps of demand/)
    // Two steps before the last are baked, each behind the gate on blue; all pass.
    expect(new Set(stepped.verdicts.map((v) => v.context))).toEqual(new Set(steps.slice(0, 2).map((p) => `way back: blue ${p}%`)))
    expect(stepped.verdicts.every((v) => v.outcome === 'pass' && v.gate === 'error-rate ≤ 2% over 20 s (blue)' && v.requests! > 0)).toBe(true)
    expect(atOnce.plan[0]).toMatch(/at once \(--now\)$/)
    expect(atOnce.verdicts).toEqual([])
    // Everything at once onto cold servers loses requests; the ramp loses fewer, and its worst window far less.
    expect(atOnce.peakLossPercent).toBeGreaterThan(10)
    expect(stepped.peakLossPercent).toBeLessThan(atOnce.peakLossPercent / 5)
    expect(stepped.lostPercent).toBeLessThan(atOnce.lostPercent)
    expect(stepped.endedAt).toBeGreaterThan(stepped.startedAt + 59)
  })

  it('in the text report: the plan, the way back, its verdicts, and a rollback mark on the chart', async () => {
    const r = await sluice(['run', 'drill-cold-return', '--dry-run', '--rollback', 'ramped'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^Rollback after the runbook \(in steps onto the receiving pool\): rolled back, 116–176 s; from its start 0\.0% of demand lost/m)
    expect(r.stdout).toMatch(/^ {2}1\. set the weights of .* back to blue=100 green=0 in 3 steps/m)
    expect(r.stdout).toMatch(/^ {2}rollback · way back: blue 3\d% · error-rate ≤ 2% over 20 s \(blue\): 0\.00% ✓ ×\d+$/m)
    expect(r.stdout).toMatch(/^ .*\brollback\b.*\bend\b/m)
    // The headline judges the way back by its own outcome: done is safe (it once read "the rollback after it done").
    expect(r.stdout).toMatch(/^Safe to run as rehearsed: /m)
  })

  it('a gate that fails on the way back holds there and exits 3, as `sluice rollback` would', async () => {
    // At 250 rps a target the first step sends blue 89% of the traffic at once: more than cold servers hold.
    const r = await sluice(['run', coldReturn(250), '--dry-run', '--rollback', 'ramped', '--json'])
    expect(r.code, r.stderr).toBe(3)
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.outcome).toBe('completed')
    expect(json.exitCode).toBe(3)
    const back = json.report!.rollback!
    expect(back.outcome).toBe('held')
    const [first] = stepsBack(back.plan[0], 250)
    expect(back.plan[0]).toContain(stepsText([first, 100]))
    expect(back.verdicts.at(-1)!.outcome).toBe('fail')
    expect(back.message).toMatch(
      new RegExp(
        `failed at way back: blue ${first}%: measured [\\d.]+% of [\\d,]+ requests, threshold 2\\.00%; holding at blue=${first} green=${100 - first}$`,
      ),
    )
    const text = await sluice(['run', coldReturn(250), '--dry-run', '--rollback', 'ramped'])
    expect(text.stdout).toMatch(/^Not safe to run as written: the rollback after it held\.$/m)
  })

  it('is refused for a live run, by name', async () => {
    const r = await sluice(['run', 'drill-cold-return', '--rollback', 'ramped', '--yes'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--rollback: needs --dry-run; only for a rehearsal: add --dry-run to rehearse/)
  })

  it('refuses a way back it does not know, naming the choices', async () => {
    const r = await sluice(['run', 'drill-cold-return', '--dry-run', '--rollback', 'gently'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--rollback/)
    expect(r.stderr).toMatch(/ramped, now/)
  })
})

/** drill-cold-return with its move to green paced (`schedule: auto`), green's capacity stated, and blue's set to `blue`. */
function pacedColdReturn(blue: number): string {
  const file = join(dir, `paced-cold-return-${blue}.yaml`)
  const text = readFileSync(coldReturn(blue), 'utf8')
  expect(text).toMatch(/ {4}schedule: \[100\]\n {4}bake: 30\n/)
  writeFileSync(
    file,
    text
      .replace(/( {4}blue: \d+\n)/, `$1    green: 100\n`)
      .replace(/ {4}schedule: \[100\]\n/, '    schedule: auto\n    pace: {handshakeCost: 3, minStep: 5}\n'),
  )
  return file
}

// A paced ramp's way back is paced too, onto the pool traffic returns to: each step the largest blue
// can take now with the headroom kept, never more than the quarter a written way back takes.
describe('sluice run --dry-run --rollback ramped, after a paced ramp', () => {
  it('paces the way back on blue: steps found as it goes, none over the quarter, every one judged, done', async () => {
    const r = await sluice(['run', pacedColdReturn(100), '--dry-run', '--rollback', 'ramped', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const back = (JSON.parse(r.stdout) as RunJson).report!.rollback!
    expect(back.outcome).toBe('done')
    expect(back.plan[0]).toMatch(/ in paced steps, each baked 30 s behind the gate of step 1: error-rate ≤ 2% over 20 s \(blue\); traffic goes onto blue: /)
    const [, maxStep] =
      /paced as the ramp that moved them was, on blue's room: each step the largest it can take now with 20% headroom, between 5 and (\d+) points \(at most a quarter of what its 6 healthy targets serve\); now: its first step would be to \d+%/.exec(
        back.plan[0],
      )!
    const steps = [...new Set(back.verdicts.map((v) => Number(/blue (\d+)%/.exec(v.context)![1])))]
    expect(steps.length).toBeGreaterThan(1)
    let from = 0
    for (const to of steps) {
      expect(to - from).toBeGreaterThanOrEqual(5)
      expect(to - from).toBeLessThanOrEqual(Number(maxStep))
      from = to
    }
    expect(back.verdicts.every((v) => v.outcome === 'pass')).toBe(true)
  })

  it('a pool with no room for the next step waits, then holds there and exits 3; it never sends the rest at once', async () => {
    // 6 × 30 rps less 20% is 144 rps: about a third of the 420 rps coming back.
    const r = await sluice(['run', pacedColdReturn(30), '--dry-run', '--rollback', 'ramped', '--json'])
    expect(r.code, r.stderr).toBe(3)
    const back = (JSON.parse(r.stdout) as RunJson).report!.rollback!
    expect(back.outcome).toBe('held')
    const held =
      /way back holding at (\d+)% after waiting (\d+) s for room: blue: 6 targets in rotation × 30 rps = 180 rps now; (\d+)% of .* would ask it for ([\d,]+) rps, more than the 144 rps with 20% headroom$/.exec(
        back.message!,
      )
    expect(held, back.message!).not.toBeNull()
    const [, at, waited, next] = held!.map(Number)
    expect(at).toBeGreaterThan(20)
    expect(at).toBeLessThan(40)
    expect(next).toBe(at + 5)
    expect(waited).toBeGreaterThanOrEqual(300)
    expect(back.endedAt - back.startedAt).toBeGreaterThan(300)
  })
})
