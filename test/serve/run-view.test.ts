import {describe, expect, it} from 'vitest'
import type {JournalEntry} from '../../src/ports/state-store.js'
import {runView, viewKeeps} from '../../src/serve/run-view.js'
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
    const view = runView(runId, {entries, torn: null}, [])
    expect(view.lines).toHaveLength(viewKeeps.lines)
    expect(view.verdicts).toHaveLength(viewKeeps.verdicts)
    expect(view.verdicts.at(-1)!.context).toBe('k 2499')
    expect(view.lines.at(-1)!.seq).toBe(view.lastSeq)
  })
})
