import {afterEach, describe, expect, it, vi} from 'vitest'
import type {GateVerdict, Mutation} from '../../src/ports/io.js'
import type {JournalRead} from '../../src/ports/state-store.js'
import {markdownText, timelineMarkdown} from '../../src/state/timeline.js'
import {runStartFields} from '../helpers/journal-entries.js'

// `sluice journal RUN --markdown`: journals built by hand, their Markdown read back as a person
// (or a Markdown renderer) would: sections, the timeline table's cells, and what each cell says.

const RUN = '20261204-100000-a1b2'
const DAY = '2026-12-04'
const WEIGHTS = 'Z123 outlook.example.com. A'
const GATE = 'error-rate ≤ 2% over 60 s (mailbox)'

/** A journal written at the given UTC times (`HH:MM:SS` on DAY, or a whole ISO time), numbered in order. */
function journal(...entries: Array<[string, string, Record<string, unknown>?]>): JournalRead {
  return {
    entries: entries.map(([at, type, fields], i) => ({...fields, seq: i + 1, at: at.includes('T') ? at : `${DAY}T${at}.000Z`, type})),
    torn: null,
  }
}

const start = (operator: string, host: string, extra: Record<string, unknown> = {}) => ({
  ...runStartFields(RUN),
  runbookName: 'outlook-staged-return',
  runbookFile: '/srv/runbooks/outlook.yaml',
  operator,
  host,
  pid: 4242,
  aws: {region: 'eu-west-1'},
  ...extra,
})

const change = (phase: Mutation['phase'], step: number, kind: Mutation['kind'], resource: string, before: unknown, after: unknown, ok?: boolean) => ({
  mutation: {step, phase, kind, resource, before, after, ...(ok === undefined ? {} : {ok})},
})

const verdict = (step: number, value: number, outcome: GateVerdict['outcome'], context: string, gate = GATE) => ({
  verdict: {step, gate, metric: 'error-rate', value, threshold: 2, unit: '%', outcome, at: 0, context, requests: 1200, bound: 2},
})

const control = (kind: string, operator: string, host: string, sentAt: string, effect: string, did: string) => ({
  control: {seq: 1, kind, operator, host, pid: 99, at: `${DAY}T${sentAt}.000Z`},
  effect,
  did,
})

/** The lines of one `## Section`, up to the next. */
function section(markdown: string, title: string): string[] {
  const lines = markdown.split('\n')
  const from = lines.indexOf(`## ${title}`)
  expect(from, `no section ${title}`).toBeGreaterThan(0)
  const to = lines.findIndex((l, i) => i > from && l.startsWith('## '))
  return lines.slice(from + 1, to < 0 ? undefined : to)
}

/**
 * A table row's cells as a GFM renderer splits them: on pipes that no backslash escapes. A cell's
 * text is what a reader sees: escapes taken away, entities decoded, `<br>` a line break.
 */
function cells(line: string): string[] {
  expect(line.startsWith('| ') && line.endsWith(' |'), line).toBe(true)
  const out: string[] = []
  let cell = ''
  for (let i = 1; i < line.length; i++) {
    const c = line[i]
    if (c === '\\') {
      cell += c + line[i + 1]
      i++
    } else if (c === '|') {
      out.push(cell.trim())
      cell = ''
    } else cell += c
  }
  return out
}

function shown(cell: string): string {
  return cell.replace(/<br>/g, '\n').replace(/\\(.)/g, '$1').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}

/** The timeline's rows as [time, who, what]. */
function timeline(markdown: string): Array<{time: string; who: string; what: string}> {
  const table = section(markdown, 'Timeline').filter((l) => l.startsWith('|'))
  expect(cells(table[0])).toEqual(['Time (UTC)', 'Who', 'What'])
  return table.slice(2).map((line) => {
    const row = cells(line)
    expect(row, line).toHaveLength(3)
    return {time: row[0], who: row[1], what: row[2]}
  })
}

/** The summary's `- **Key:** value` lines as a map. */
function summary(markdown: string): Map<string, string> {
  return new Map(
    section(markdown, 'Summary')
      .filter((l) => l.startsWith('- **'))
      .map((l) => {
        const m = /^- \*\*([^*]+):\*\* (.*)$/.exec(l)!
        return [m[1], m[2]] as const
      }),
  )
}

// A run of two steps: it freezes, ramps mailbox 10% with three passing verdicts, is paused and
// continued by bob, goes to 50%, fails its gate there and goes back to 10%. carol rolls it back:
// the weights first, until dave aborts the rollback; carol goes on with it and lifts the freeze.
const wayBack = journal(
  ['10:00:00', 'run-start', start('alice', 'ops-1')],
  [
    '10:00:01',
    'plan',
    {
      runbook: 'outlook-staged-return',
      steps: [
        {index: 0, action: 'freeze', title: 'Freeze changes', details: ['reason: INC-4711']},
        {index: 1, action: 'ramp', title: 'Bring mailbox back', details: ['mailbox 10% → 50% of outlook.example.com.', 'bake 60 s per step']},
      ],
    },
  ],
  ['10:00:02', 'step-start', {step: 0, title: 'Freeze changes'}],
  ['10:00:02', 'mutation', change('intent', 0, 'freeze', 'change freeze', null, {by: 'alice', reason: 'INC-4711'})],
  ['10:00:02', 'mutation', change('outcome', 0, 'freeze', 'change freeze', null, {by: 'alice', reason: 'INC-4711'}, true)],
  ['10:00:03', 'step-end', {step: 0, status: 'done', message: 'frozen by alice: INC-4711'}],
  ['10:00:04', 'step-start', {step: 1, title: 'Bring mailbox back'}],
  ['10:00:05', 'mutation', change('intent', 1, 'weights', WEIGHTS, {mailbox: 0, maintenance: 100}, {mailbox: 10, maintenance: 90})],
  ['10:00:05', 'mutation', change('outcome', 1, 'weights', WEIGHTS, {mailbox: 0, maintenance: 100}, {mailbox: 10, maintenance: 90}, true)],
  ['10:00:06', 'progress', {step: 1, message: 'mailbox at 10% (mailbox=10 maintenance=90), baking 60 s'}],
  ['10:00:06', 'bake', {step: 1, seconds: 60}],
  ['10:00:16', 'verdict', verdict(1, 0.4, 'pass', 'mailbox 10%')],
  ['10:00:26', 'verdict', verdict(1, 0.1, 'pass', 'mailbox 10%')],
  ['10:00:36', 'verdict', verdict(1, 0.2, 'pass', 'mailbox 10%')],
  ['10:00:40', 'control', control('pause', 'bob', 'ops-2', '10:00:40', 'paused', 'paused: the run is at step 2 (Bring mailbox back)')],
  ['10:01:40', 'control', control('promote', 'bob', 'ops-2', '10:01:30', 'continued', 'continued from the pause: the run is at step 2 (Bring mailbox back)')],
  ['10:01:41', 'bake', {step: 1, seconds: 20}],
  ['10:01:45', 'mutation', change('intent', 1, 'weights', WEIGHTS, {mailbox: 10, maintenance: 90}, {mailbox: 50, maintenance: 50})],
  ['10:01:45', 'mutation', change('outcome', 1, 'weights', WEIGHTS, {mailbox: 10, maintenance: 90}, {mailbox: 50, maintenance: 50}, true)],
  ['10:01:55', 'verdict', verdict(1, 3.1, 'fail', 'mailbox 50%')],
  ['10:01:56', 'mutation', change('intent', 1, 'weights', WEIGHTS, {mailbox: 50, maintenance: 50}, {mailbox: 10, maintenance: 90})],
  ['10:01:56', 'mutation', change('outcome', 1, 'weights', WEIGHTS, {mailbox: 50, maintenance: 50}, {mailbox: 10, maintenance: 90}, true)],
  ['10:01:57', 'step-end', {step: 1, status: 'failed', message: `gate ${GATE} failed at mailbox 50%`}],
  ['10:01:57', 'run-end', {outcome: 'gate-failed', message: `step 2 (Bring mailbox back): gate ${GATE} failed at mailbox 50%`}],
  [
    '10:05:00',
    'rollback-start',
    {
      operator: 'carol',
      host: 'ops-3',
      pid: 5151,
      undo: [`1. set the weights of ${WEIGHTS} back to mailbox=0 maintenance=100`, '2. clear the change freeze'],
      leftAlone: [],
    },
  ],
  ['10:05:01', 'mutation', change('intent', -1, 'weights', WEIGHTS, {mailbox: 10, maintenance: 90}, {mailbox: 0, maintenance: 100})],
  ['10:05:01', 'mutation', change('outcome', -1, 'weights', WEIGHTS, {mailbox: 10, maintenance: 90}, {mailbox: 0, maintenance: 100}, true)],
  ['10:05:02', 'progress', {step: -1, message: 'way back: maintenance 100% (mailbox=0 maintenance=100), baking 60 s'}],
  ['10:05:30', 'verdict', verdict(-1, 0, 'pass', 'way back: maintenance 100%', 'error-rate ≤ 2% over 60 s (maintenance)')],
  ['10:05:40', 'control', control('abort', 'dave', 'ops-4', '10:05:40', 'aborting', 'aborting: stopping at the next safe point')],
  ['10:05:41', 'rollback-end', {outcome: 'interrupted', message: 'stopped before: clear the change freeze'}],
  ['10:10:00', 'rollback-start', {operator: 'carol', host: 'ops-3', pid: 6161, undo: ['1. clear the change freeze'], leftAlone: [], continues: true}],
  ['10:10:01', 'mutation', change('intent', -1, 'unfreeze', 'change freeze', {by: 'alice', reason: 'INC-4711'}, null)],
  ['10:10:01', 'mutation', change('outcome', -1, 'unfreeze', 'change freeze', {by: 'alice', reason: 'INC-4711'}, null, true)],
  ['10:10:02', 'rollback-end', {outcome: 'rolled-back', message: '1 change undone'}],
)

describe('sluice journal RUN --markdown: a run, its way back and its controls', () => {
  const md = timelineMarkdown(RUN, wayBack)
  const rows = timeline(md)
  const row = (text: string) => {
    const found = rows.filter((r) => shown(r.what).includes(text))
    expect(found, `one row saying ${text}`).toHaveLength(1)
    return found[0]
  }

  it('a title with the run and its runbook, the date once, then summary, plan, timeline and changes in that order', () => {
    expect(md.split('\n')[0]).toBe(`# Run ${RUN}: outlook-staged-return`)
    expect(md).toContain(`All times are UTC, on ${DAY}`)
    const headings = md.split('\n').filter((l) => l.startsWith('## '))
    expect(headings).toEqual(['## Summary', '## Plan', '## Timeline', '## Changes'])
    // The date is said once; every row has the time alone.
    expect(md.split(DAY)).toHaveLength(2)
    for (const r of rows) expect(r.time.replace(/\*/g, '')).toMatch(/^\d\d:\d\d:\d\d$/)
  })

  it('the summary: status now, who started it where, start, end and duration, how the run and each rollback ended, changes, verdicts, controls', () => {
    const s = summary(md)
    expect(s.get('Status')).toMatch(/^\*\*rolled-back\*\*/)
    expect(s.get('Started')).toBe('10:00:00 by alice on ops-1 (pid 4242), runbook file /srv/runbooks/outlook.yaml')
    // 10:00:00 to 10:10:02.
    expect(s.get('Ended')).toBe('10:10:02, 10 min 2 s after it started')
    expect(s.get('Run')).toMatch(/^gate-failed at 10:01:57: step 2 \(Bring mailbox back\)/)
    expect(s.get('Way back')).toMatch(/^2 rollbacks: interrupted at 10:05:41: .*; then rolled-back at 10:10:02: 1 change undone$/)
    expect(s.get('Attempts')).toBe('started by alice@ops-1 at 10:00:00; rollback by carol@ops-3 at 10:05:00; rollback went on by carol@ops-3 at 10:10:00')
    // Counted from the journal here, as a person would.
    const intents = wayBack.entries.filter((e) => e.type === 'mutation' && (e.mutation as Mutation).phase === 'intent')
    const back = intents.filter((e) => (e.mutation as Mutation).step < 0).length
    expect(s.get('Changes')).toBe(`${intents.length} changes: ${intents.length - back} by the steps, ${back} on the way back`)
    const outcomes = wayBack.entries.filter((e) => e.type === 'verdict').map((e) => (e.verdict as GateVerdict).outcome)
    const passed = outcomes.filter((o) => o === 'pass').length
    expect(s.get('Gate verdicts')).toMatch(
      new RegExp(`^${passed} passed, \\*\\*1 failed\\*\\*, the first at 10:01:55: step 2, gate .*: 3\\.10% of 1,200 requests fail`),
    )
    expect(s.get('Controls')).toBe(
      '3 received: pause by bob@ops-2 at 10:00:40 (paused); promote by bob@ops-2 at 10:01:40 (continued); abort by dave@ops-4 at 10:05:40 (aborting)',
    )
    expect(s.get('AWS')).toBe('region eu-west-1')
  })

  it('the plan, numbered as people count, with each step’s details', () => {
    const plan = section(md, 'Plan').filter((l) => /^\d+\. /.test(l))
    expect(plan).toEqual([
      '1. **Freeze changes** (freeze): reason: INC-4711',
      '2. **Bring mailbox back** (ramp): mailbox 10% → 50% of outlook.example.com.; bake 60 s per step',
    ])
  })

  it("who: the attempt's operator for the run's own entries (the run, then each rollback), a control's sender for a control", () => {
    expect(rows[0]).toMatchObject({time: '**10:00:00**', who: '**alice@ops-1**'})
    expect(shown(rows[0].what)).toBe('**Run started**: outlook-staged-return from /srv/runbooks/outlook.yaml, pid 4242')
    expect(row('sluice pause').who).toBe('bob@ops-2')
    expect(row('sluice promote').who).toBe('bob@ops-2')
    expect(row('sluice abort').who).toBe('dave@ops-4')
    const rollbacks = rows.filter((r) => r.what.startsWith('**Rollback started') || r.what.startsWith('**Rollback goes on'))
    expect(rollbacks.map((r) => [r.time, r.who])).toEqual([
      ['**10:05:00**', '**carol@ops-3**'],
      ['**10:10:00**', '**carol@ops-3**'],
    ])
    // Every row before the first rollback that is not a control is alice's; every one after it, carol's or dave's.
    const first = rows.indexOf(rollbacks[0])
    for (const r of rows.slice(0, first)) if (!r.what.includes('sluice ')) expect(r.who.replace(/\*\*/g, ''), r.what).toBe('alice@ops-1')
    for (const r of rows.slice(first)) expect(['**carol@ops-3**', 'carol@ops-3', 'dave@ops-4'], r.what).toContain(r.who)
  })

  it('in journal order, each change before → after, each control with what the run did, the ends in bold', () => {
    const times = rows.map((r) => r.time.replace(/\*/g, ''))
    expect(times).toEqual([...times].sort())
    expect(row(`Step 2: change weights ${WEIGHTS}: {mailbox:0,maintenance:100} → {mailbox:10,maintenance:90}`).who).toBe('alice@ops-1')
    expect(shown(row('sluice promote').what)).toBe(
      '**sluice promote**: continued from the pause: the run is at step 2 (Bring mailbox back) (sent at 10:01:30, taken up 10 s later)',
    )
    expect(shown(row('sluice pause').what)).toBe('**sluice pause**: paused: the run is at step 2 (Bring mailbox back)')
    expect(row('Way back: change weights').what).toContain('{mailbox:10,maintenance:90} → {mailbox:0,maintenance:100}')
    expect(row('Way back: change unfreeze').who).toBe('carol@ops-3')
    expect(shown(row('Run ended').what)).toMatch(/^\*\*Run ended: gate-failed\*\*: step 2/)
    expect(shown(rows.at(-1)!.what)).toBe('**Rollback ended: rolled-back**: 1 change undone')
    // A bake the progress line has said already is not said twice; a bake after a pause is.
    expect(rows.filter((r) => r.what.includes('bakes 60 s'))).toHaveLength(0)
    expect(row('bakes 20 s').time).toBe('10:01:41')
  })

  it('gate verdicts: a failed one in bold with its value and bound; passes of one gate in a row folded into one row with their range', () => {
    const failed = row('3.10%')
    expect(failed.what).toMatch(/^\*\*Step 2: gate error-rate ≤ 2% over 60 s \(mailbox\): 3\.10% of 1,200 requests fail \(mailbox 50%\)\*\*$/)
    const folded = row('passes in a row')
    expect(folded.time).toBe('10:00:16')
    expect(shown(folded.what)).toBe(`Step 2: gate ${GATE}: 3 passes in a row to 10:00:36, from 0.10% to 0.40%, last 0.20% of 1,200 requests (mailbox 10%)`)
    // The way back's verdict is its own.
    expect(row('way back: maintenance 100%)').what).toMatch(/^Way back: gate error-rate ≤ 2% over 60 s \(maintenance\): 0\.00% of 1,200 requests pass/)
  })

  it('changes: each resource from what the run found to what it left, the way back included', () => {
    const table = section(md, 'Changes')
      .filter((l) => l.startsWith('|'))
      .map(cells)
    expect(table[0]).toEqual(['Resource', 'Found → left', 'Changes'])
    expect(table.slice(2).map((r) => r.map(shown))).toEqual([
      ['the change freeze', '**back as the run found it**: none', '2: 1 by the steps, 1 on the way back'],
      [`weights of ${WEIGHTS}`, '**back as the run found it**: {mailbox:0,maintenance:100}', '4: 3 by the steps, 1 on the way back'],
    ])
  })

  it('the same journal gives the same Markdown, whenever and in whatever time zone it is printed', () => {
    const zone = process.env.TZ
    try {
      vi.useFakeTimers()
      vi.setSystemTime(new Date('2031-01-01T00:00:00Z'))
      process.env.TZ = 'Pacific/Auckland'
      const later = timelineMarkdown(RUN, wayBack)
      vi.setSystemTime(new Date('2026-12-04T10:00:00Z'))
      process.env.TZ = 'America/Los_Angeles'
      expect(timelineMarkdown(RUN, wayBack)).toBe(later)
      expect(later).toBe(md)
    } finally {
      vi.useRealTimers()
      process.env.TZ = zone
      if (zone === undefined) delete process.env.TZ
    }
  })
})

afterEach(() => vi.useRealTimers())

describe('--markdown: drift, resumes, settled changes, other kinds of entry', () => {
  // Killed at step 2; a resume refuses over drift (nothing says who ran it); bob resumes with
  // --reapply: the drift, the change put back and the rest are bob's.
  const drifted = journal(
    ['10:00:00', 'run-start', start('alice', 'ops-1')],
    ['10:00:01', 'step-start', {step: 0, title: 'Restrict background-sync traffic'}],
    ['10:00:01', 'mutation', change('intent', 0, 'restrict', 'listener app/edge', null, {type: 'background-sync', paths: ['/sync/*']})],
    ['10:00:01', 'mutation', change('outcome', 0, 'restrict', 'listener app/edge', null, {type: 'background-sync', paths: ['/sync/*']}, true)],
    ['10:00:02', 'step-end', {step: 0, status: 'done', message: 'restricted'}],
    ['10:00:03', 'step-start', {step: 1, title: 'Ramp mailbox'}],
    ['10:00:04', 'mutation', change('intent', 1, 'weights', WEIGHTS, {mailbox: 0, maintenance: 100}, {mailbox: 30, maintenance: 70})],
    ['10:20:00', 'drift', {found: ['the restriction on background-sync on listener app/edge: the journal says in place; now gone'], reapply: false}],
    [
      '10:25:00',
      'mutation',
      {...change('outcome', 1, 'weights', WEIGHTS, {mailbox: 0, maintenance: 100}, {mailbox: 30, maintenance: 70}, true), found: 'applied (found on resume)'},
    ],
    ['10:25:01', 'drift', {found: ['the restriction on background-sync on listener app/edge: the journal says in place; now gone'], reapply: true}],
    ['10:25:02', 'resume', {operator: 'bob', host: 'ops-2', pid: 7, fromStep: 1, reapply: ['restrict background-sync on listener app/edge again']}],
    ['10:25:03', 'mutation', change('intent', -1, 'restrict', 'listener app/edge', null, {type: 'background-sync', paths: ['/sync/*']})],
    ['10:25:03', 'mutation', change('outcome', -1, 'restrict', 'listener app/edge', null, {type: 'background-sync', paths: ['/sync/*']}, true)],
    ['10:25:04', 'future-thing', {detail: 'from a newer sluice', level: 3}],
    [
      '10:25:05',
      'lock-broken',
      {resource: 'journal', lockId: 'lk-9', brokenRunId: RUN, operator: 'erin', host: 'ops-5', pid: 8, byRun: '20261204-110000-ffff'},
    ],
    ['2026-12-05T00:00:10.000Z', 'run-end', {outcome: 'completed', message: 'all 2 steps done'}],
  )
  const md = timelineMarkdown(RUN, drifted)
  const rows = timeline(md)

  it('drift: the refused resume says nobody, the one that goes on is its operator’s, and what it put back is labelled so', () => {
    const drift = rows.filter((r) => r.what.startsWith('**Drift found by a resume**'))
    expect(drift.map((r) => r.who)).toEqual(['—', 'bob@ops-2'])
    expect(shown(drift[0].what)).toContain('the resume stopped; nothing was changed\n(the journal does not say by whom)')
    expect(shown(drift[1].what)).toContain('the resume puts it back (--reapply)')
    const settled = rows.find((r) => r.what.includes('settled from what is there'))!
    expect(settled.who).toBe('bob@ops-2')
    expect(shown(settled.what)).toContain('applied (found on resume)')
    // The intent whose outcome came only from the resume is not said to have none.
    expect(rows.filter((r) => r.what.includes('never recorded)'))).toHaveLength(0)
    expect(shown(rows.find((r) => r.who === '**bob@ops-2**')!.what)).toBe(
      '**Resumed by bob**: from step 2, pid 7\nputs back what drifted first: restrict background-sync on listener app/edge again',
    )
    expect(rows.find((r) => r.what.startsWith('Put back after drift: change restrict'))!.who).toBe('bob@ops-2')
    expect(summary(md).get('Drift')).toBe('found 2 times, at 10:20:00, 10:25:01')
    expect(summary(md).get('Changes')).toBe('3 changes: 2 by the steps, 1 putting back drift')
  })

  it('a kind of entry this sluice does not know is shown with its fields, not dropped; a broken lock names who broke it', () => {
    const unknown = rows.find((r) => r.what.includes('future-thing'))!
    expect(unknown.who).toBe('bob@ops-2')
    expect(shown(unknown.what)).toBe('**Entry of a kind this sluice does not know: future-thing**: detail: from a newer sluice; level: 3')
    const lock = rows.find((r) => r.what.startsWith('**Lock broken**'))!
    expect(lock.who).toBe('erin@ops-5')
    expect(shown(lock.what)).toContain('lock lk-9 on journal, held by run 20261204-100000-a1b2, broken by erin on ops-5 (pid 8) for run 20261204-110000-ffff')
  })

  it('a row on a later day than the first carries its date', () => {
    expect(rows.at(-1)!.time).toBe('2026-12-05 00:00:10')
    expect(rows.filter((r) => r.time.includes('-'))).toHaveLength(1)
    expect(summary(md).get('Ended')).toBe('2026-12-05 00:00:10, 14 h after it started')
  })

  it('a change whose outcome was never recorded says so, in the timeline, the summary and the changes', () => {
    const killed = journal(
      ['10:00:00', 'run-start', start('alice', 'ops-1')],
      ['10:00:04', 'mutation', change('intent', 0, 'weights', WEIGHTS, {mailbox: 0, maintenance: 100}, {mailbox: 30, maintenance: 70})],
    )
    const text = timelineMarkdown(RUN, killed)
    expect(shown(timeline(text).at(-1)!.what)).toBe(
      `Step 1: change weights ${WEIGHTS}: {mailbox:0,maintenance:100} → {mailbox:30,maintenance:70} (its outcome was never recorded)`,
    )
    expect(summary(text).get('Status')).toMatch(/^\*\*unfinished\*\*: its last attempt has no end/)
    expect(summary(text).get('Changes')).toBe('1 change by the steps; **1 with no outcome recorded**')
    expect(section(text, 'Changes').join('\n')).toContain('the last change has no outcome recorded')
    expect(summary(text).get('Ended')).toMatch(/^not yet; the last entry is at 10:00:04/)
  })

  it('a torn last line is said, before the timeline', () => {
    const text = timelineMarkdown(RUN, {...drifted, torn: {line: 17, bytes: 40, text: '{"seq":17,"at":"2026'}})
    expect(text).toContain("> **Warning:** the journal's last line (17, 40 bytes) is a torn write")
    expect(text.indexOf('torn write')).toBeLessThan(text.indexOf('## Timeline'))
  })
})

describe('--markdown: text from the journal cannot break the Markdown', () => {
  const nasty = {
    runbook: 'mail|box `x`\n# not a heading',
    operator: '<script>alert(1)</script>',
    host: 'ops|1',
    title: 'Drain\n| the pool | `now`',
    message: 'a *b* _c_ [d](e) ~f~ & \\ | <img src=x onerror=alert(1)> &lt;',
  }
  const read = journal(
    ['10:00:00', 'run-start', start(nasty.operator, nasty.host, {runbookName: nasty.runbook})],
    ['10:00:01', 'plan', {runbook: nasty.runbook, steps: [{index: 0, action: 'wait', title: nasty.title, details: [nasty.message]}]}],
    ['10:00:02', 'step-start', {step: 0, title: nasty.title}],
    ['10:00:03', 'progress', {step: 0, message: nasty.message}],
    ['10:00:04', 'warning', {message: 'line one\r\nline two'}],
    ['10:00:05', 'control', control('pause', 'eve|x', '<b>h</b>', '10:00:05', 'paused', 'paused | at `step 1`')],
    ['10:00:06', 'step-end', {step: 0, status: 'done', message: nasty.message}],
    ['10:00:07', 'run-end', {outcome: 'completed', message: 'done'}],
  )
  const md = timelineMarkdown(RUN, read)

  it('every timeline row is one line of exactly three cells, and each cell reads back as the journal said it', () => {
    const rows = timeline(md)
    expect(rows.map((r) => shown(r.who))).toEqual([
      `**${nasty.operator}@${nasty.host}**`,
      ...Array(4).fill(`${nasty.operator}@${nasty.host}`),
      'eve|x@<b>h</b>',
      ...Array(2).fill(`${nasty.operator}@${nasty.host}`),
    ])
    expect(shown(rows.find((r) => r.what.includes('Step 1 started'))!.what)).toBe(`**Step 1 started**: ${nasty.title}`)
    expect(shown(rows.find((r) => r.what.startsWith('Step 1: a'))!.what)).toBe(`Step 1: ${nasty.message}`)
    expect(shown(rows.find((r) => r.what.includes('Warning'))!.what)).toBe('**Warning**: line one\nline two')
    expect(shown(rows.find((r) => r.what.includes('sluice pause'))!.what)).toBe('**sluice pause**: paused | at `step 1`')
  })

  it('no HTML from the journal, no code span, link or heading it could open; the title stays one line', () => {
    expect(md.replace(/<br>/g, '')).not.toMatch(/[<>]/)
    expect(md).not.toContain('<script')
    const lines = md.split('\n')
    expect(shown(lines[0])).toBe(`# Run ${RUN}: ${nasty.runbook.replace(/\n/g, '\n')}`)
    expect(lines[1]).toBe('')
    expect(lines.filter((l) => l.startsWith('#'))).toEqual([lines[0], '## Summary', '## Plan', '## Timeline', '## Changes'])
    // Outside the summary's status gloss (which names a command), every backtick, bracket, star
    // and underscore from the journal is escaped: none is left bare.
    for (const line of lines) {
      const bare = line.replace(/\\./g, '').replace(/\*\*/g, '')
      expect(bare, line).not.toMatch(/[`[\]_~]/)
    }
  })

  it('markdownText: escapes what Markdown would act on, and nothing a reader sees changes', () => {
    const text = 'a|b `c` *d* _e_ [f] ~g~ <h> & \\ i\nj\r\nk'
    const escaped = markdownText(text)
    expect(escaped).not.toMatch(/\n|\r|<(?!br>)/)
    expect(shown(escaped)).toBe(text.replace(/\r\n/g, '\n'))
  })
})

describe('--markdown: a step that stopped says its status once (issue 48)', () => {
  it('"Step 2 INTERRUPTED at green 25%; …", not "INTERRUPTED: interrupted at …"', () => {
    const md = timelineMarkdown(
      RUN,
      journal(
        ['10:00:00', 'run-start', start('alice', 'ops-1')],
        ['10:00:01', 'step-start', {step: 1, title: 'Ramp green'}],
        ['10:00:09', 'step-end', {step: 1, status: 'interrupted', message: 'interrupted at green 25%; weights back to green 5% (blue=95 green=5)'}],
        ['10:00:10', 'run-end', {outcome: 'interrupted', message: 'step 2 (Ramp green): interrupted at green 25%'}],
      ),
    )
    const ended = timeline(md).find((r) => r.what.includes('Step 2 INTERRUPTED'))
    expect(shown(ended!.what)).toContain('Step 2 INTERRUPTED at green 25%; weights back to green 5% (blue=95 green=5)')
    expect(md).not.toMatch(/INTERRUPTED: interrupted/)
  })
})

describe('--markdown: a counts judge says its sentence (issue 52)', () => {
  it('passes of a counts gate folded into one row end with the last verdict in words, not its rate alone', () => {
    const counts = "error-rate ≤ pool blue + 1 point, 99% sure on the bake's counts (green)"
    const said = (n: number) => `green 0.0% of ${n.toLocaleString('en-US')} against blue 0.0% of 2,767: worse by 0.0 points, margin 1, >99.9% sure → pass`
    const pass = (n: number) => ({verdict: {...verdict(0, 0, 'pass', 'green 25%', counts).verdict, requests: n, said: said(n)}})
    const md = timelineMarkdown(
      RUN,
      journal(
        ['10:00:00', 'run-start', start('alice', 'ops-1')],
        ['10:00:01', 'step-start', {step: 0, title: 'Canary green'}],
        ['10:00:10', 'verdict', pass(640)],
        ['10:00:11', 'verdict', pass(800)],
        ['10:00:12', 'verdict', pass(931)],
      ),
    )
    const folded = timeline(md).find((r) => r.what.includes('passes in a row'))
    expect(shown(folded!.what)).toBe(`Step 1: gate ${counts}: 3 passes in a row to 10:00:12, last ${said(931)} (green 25%)`)
  })
})
