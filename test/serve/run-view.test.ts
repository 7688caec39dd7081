import {describe, expect, it} from 'vitest'
import type {JournalEntry} from '../../src/ports/state-store.js'
import {runView, RunSummary, RunViewFold, viewKeeps} from '../../src/serve/run-view.js'
import {isOnWayBack, pauseInForce, runStatus} from '../../src/state/journal.js'
import {runStartFields} from '../helpers/journal-entries.js'

const runId = '20261207-031500-c0de'
let seq = 0
const e = (type: string, data: Record<string, unknown> = {}): JournalEntry => ({
  seq: ++seq,
  at: `2026-12-07T03:15:${String(seq).padStart(2, '0')}.000Z`,
  type,
  ...data,
})
const change = (phase: 'intent' | 'outcome', after: unknown, extra: Record<string, unknown> = {}) =>
  e('mutation', {mutation: {step: 1, phase, kind: 'weights', resource: 'zone Z1 app.example.com.', before: {blue: 100, green: 0}, after, ...extra}, clock: 1})

describe('a run as the page shows it, from its journal alone', () => {
  it('steps with the current one, changes with their outcomes, weights as shares, verdicts with their numbers, controls with who', () => {
    seq = 0
    const entries = [
      e('run-start', {...runStartFields(runId), runbookName: 'outlook', operator: 'alice', host: 'bastion'}),
      e('plan', {
        runbook: 'outlook',
        steps: [
          {index: 0, action: 'freeze', title: 'Freeze', details: []},
          {index: 1, action: 'ramp', title: 'Ramp green', details: ['green 10% → 100%']},
        ],
      }),
      e('step-start', {step: 0, title: 'Freeze', clock: 0}),
      e('step-end', {step: 0, status: 'done', message: 'frozen', clock: 0}),
      e('step-start', {step: 1, title: 'Ramp green', clock: 1}),
      change('intent', {blue: 9, green: 1}),
      change('outcome', {blue: 9, green: 1}, {ok: true}),
      e('verdict', {
        verdict: {
          step: 1,
          gate: 'error-rate ≤ 2% over 30 s (green)',
          metric: 'error-rate',
          value: null,
          threshold: 2,
          unit: '%',
          outcome: 'inconclusive',
          requests: 3,
          why: 'too few requests (3 of 100)',
          at: 2,
          context: 'green 10%',
        },
      }),
      e('control', {
        control: {seq: 1, kind: 'pause', operator: 'dave', host: 'laptop', pid: 9, at: '2026-12-07T03:15:09.000Z'},
        effect: 'paused',
        did: 'paused in step 2',
      }),
      change('intent', {blue: 1, green: 1}),
      change('outcome', {blue: 1, green: 1}, {ok: false, error: 'Throttling: rate exceeded'}),
      change('intent', {blue: 0, green: 1}),
    ]
    const view = runView(runId, {entries, torn: null}, [])
    expect(view.steps.map((s) => [s.name, s.state])).toEqual([
      ['step 1', 'done'],
      ['step 2', 'running'],
    ])
    expect(view.steps[0].end).toBe('done frozen')
    expect(view.changes.map((c) => c.outcome)).toEqual(['made', 'failed', 'unknown'])
    expect(view.changes[1].error).toBe('Throttling: rate exceeded')
    // Only a change that was made is a point of the weights: 1 of 10 is 10%.
    expect(view.weights).toEqual([expect.objectContaining({shares: {blue: 90, green: 10}})])
    expect(view.verdicts[0]).toMatchObject({
      outcome: 'inconclusive',
      value: null,
      requests: 3,
      why: 'too few requests (3 of 100)',
      context: 'green 10%',
      step: 'step 2',
    })
    expect(view.controls).toEqual([expect.objectContaining({control: 'pause', by: 'dave@laptop', effect: 'paused', did: 'paused in step 2'})])
    expect(view.pausedBy).toBe('dave@laptop at 2026-12-07T03:15:09.000Z')
    expect(view.status).toBe('unfinished')
    expect(view.lastSeq).toBe(12)
    expect(view.lines[0].text).toBe(`run ${runId} of outlook started by alice@bastion`)
    expect(view.lines.map((l) => l.text)).toContain('[step 2] change weights zone Z1 app.example.com. failed: Throttling: rate exceeded')
  })

  it('the same journal gives the same view: a page that draws it again shows no row twice', () => {
    seq = 0
    const entries = [
      e('run-start', {...runStartFields(runId)}),
      e('step-start', {step: 0, title: 'Ramp', clock: 0}),
      change('intent', {blue: 1, green: 1}),
      change('outcome', {blue: 1, green: 1}, {ok: true}),
    ]
    const read = {entries, torn: null}
    expect(JSON.stringify(runView(runId, read, []))).toBe(JSON.stringify(runView(runId, read, [])))
    // A resume writes its plan again: its steps keep what they did.
    const resumed = [
      ...entries,
      e('resume', {operator: 'bob', host: 'h'}),
      e('plan', {runbook: 'x', steps: [{index: 0, action: 'ramp', title: 'Ramp', details: []}]}),
    ]
    const view = runView(runId, {entries: resumed, torn: null}, [])
    expect(view.steps).toHaveLength(1)
    expect(view.steps[0].state).toBe('running')
    expect(view.lines.map((l) => l.text)).toContain('resumed by bob@h')
  })

  it('a counts verdict shows its sentence, and the baseline plus the margin as its bound', () => {
    seq = 0
    const said = 'green 3.0% of 10,000 against blue 0.5% of 90,000: worse by 2.5 points, margin 1, >99.9% sure → fail'
    const entries = [
      e('run-start', {...runStartFields(runId), runbookName: 'outlook', operator: 'alice', host: 'bastion'}),
      e('verdict', {
        verdict: {
          step: 0,
          gate: "error-rate ≤ pool blue + 1 point, 99% sure on the bake's counts (green)",
          metric: 'error-rate',
          value: 3,
          threshold: 1,
          unit: '%',
          outcome: 'fail',
          requests: 10_000,
          bound: null,
          baseline: {of: 'pool blue', value: 0.5, requests: 90_000},
          said,
          counts: {sure: 99.99, needs: 99.875, dispersion: 1, baselineDispersion: 1, margin: 1},
          at: 2,
          context: 'green 10%',
        },
      }),
    ]
    expect(runView(runId, {entries, torn: null}, []).verdicts[0]).toMatchObject({outcome: 'fail', why: said, bound: 1.5, value: 3})
  })

  it("carries a long run's last lines and verdicts, not all of them: what is sent at each entry stays bounded", () => {
    seq = 0
    const entries = [e('run-start', {...runStartFields(runId)}), e('step-start', {step: 0, title: 'Ramp', clock: 0})]
    for (let k = 0; k < 2500; k++)
      entries.push(
        e('verdict', {
          verdict: {
            step: 0,
            gate: 'error-rate ≤ 2% over 30 s',
            metric: 'error-rate',
            value: 0.1,
            threshold: 2,
            unit: '%',
            outcome: 'pass',
            at: k,
            context: `k ${k}`,
          },
        }),
      )
    for (let k = 0; k < 1500; k++)
      entries.push(change('intent', {blue: 100 - (k % 100), green: k % 100}), change('outcome', {blue: 100 - (k % 100), green: k % 100}, {ok: true}))
    const view = runView(runId, {entries, torn: null}, [])
    expect(view.lines).toHaveLength(viewKeeps.lines)
    expect(view.verdicts).toHaveLength(viewKeeps.verdicts)
    // Changes and weights too: the last of them, with how many there were.
    expect(view.changes).toHaveLength(viewKeeps.changes)
    expect(view.changes.every((c) => c.outcome === 'made')).toBe(true)
    expect(view.weights).toHaveLength(1500)
    expect(view.counts).toEqual({lines: expect.any(Number), changes: 1500, verdicts: 2500, weights: 1500})
    expect(view.verdicts.at(-1)!.context).toBe('k 2499')
    expect(view.changes.at(-1)!.touched).toBe(view.lastSeq)
    // The last entry, an outcome, adds no line of its own: its intent has it.
    expect(view.lines.at(-1)!.seq).toBe(view.lastSeq - 1)
  })

  it('folded entry by entry, in pieces of any size, the view is the one the whole journal gives; the summary judges the run as the whole journal does', () => {
    // A run with every kind of entry: a pause and a continue, an abort with rollback, a rollback that ends.
    seq = 0
    const entries = [
      e('run-start', {...runStartFields(runId), runbookName: 'outlook', operator: 'alice', host: 'bastion'}),
      e('plan', {runbook: 'outlook', steps: [{index: 0, action: 'ramp', title: 'Ramp green', details: ['green 10% → 100%']}]}),
      e('step-start', {step: 0, title: 'Ramp green', clock: 0}),
    ]
    for (let k = 0; k < 700; k++) {
      entries.push(
        e('verdict', {
          verdict: {step: 0, gate: 'error-rate ≤ 2%', metric: 'error-rate', value: k % 3, threshold: 2, unit: '%', outcome: 'pass', at: k, context: `k ${k}`},
        }),
      )
      if (k % 50 === 0) entries.push(change('intent', {blue: 100 - k / 10, green: k / 10}), change('outcome', {blue: 100 - k / 10, green: k / 10}, {ok: true}))
      if (k === 300)
        entries.push(e('control', {control: {seq: 1, kind: 'pause', operator: 'dave', host: 'l', pid: 9, at: 'x'}, effect: 'paused', did: 'paused'}))
      if (k === 400)
        entries.push(e('control', {control: {seq: 2, kind: 'promote', operator: 'erin', host: 'l', pid: 9, at: 'x'}, effect: 'continued', did: 'continued'}))
      if (k === 600)
        entries.push(
          e('control', {control: {seq: 3, kind: 'abort', rollback: true, operator: 'bob', host: 'l', pid: 9, at: 'x'}, effect: 'aborting', did: 'aborting'}),
          e('step-end', {step: 0, status: 'failed', message: 'aborted', clock: 9}),
          e('run-end', {outcome: 'aborted', message: 'aborted by bob'}),
          e('rollback-start', {operator: 'bob', host: 'l'}),
        )
    }
    entries.push(e('rollback-end', {outcome: 'rolled-back', message: 'weights as they were'}))
    const whole = runView(runId, {entries, torn: null}, [])
    // Several seeds of cut points, from one entry at a time to hundreds.
    for (const size of [1, 2, 7, 64, 333]) {
      const fold = new RunViewFold()
      const summary = new RunSummary()
      const partial: JournalEntry[] = []
      for (let i = 0; i < entries.length; i += size) {
        const piece = entries.slice(i, i + size)
        fold.add({entries: piece, torn: null})
        summary.add({entries: piece, torn: null})
        partial.push(...piece)
        // A piece read twice (two followers of one run) changes nothing.
        fold.add({entries: piece, torn: null})
        const read = {entries: partial, torn: null}
        expect(runStatus(summary.read())).toBe(runStatus(read))
        expect(pauseInForce(summary.read())).toEqual(pauseInForce(read))
        expect(isOnWayBack(summary.read())).toBe(isOnWayBack(read))
        expect(summary.lastSeq).toBe(partial.at(-1)!.seq)
      }
      expect(fold.view(runId, [])).toEqual(whole)
    }
    expect(whole.status).toBe('rolled-back')
    expect(whole.verdicts).toHaveLength(700)
  })
})
