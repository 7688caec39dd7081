import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {outputWidth} from '../../src/cli/output-width.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {inProcess as sluice} from '../helpers/command.js'

const FIRST = '20261130-054012-a1b2'
const SECOND = '20261130-061500-c3d4'
const runbook = 'outlook-mailbox-staged-return-with-a-long-name'
const host = 'bastion-eu-west-1-incident-bridge.example.internal'
const widest = (text: string): number =>
  Math.max(
    ...text
      .trimEnd()
      .split('\n')
      .map((l) => [...l].length),
  )

let state: string
beforeAll(async () => {
  state = join(mkdtempSync(join(tmpdir(), 'sluice-table-width-')), 'state')
  const store = new LocalStore(state)
  const at = (s: number) => `2026-11-30T06:00:0${s}.000Z`
  for (const [runId, outcome] of [
    [FIRST, 'completed'],
    [SECOND, 'gate-failed'],
  ]) {
    await store.append(runId, {seq: 1, at: at(1), type: 'run-start', ...runStartFields(runId), runbookName: runbook, operator: 'alice', host})
    await store.append(runId, {seq: 2, at: at(2), type: 'run-end', outcome, message: 'done'})
    await store.release([], runId)
  }
  // A lock left by a run on another host, as `sluice locks` finds it.
  mkdirSync(join(state, 'locks'), {recursive: true})
  writeFileSync(
    join(state, 'locks', 'route53_Z1.json'),
    JSON.stringify({
      resource: 'route53:Z0123456789ABCDEFGHIJ/mail.example.com',
      runId: SECOND,
      operator: 'alice',
      host,
      since: '2026-11-30T06:15:00.000Z',
      pid: 4242,
      heartbeat: '2026-11-30T06:15:10.000Z',
      leaseSeconds: 30,
      lockId: '0123456789abcdef',
      version: 'v1',
    }),
  )
})

describe('tables fit the width they are given: the terminal, else $COLUMNS, else 80 (in process)', () => {
  it('journal at 60 columns: each run on one line, its id and status whole, the runbook and host cut', async () => {
    const listed = await sluice(['journal'], {env: {SLUICE_STATE: state, COLUMNS: '60'}})
    expect(listed.code, listed.stderr).toBe(0)
    const lines = listed.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    expect(widest(listed.stdout)).toBeLessThanOrEqual(60)
    expect(lines[2]).toMatch(new RegExp(`^${FIRST}  completed\\s+outlook-…?`))
    expect(lines[3]).toMatch(new RegExp(`^${SECOND}  gate-failed  `))
    expect(listed.stdout).toContain('…')
    expect(listed.stdout).not.toContain(runbook)
  })

  it('journal at 160 columns: every field whole, nothing cut', async () => {
    const listed = await sluice(['journal'], {env: {SLUICE_STATE: state, COLUMNS: '160'}})
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).not.toContain('…')
    expect(listed.stdout).toMatch(new RegExp(`^${SECOND}  gate-failed  ${runbook}  alice@${host.replaceAll('.', '\\.')}$`, 'm'))
  })

  it('journal with no $COLUMNS off a terminal is 80 wide, and --json keeps every field whole', async () => {
    const listed = await sluice(['journal'], {env: {SLUICE_STATE: state, COLUMNS: undefined}})
    expect(widest(listed.stdout)).toBeLessThanOrEqual(80)
    expect(widest(listed.stdout)).toBeGreaterThan(70)
    const json = JSON.parse((await sluice(['journal', '--json'], {env: {SLUICE_STATE: state, COLUMNS: '60'}})).stdout)
    expect(json.runs.map((r: {runbook: string; host: string}) => [r.runbook, r.host])).toEqual([
      [runbook, host],
      [runbook, host],
    ])
  })

  it('locks at 80 columns: one block a lock, nothing cut (who holds it is who to call); a table where it fits', async () => {
    const narrow = await sluice(['locks'], {env: {SLUICE_STATE: state, COLUMNS: '80'}})
    expect(narrow.code, narrow.stderr).toBe(0)
    expect(widest(narrow.stdout)).toBeLessThanOrEqual(80)
    expect(narrow.stdout.trimEnd().split('\n')).toEqual([
      'lock 0123456789abcdef  route53:Z0123456789ABCDEFGHIJ/mail.example.com',
      `  run ${SECOND}`,
      `  held by alice@${host} pid 4242`,
      '  since 2026-11-30T06:15:00.000Z',
      "  last heartbeat 2026-11-30T06:15:10.000Z (holder's clock), lease 30 s",
    ])
    const wide = await sluice(['locks'], {env: {SLUICE_STATE: state, COLUMNS: '250'}})
    const rows = wide.stdout.trimEnd().split('\n')
    expect(rows[0]).toMatch(/^lock id {11}resource +run +holder +since +last heartbeat \(holder's clock\) +lease$/)
    expect(rows[2]).toMatch(new RegExp(`^0123456789abcdef  route53:Z0123456789ABCDEFGHIJ/mail\\.example\\.com  ${SECOND}  alice@`))
    expect(widest(wide.stdout)).toBeLessThanOrEqual(250)
  })
})

describe('outputWidth', () => {
  it("is a terminal's own width, else $COLUMNS, else 80; a pty of no size counts as none", () => {
    expect(outputWidth({isTTY: true, columns: 132}, {COLUMNS: '60'})).toBe(132)
    expect(outputWidth({isTTY: true, columns: 0}, {COLUMNS: '60'})).toBe(60)
    expect(outputWidth({isTTY: false, columns: 132}, {COLUMNS: '60'})).toBe(60)
    expect(outputWidth({}, {})).toBe(80)
    for (const bad of ['', 'wide', '-5', '0', '7.5']) expect(outputWidth({}, {COLUMNS: bad})).toBe(80)
  })
})
