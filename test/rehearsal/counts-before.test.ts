import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {RecordingIO} from '../helpers/fakes.js'

// A counts gate relative to before, rehearsed: the simulated pool watched on the simulator's clock
// before the change, then its bake judged against that. The scenario is the judge drills' (green
// errs on 2% of what it serves throughout), with, in the second case, 3 points more from second 135,
// after the change (which comes at about second 130: 60 s of history, step 1's 10 s bake, the 60 s
// watch): green 5% against its own 2% before.

const dir = mkdtempSync(join(tmpdir(), 'sluice-counts-before-'))

function files(extraFault: string): string {
  const scenario = join(dir, `scenario${extraFault ? '-worse' : ''}.yaml`)
  writeFileSync(
    scenario,
    readFileSync(join('scenarios', 'drill-judge-regression.yaml'), 'utf8')
      .replace('    to: 170\n', `    to: 400\n${extraFault}`)
      .replace('duration: 170', 'duration: 400'),
  )
  const runbook = join(dir, `runbook${extraFault ? '-worse' : ''}.yaml`)
  writeFileSync(
    runbook,
    `name: counts-before
targets:
  haproxy: {socket: /run/haproxy/admin.sock, backends: {blue: blue, green: green}, rampMap: /etc/haproxy/sluice-ramp.map}
  metrics: {source: haproxy}
rehearsal: {scenario: ${scenario}, setup: checks-only, startAt: 60}
steps:
  - action: weighted-target-groups
    name: Half to green
    pool: green
    schedule: [50]
    bake: 10
  - action: weighted-target-groups
    name: Three quarters to green, judged against green before
    pool: green
    schedule: [75]
    bake: 60
    gate: {metric: error-rate, judge: counts, relativeTo: before, threshold: 1, window: 60, interval: 5, pool: green}
`,
  )
  return runbook
}

async function rehearsed(runbook: string) {
  const io = new RecordingIO(true)
  const report = await rehearse(loadRunbookFile(runbook), {operator: 'test', io, signal: new AbortController().signal}, {pace: null, seeds: 1})
  return {run: report.run, io}
}

describe('a counts gate relative to before, rehearsed', () => {
  it('watches green for its window on the simulated clock before the change, and passes a green erring as it did', async () => {
    const {run, io} = await rehearsed(files(''))
    expect(run.outcome, run.message).toBe('completed')
    const watched = io.events.filter((e) => e.type === 'progress' && e.step === 1 && e.message.startsWith('baseline: '))
    expect(watched).toHaveLength(12)
    const intent = io.events.findIndex((e) => e.type === 'mutation' && e.mutation.step === 1)
    expect(io.events.indexOf(watched.at(-1)!)).toBeLessThan(intent)
    // The first look reads the interval just past, the other eleven wait for theirs: 55 s of the simulated clock.
    const at = (e: (typeof io.events)[number]) => ('at' in e ? Number(e.at) : Number.NaN)
    expect(at(watched.at(-1)!) - at(watched[0])).toBeCloseTo(55, 0)
    // Twelve intervals of 5 s at green's half of 300 rps: some 9,000 requests before the change.
    const last = run.steps[1].verdicts.at(-1)!
    expect(last.said).toMatch(/^green [\d.]+% of [\d,]+ against green before the step [\d.]+% of [\d,]+: (worse|better) by [\d.]+ points?, margin 1.*→ pass$/)
    expect(last.baseline?.requests).toBeGreaterThan(8_000)
    expect(last.baseline?.requests).toBeLessThan(10_000)
  })

  it('fails a green that errs 3 points more after the change than before it, and puts the weights back', async () => {
    const {run} = await rehearsed(files('  - {kind: errors, pool: green, percent: 3, from: 135, to: 400}\n'))
    expect(run.outcome, run.message).toBe('gate-failed')
    expect(run.message).toMatch(
      /green [\d.]+% of [\d,]+ against green before the step 2\.\d% of [\d,]+: worse by [\d.]+ points, margin 1(; windows vary [^,]+)?, [>\d.]+% sure → fail/,
    )
  })
})
