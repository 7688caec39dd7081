import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {rehearse as rehearseReport} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import type {Runbook} from '../../src/loader/runbook.js'
import type {RunInputs} from '../../src/ports/run.js'
import {RecordingIO} from '../helpers/fakes.js'

const dir = 'runbooks'

/** A rehearsal as fast as it goes, with its record. */
const rehearse = async (runbook: Runbook, inputs: RunInputs) => (await rehearseReport(runbook, inputs, {pace: null})).rehearsal
const expected: Record<string, {exit: number; recovered: boolean}> = {
  'outlook-staged-return.yaml': {exit: 0, recovered: true},
  'outlook-paced-return.yaml': {exit: 0, recovered: true},
  'outlook-staged-return-haproxy.yaml': {exit: 0, recovered: true},
  'regional-dns-ramp.yaml': {exit: 0, recovered: true},
  'thread-hold-recovery.yaml': {exit: 0, recovered: true},
  'drill-thread-hold-recovery.yaml': {exit: 0, recovered: true},
  'drill-cold-return.yaml': {exit: 0, recovered: true},
  'drill-cold-storm.yaml': {exit: 0, recovered: true},
  'drill-lift-by-degrees.yaml': {exit: 3, recovered: false},
  'drill-lift-at-once.yaml': {exit: 3, recovered: false},
  'naive-full-return.yaml': {exit: 3, recovered: false},
  // The counts judge's drills: green's regression fails the gate and its traffic goes back to blue;
  // both erring alike passes it. Neither step costs service against the run's start (6% of
  // requests err before the step as after it).
  'drill-judge-regression.yaml': {exit: 3, recovered: true},
  'drill-judge-shared-errors.yaml': {exit: 0, recovered: true},
  // Relative to before: green at a tenth errs on none, at half on 3% from 10 s after the change; the judge fails it.
  'drill-judge-before.yaml': {exit: 3, recovered: true},
}

describe('every shipped runbook is rehearsed', () => {
  it('and the list above covers them all', () => {
    expect(
      readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .sort(),
    ).toEqual(Object.keys(expected).sort())
  })

  for (const [file, want] of Object.entries(expected)) {
    it(`${file}: exit ${want.exit}, ${want.recovered ? 'recovers' : 'does not recover'}`, async () => {
      const io = new RecordingIO('no-tty')
      const r = await rehearse(loadRunbookFile(join(dir, file)), {operator: 'test', io, signal: new AbortController().signal})
      expect(exitCodeOf(r.run.outcome), r.run.message).toBe(want.exit)
      expect(r.recovered).toBe(want.recovered)
      // Every step that ran was announced and finished, and every change came as intent then outcome.
      const started = io.of('step-start').map((e) => e.step)
      expect(io.of('step-end').map((e) => e.step)).toEqual(started)
      // A batch's hooks run together, so their intents and outcomes interleave: each intent has
      // its own outcome after it, and nothing else does.
      const mutations = io.of('mutation').map((e) => e.mutation)
      const key = (m: (typeof mutations)[number]) => JSON.stringify([m.kind, m.resource, m.after])
      const open = new Map<string, number>()
      for (const m of mutations) {
        if (m.phase === 'intent') open.set(key(m), (open.get(key(m)) ?? 0) + 1)
        else {
          expect(open.get(key(m)) ?? 0, `an outcome with no intent before it: ${key(m)}`).toBeGreaterThan(0)
          expect(m.ok).toBe(true)
          open.set(key(m), open.get(key(m))! - 1)
        }
      }
      expect([...open.values()].every((n) => n === 0)).toBe(true)
    })
  }

  it('the naive return relapses where the staged return holds, on the same scenario', async () => {
    const signal = new AbortController().signal
    const naive = await rehearse(loadRunbookFile('runbooks/naive-full-return.yaml'), {operator: 't', io: new RecordingIO(), signal})
    const staged = await rehearse(loadRunbookFile('runbooks/outlook-staged-return.yaml'), {operator: 't', io: new RecordingIO(), signal})
    expect(naive.scenario.name).toBe(staged.scenario.name)
    expect(naive.run.message).toMatch(/gate returned targets healthy within \d+ s failed .* measured 0 of 20 healthy/)
    // After the naive return the pool is empty at the end; after the staged one every server serves.
    const last = (r: typeof naive) => r.record.inRotation[r.record.ticks - 1]
    expect(last(naive)).toBe(0)
    expect(last(staged)).toBe(20)
  })

  it('is deterministic: the same runbook gives the same record and verdicts', async () => {
    const run = async () => {
      const r = await rehearse(loadRunbookFile('runbooks/regional-dns-ramp.yaml'), {operator: 't', io: new RecordingIO(), signal: new AbortController().signal})
      return JSON.stringify({served: Array.from(r.record.served.subarray(0, r.record.ticks)), verdicts: r.run.steps.map((s) => s.verdicts)})
    }
    expect(await run()).toBe(await run())
  })
})
