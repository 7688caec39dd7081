import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {parseJournal} from '../../src/state/records.js'
import {timelineMarkdown} from '../../src/state/timeline.js'
import {isolatedEnv} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {runStartFields} from '../helpers/journal-entries.js'

// `sluice journal RUN --markdown` as a user runs it, on a journal written by hand into a local
// state directory: a run that failed its gate, was paused and promoted, and was rolled back.

const RUN = '20261204-100000-c3d4'
const WEIGHTS = 'Z123 outlook.example.com. A'
const env = isolatedEnv('journal-markdown')
const file = join(env.SLUICE_STATE, 'runs', `${RUN}.jsonl`)
const at = (hms: string) => `2026-12-04T${hms}.000Z`
const weights = (step: number, phase: 'intent' | 'outcome', before: number, after: number) => ({
  mutation: {
    step,
    phase,
    kind: 'weights',
    resource: WEIGHTS,
    before: {mailbox: before, maintenance: 100 - before},
    after: {mailbox: after, maintenance: 100 - after},
    ...(phase === 'outcome' ? {ok: true} : {}),
  },
})
const verdict = (step: number, value: number, outcome: string, context: string) => ({
  verdict: {
    step,
    gate: 'error-rate ≤ 2% over 60 s (mailbox)',
    metric: 'error-rate',
    value,
    threshold: 2,
    unit: '%',
    outcome,
    at: 0,
    context,
    requests: 800,
    bound: 2,
  },
})
const control = (kind: string, operator: string, effect: string, did: string, hms: string) => ({
  control: {seq: 1, kind, operator, host: 'laptop-2', pid: 31, at: at(hms)},
  effect,
  did,
})

const entries: Array<[string, string, Record<string, unknown>]> = [
  ['10:00:00', 'run-start', {...runStartFields(RUN), runbookName: 'mailbox-return', operator: 'alice', host: 'ops-1', pid: 4242}],
  ['10:00:01', 'plan', {runbook: 'mailbox-return', steps: [{index: 0, action: 'ramp', title: 'Bring mailbox back', details: ['mailbox 20% → 60%']}]}],
  ['10:00:02', 'step-start', {step: 0, title: 'Bring mailbox back'}],
  ['10:00:03', 'mutation', weights(0, 'intent', 0, 20)],
  ['10:00:03', 'mutation', weights(0, 'outcome', 0, 20)],
  ['10:00:13', 'verdict', verdict(0, 0.5, 'pass', 'mailbox 20%')],
  ['10:00:20', 'control', control('pause', 'bob', 'paused', 'paused: the run is at step 1', '10:00:20')],
  ['10:01:00', 'control', control('promote', 'bob', 'continued', 'continued from the pause', '10:01:00')],
  ['10:01:05', 'mutation', weights(0, 'intent', 20, 60)],
  ['10:01:05', 'mutation', weights(0, 'outcome', 20, 60)],
  ['10:01:15', 'verdict', verdict(0, 7.25, 'fail', 'mailbox 60%')],
  ['10:01:16', 'step-end', {step: 0, status: 'failed', message: 'gate failed at mailbox 60%'}],
  ['10:01:16', 'run-end', {outcome: 'gate-failed', message: 'step 1: gate failed at mailbox 60%'}],
  [
    '10:03:00',
    'rollback-start',
    {operator: 'carol', host: 'ops-3', pid: 77, undo: [`1. set the weights of ${WEIGHTS} back to mailbox=0 maintenance=100`], leftAlone: []},
  ],
  ['10:03:01', 'mutation', weights(-1, 'intent', 60, 0)],
  ['10:03:01', 'mutation', weights(-1, 'outcome', 60, 0)],
  ['10:03:02', 'rollback-end', {outcome: 'rolled-back', message: '1 change undone'}],
]

beforeAll(() => {
  mkdirSync(join(env.SLUICE_STATE, 'runs'), {recursive: true, mode: 0o700})
  const text = entries.map(([hms, type, fields], i) => JSON.stringify({...fields, seq: i + 1, at: at(hms), type})).join('\n')
  writeFileSync(file, `${text}\n`, {mode: 0o600})
})

describe('sluice journal RUN --markdown, in process, on a local state directory', () => {
  it('prints the timeline as Markdown on stdout (the store on stderr), exit 0: the same Markdown each time', async () => {
    const r = await sluice(['journal', RUN, '--markdown'], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`using local state ${env.SLUICE_STATE}`)
    expect(r.stdout).toBe(`${timelineMarkdown(RUN, parseJournal(file, readFileSync(file, 'utf8'))).trimEnd()}\n`)
    const lines = r.stdout.split('\n')
    expect(lines[0]).toBe(`# Run ${RUN}: mailbox-return`)
    expect(lines).toContain('| Time (UTC) | Who | What |')
    expect(lines).toContain('| 10:00:20 | bob@laptop-2 | **sluice pause**: paused: the run is at step 1 |')
    expect(lines.find((l) => l.startsWith('| 10:01:15'))).toMatch(
      /^\| 10:01:15 \| alice@ops-1 \| \*\*Step 1: gate .*: 7\.25% of 800 requests fail \(mailbox 60%\)\*\* \|$/,
    )
    expect(lines.find((l) => l.startsWith('| **10:03:00**'))).toMatch(/^\| \*\*10:03:00\*\* \| \*\*carol@ops-3\*\* \| \*\*Rollback started by carol\*\*/)
    expect(lines).toContain("- **Status:** **rolled-back**: the run's changes were taken back")
    const again = await sluice(['journal', RUN, '--markdown'], {env})
    expect(again.stdout).toBe(r.stdout)
  })

  it('--markdown with --json is bad input (exit 2) naming both; --markdown without RUN too', async () => {
    const both = await sluice(['journal', RUN, '--markdown', '--json'], {env})
    expect(both.code).toBe(2)
    const error = JSON.parse(both.stdout) as {error: {message: string; exit: number}}
    expect(error.error.exit).toBe(2)
    expect(error.error.message).toMatch(/^--markdown: not with --json; /)
    const plain = await sluice(['journal', '--json', RUN, '--markdown'], {env})
    expect(plain.code).toBe(2)
    const alone = await sluice(['journal', '--markdown'], {env})
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('Error: --markdown: needs a RUN')
    expect(alone.stdout).toBe('')
  })
})
