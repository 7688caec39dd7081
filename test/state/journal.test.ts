import {describe, expect, it} from 'vitest'
import type {Mutation} from '../../src/ports/io.js'
import type {JournalEntry, JournalRead} from '../../src/ports/state-store.js'
import {parseJournal} from '../../src/state/records.js'
import {baselineBeforeLastChange, firstUnfinishedStep, isOnWayBack, lastAttempt, mutations, pauseInForce, runStart, runStatus} from '../../src/state/journal.js'

let seq = 0
const e = (type: string, extra: Record<string, unknown> = {}): JournalEntry => ({
  seq: ++seq,
  at: `2026-11-04T10:00:${String(seq).padStart(2, '0')}.000Z`,
  type,
  ...extra,
})
const read = (...entries: JournalEntry[]): JournalRead => ({entries, torn: null})
const m = (phase: Mutation['phase'], kind: Mutation['kind'], step: number, extra: Partial<Mutation> = {}): JournalEntry =>
  e('mutation', {mutation: {step, phase, kind, resource: 'r', ...extra}})

describe('journal helpers', () => {
  it('baselineBeforeLastChange: the baseline a change of the step followed; not one the run died watching, nor another step’s', () => {
    const b = (step: number, errors: number) => e('baseline', {step, baseline: {intervals: [{requests: 100, errors}]}})
    expect(baselineBeforeLastChange(read(e('run-start'), b(1, 1), m('intent', 'weights', 1), b(1, 2), m('intent', 'weights', 1)), 1)).toEqual({
      intervals: [{requests: 100, errors: 2}],
    })
    // Killed while watching before the second change: the first change's baseline, which its bake was judged against.
    expect(baselineBeforeLastChange(read(e('run-start'), b(1, 1), m('intent', 'weights', 1), b(1, 2)), 1)).toEqual({intervals: [{requests: 100, errors: 1}]})
    expect(baselineBeforeLastChange(read(e('run-start'), b(1, 1)), 1)).toBeUndefined()
    expect(baselineBeforeLastChange(read(e('run-start'), b(0, 1), m('intent', 'weights', 1)), 1)).toBeUndefined()
  })

  it('runStatus: the last end decides; a journal with no end is unfinished; a rollback makes it rolled-back', () => {
    expect(runStatus(read(e('run-start'), e('step-start')))).toBe('unfinished')
    expect(runStatus(read(e('run-start'), e('run-end', {outcome: 'completed'})))).toBe('completed')
    expect(runStatus(read(e('run-start'), e('run-end', {outcome: 'interrupted'}), e('resume'), e('run-end', {outcome: 'gate-failed'})))).toBe('gate-failed')
    expect(runStatus(read(e('run-start'), e('run-end', {outcome: 'completed'}), e('rollback-end')))).toBe('rolled-back')
  })

  it('runStatus: a rollback that started and never ended is rolling-back, whatever the run did before; one that stopped is rollback-held', () => {
    // run killed (no run-end), then its rollback killed: never unfinished forwards.
    expect(runStatus(read(e('run-start'), e('rollback-start', {operator: 'o', host: 'h'}), m('intent', 'weights', -1)))).toBe('rolling-back')
    // run interrupted, rollback killed after one step back.
    const killedBack = read(e('run-start'), e('run-end', {outcome: 'interrupted'}), e('rollback-start', {operator: 'o', host: 'h'}))
    expect(runStatus(killedBack)).toBe('rolling-back')
    expect(isOnWayBack(killedBack)).toBe(true)
    expect(lastAttempt(killedBack)).toMatchObject({phase: 'back', end: null})
    const held = read(
      e('run-start'),
      e('run-end', {outcome: 'interrupted'}),
      e('rollback-start', {operator: 'o', host: 'h'}),
      e('rollback-end', {outcome: 'held'}),
    )
    expect(runStatus(held)).toBe('rollback-held')
    // A second attempt back that is killed is rolling back again.
    expect(runStatus(read(...held.entries, e('rollback-start', {operator: 'o', host: 'h'})))).toBe('rolling-back')
    expect(isOnWayBack(read(e('run-start'), e('run-end', {outcome: 'interrupted'})))).toBe(false)
  })

  it('runStart: the first entry, which must be the run-start', () => {
    const start = e('run-start', {runId: 'r1', runbookName: 'x'})
    expect(runStart(read(start, e('step-start')))).toBe(start)
    expect(() => runStart(read(e('step-start')))).toThrow('the journal does not begin with a run-start entry')
    expect(() => runStart(read())).toThrow('does not begin with a run-start entry')
  })

  it('mutations pairs each intent with its outcome by kind and step; an intent with no outcome stays open', () => {
    const entries = [
      m('intent', 'deregister', 2, {before: ['a'], after: null}),
      m('intent', 'weights', 1, {before: {a: 100}, after: {a: 50}}),
      m('outcome', 'weights', 1, {ok: true}),
      m('outcome', 'deregister', 2, {ok: false, error: 'Throttling'}),
      m('intent', 'register', 2, {before: null, after: ['a']}),
    ]
    const found = mutations(read(e('run-start'), ...entries))
    expect(found.map((x) => [x.kind, x.step, x.seq, x.outcome])).toEqual([
      ['deregister', 2, entries[0].seq, {ok: false, error: 'Throttling'}],
      ['weights', 1, entries[1].seq, {ok: true, error: undefined}],
      ['register', 2, entries[4].seq, undefined],
    ])
    expect(found[1]).toMatchObject({before: {a: 100}, after: {a: 50}, at: entries[1].at})
  })

  it('mutations pairs changes in flight together (the hooks of a batch) each with its own outcome', () => {
    const entries = [
      m('intent', 'restart', 0, {before: null, after: 'a'}),
      m('intent', 'restart', 0, {before: null, after: 'b'}),
      m('outcome', 'restart', 0, {before: null, after: 'b', ok: false, error: 'exited 2'}),
      m('outcome', 'restart', 0, {before: null, after: 'a', ok: true}),
    ]
    expect(mutations(read(e('run-start'), ...entries)).map((x) => [x.after, x.outcome?.ok])).toEqual([
      ['a', true],
      ['b', false],
    ])
  })

  it('mutations pairs an outcome with the latest open intent of its kind and step, and keeps what a resume found', () => {
    const first = m('intent', 'weights', 0, {after: {a: 10}})
    const second = m('intent', 'weights', 0, {after: {a: 30}})
    const outcome = e('mutation', {mutation: {step: 0, phase: 'outcome', kind: 'weights', resource: 'r', ok: true}, found: 'applied'})
    const found = mutations(read(first, second, outcome))
    expect(found[0].outcome).toBeUndefined()
    expect(found[1].outcome).toEqual({ok: true, error: undefined, found: 'applied'})
  })

  it('pauseInForce: a pause holds until a promote continues it, a promote --full included (a resumed run is not paused by a pause it took back)', () => {
    const bob = {operator: 'bob', host: 'ops-2', pid: 8}
    const control = (kind: string, effect: string, extra: Record<string, unknown> = {}) =>
      e('control', {control: {...bob, seq: seq + 1, kind, at: '2026-11-04T10:00:00.000Z', ...extra}, effect})
    expect(pauseInForce(read(e('run-start'), control('pause', 'paused')))).toMatchObject(bob)
    expect(pauseInForce(read(e('run-start'), control('pause', 'paused'), control('promote', 'continued')))).toBeNull()
    expect(pauseInForce(read(e('run-start'), control('pause', 'paused'), control('promote', 'promoted fully', {full: true})))).toBeNull()
  })

  it('firstUnfinishedStep: the first step whose last end was not done; all steps when every one is done', () => {
    const end = (step: number, status: string) => e('step-end', {step, status})
    expect(firstUnfinishedStep(read(e('run-start')), 3)).toBe(0)
    expect(firstUnfinishedStep(read(end(0, 'done'), e('step-start', {step: 1})), 3)).toBe(1)
    expect(firstUnfinishedStep(read(end(0, 'done'), end(1, 'failed')), 3)).toBe(1)
    // A resume that finished the failed step.
    expect(firstUnfinishedStep(read(end(0, 'done'), end(1, 'held'), end(1, 'done')), 3)).toBe(2)
    expect(firstUnfinishedStep(read(end(0, 'done'), end(1, 'done'), end(2, 'done')), 3)).toBe(3)
  })
})

describe('parseJournal', () => {
  const line = (o: object) => `${JSON.stringify(o)}\n`
  const e = (seq: number, type = 'note') => ({seq, at: '2026-11-04T10:00:00.000Z', type})

  it('reads every line; an empty journal has no entries and nothing torn', () => {
    expect(parseJournal('r', '')).toEqual({entries: [], torn: null})
    expect(parseJournal('r', line(e(1, 'a')) + line(e(2, 'b')))).toEqual({entries: [e(1, 'a'), e(2, 'b')], torn: null})
  })

  it('a complete last entry without its newline is an entry, not a torn write', () => {
    expect(parseJournal('r', `${line(e(1))}${JSON.stringify(e(2))}`)).toEqual({entries: [e(1), e(2)], torn: null})
  })

  it('a cut-off last line is a torn write: its line number, its size in bytes, and its text', () => {
    const torn = '{"seq":2,"reason":"café'
    expect(parseJournal('r', line(e(1)) + torn)).toEqual({entries: [e(1)], torn: {line: 2, bytes: Buffer.byteLength(torn), text: torn}})
    expect(Buffer.byteLength(torn)).toBeGreaterThan(torn.length)
  })

  it('a change recorded under its old kind name (dns-weights, as sluice 0.1 wrote it) reads as weights, and pairs with its outcome', () => {
    const intent = {
      seq: 1,
      at: '2026-11-04T10:00:00.000Z',
      type: 'mutation',
      mutation: {step: 0, phase: 'intent', kind: 'dns-weights', resource: 'Z1 rec A', before: {a: 100}, after: {a: 50}},
    }
    const outcome = {
      seq: 2,
      at: '2026-11-04T10:00:01.000Z',
      type: 'mutation',
      mutation: {step: 0, phase: 'outcome', kind: 'dns-weights', resource: 'Z1 rec A', ok: true},
    }
    const journal = parseJournal('r', line(intent) + line(outcome))
    expect(journal.entries.map((entry) => (entry.mutation as Mutation).kind)).toEqual(['weights', 'weights'])
    expect(mutations(journal).map((m) => [m.kind, m.outcome?.ok])).toEqual([['weights', true]])
  })

  it('a bad line before the last is damage, named by file and line', () => {
    expect(() => parseJournal('runs/x.jsonl', `${line(e(1))}oops\n${line(e(3))}`)).toThrow(
      'runs/x.jsonl:2: not JSON; the journal was changed after it was written',
    )
  })
})
