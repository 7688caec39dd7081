import {chmodSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {inTerminal} from '../helpers/terminal.js'
import {cfg, dnsRunbook, seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {seedS3State, uniqueName} from './seed.js'
import {gatedRamp, spawnRun} from './spawned-run.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

/** maintenance 20% → 50% → 100% behind a gate measured every second, each step baking `bake` s. */
const ramp = (bake: number): string => gatedRamp(fx, bake, 'controlled-ramp')

/** The id of the one run in a store, once it has one. */
async function theRunId(env: Record<string, string>): Promise<string> {
  for (let i = 0; i < 60; i++) {
    const listed = await sluice(['journal', '--json'], {env})
    const runs = (JSON.parse(listed.stdout) as {runs?: Array<{runId: string}>}).runs ?? []
    if (runs.length > 0) return runs[0].runId
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error('no run appeared in the store')
}

type Entry = {type: string; control?: {kind: string; operator: string; host: string}; effect?: string}
const journalOf = async (runId: string, env: Record<string, string>) =>
  JSON.parse((await sluice(['journal', runId, '--json'], {env})).stdout) as {status: string; entries: Entry[]}

describe('controls from another terminal, through bin/run.js against moto', () => {
  it.each([
    ['the local store', () => fx.env, () => fx.env],
    // The controls come from a process with a state directory of its own: only the table is shared.
    [
      'the DynamoDB team store',
      () => ({...fx.env, SLUICE_STATE: `dynamodb://${table}`}),
      () => ({...fx.env, SLUICE_STATE: `dynamodb://${table}`, HOME: mkdtempSync(join(tmpdir(), 'sluice-other-'))}),
    ],
    [
      'the S3 team store',
      () => ({...fx.env, SLUICE_STATE: s3State}),
      () => ({...fx.env, SLUICE_STATE: s3State, HOME: mkdtempSync(join(tmpdir(), 'sluice-other-'))}),
    ],
  ])(
    'with %s: promote ends a long bake early, abort stops within a gate interval at the last good weights (exit 130), each journalled with who sent it',
    async (_name, runEnv, otherEnv) => {
      await seedMetrics(fx, 0)
      const run = spawnRun(['run', ramp(600), '--yes'], runEnv())
      const runId = await theRunId(otherEnv())
      await run.seen(/maintenance at 20%/)
      const promoted = await sluice(['promote', runId, '--json'], {
        env: {...otherEnv(), SLUICE_OPERATOR: 'bob'},
        cwd: mkdtempSync(join(tmpdir(), 'sluice-cwd-')),
      })
      expect(promoted.code, promoted.stderr).toBe(0)
      expect(JSON.parse(promoted.stdout)).toMatchObject({runId, control: {kind: 'promote', operator: 'bob'}})
      await run.seen(/maintenance at 50%/)
      const sent = Date.now()
      const aborted = await sluice(['abort', runId], {env: {...otherEnv(), SLUICE_OPERATOR: 'carol'}})
      expect(aborted.code, aborted.stderr).toBe(0)
      expect(aborted.stdout).toMatch(new RegExp(`^abort sent to run ${runId} \\(controlled-ramp, run by `))
      const end = await run.ended
      expect(end.code, end.stderr).toBe(130)
      console.log(`abort from another process: the run exited ${end.at - sent} ms after the control was sent`)
      expect(end.stderr).toContain('abort by carol')
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 80, maintenance: 20})
      const journal = await journalOf(runId, otherEnv())
      expect(journal.status).toBe('interrupted')
      const controls = journal.entries.filter((e) => e.type === 'control').map((e) => [e.control!.kind, e.control!.operator, e.effect])
      expect(controls).toEqual([
        ['promote', 'bob', 'promoted'],
        ['abort', 'carol', 'aborting'],
      ])
      // The run took the abort up within one gate interval (1 s) and one look at the store (0.5 s),
      // with room for a busy machine: from when `sluice abort` recorded it (its own timestamp, so the
      // sending process's start-up on a loaded machine is not counted) to the run's journal entry.
      const taken = journal.entries.find((e) => e.type === 'control' && e.control!.kind === 'abort') as Entry & {at: string; control: {at: string}}
      const took = Date.parse(taken.at) - Date.parse(taken.control.at)
      console.log(`abort: recorded by the sender, taken up by the run ${took} ms later`)
      expect(took).toBeLessThan(5000)
    },
    120_000,
  )

  it('pause holds the run, promote continues it; watch --json prints the events of the run another process executes', async () => {
    await seedMetrics(fx, 0)
    const run = spawnRun(['run', ramp(8), '--yes'], fx.env)
    const runId = await run.runId()
    const watch = spawnRun(['watch', runId, '--json'], fx.env)
    // The same run watched as a person would: in a terminal, and as lines in a CI log.
    const drawn = inTerminal(['watch', runId], fx.env)
    const logged = spawnRun(['watch', runId], fx.env)
    await run.seen(/maintenance at 20%/)
    expect((await sluice(['pause', runId], {env: fx.env})).code).toBe(0)
    // Paused inside the 20% step's bake: the bake stops counting (the gate is still measured).
    await run.seen(/control: pause by .* \(pid \d+\): paused/)
    // Held: past the rest of the 8 s bake, the weights stay where the pause found them (20%, or
    // 50% on a machine so busy the pause landed after the next step).
    const held = await weights(fx.targets.zoneId, fx.targets.record)
    expect([
      {mailbox: 80, maintenance: 20},
      {mailbox: 50, maintenance: 50},
    ]).toContainEqual(held)
    await new Promise((r) => setTimeout(r, 8000))
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual(held)
    expect((await sluice(['promote', runId], {env: fx.env})).code).toBe(0)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})

    const watched = await watch.ended
    expect(watched.code, watched.stderr).toBe(0)
    const entries = watched.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Entry & {seq: number})
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1))
    expect(entries[0].type).toBe('run-start')
    expect(entries.at(-1)!.type).toBe('run-end')
    expect(entries.filter((e) => e.type === 'verdict').length).toBeGreaterThanOrEqual(3)
    expect(entries.filter((e) => e.type === 'control').map((e) => [e.control!.kind, e.effect])).toEqual([
      ['pause', 'paused'],
      ['promote', 'continued'],
    ])

    // In a terminal: who runs it, the steps as listr2 tasks, and the bake counting down between verdicts.
    const screen = await drawn
    expect(screen.code, screen.screen).toBe(0)
    expect(screen.screen).toMatch(new RegExp(`run ${runId} of controlled-ramp by \\S+ on \\S+ \\(pid \\d+\\)`))
    // Redrawn in place as the bake counts down: many frames, one second apart, not one at the end.
    const counted = new Set([...screen.screen.matchAll(/maintenance \d+%\), bake (\d)\/8 s/g)].map((m) => m[1]))
    expect(counted.size, screen.screen).toBeGreaterThanOrEqual(4)
    // The pause shows under the step it held.
    expect(screen.screen).toMatch(/› control: pause by \S+ on \S+ \(pid \d+\): paused/)
    expect(screen.screen).toContain(`run ${runId} ended: completed`)
    // As lines: each with the time, none twice, the passes of a bake folded into one line.
    const lines = await logged.ended
    expect(lines.code, lines.stderr).toBe(0)
    const out = lines.stdout.trimEnd().split('\n')
    for (const line of out) expect(line).toMatch(/^\[\d\d:\d\d:\d\dZ\] /)
    expect(new Set(out).size).toBe(out.length)
    expect(out.join('\n')).toMatch(/\] \[step 1\] start Ramp maintenance/)
    expect(out.join('\n')).toMatch(/gate .*: \d+\/\d+ passes/)
    expect(out.filter((l) => /pause by .*: paused/.test(l))).toHaveLength(1)

    // The run has ended: a control is refused (exit 4); watch shows it whole (exit 0).
    for (const kind of ['pause', 'promote', 'abort']) {
      const late = await sluice([kind, runId], {env: fx.env})
      expect(late.code, late.stderr).toBe(4)
      expect(late.stderr).toContain(`run ${runId} is not running: it ended completed`)
    }
    const after = await sluice(['watch', runId], {env: fx.env})
    expect(after.code, after.stderr).toBe(0)
    expect(after.stderr).toContain(`run ${runId} is not running: it ended completed`)
  }, 120_000)

  it('a live approve step: --yes does not answer it; sluice promote does, and --approve answers it in advance', async () => {
    const steps = `steps:
  - {action: ramp, set: maintenance, schedule: [20], bake: 1}
  - {action: approve, message: Go on to 100%?, name: go-on}
  - {action: ramp, set: maintenance, schedule: [100], bake: 1}
`
    const file = dnsRunbook(fx, 'approval', steps)
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await run.seen(/waiting for approval up to 3600 s/)
    const promoted = await sluice(['promote', runId], {env: {...fx.env, SLUICE_OPERATOR: 'dana'}})
    expect(promoted.code, promoted.stderr + promoted.stdout).toBe(0)
    // Acknowledged only for what the run did with it.
    expect(promoted.stdout).toMatch(/approved step 2 \(Approval: Go on to 100%\?\)/)
    const end = await run.ended
    expect(end.code, end.stderr).toBe(0)
    expect(end.stderr).toMatch(/approved by dana on .* \(sluice promote\): Go on to 100%\?/)

    const scripted = await sluice(['run', file, '--yes', '--approve', 'go-on'], {env: fx.env})
    expect(scripted.code, scripted.stderr).toBe(0)
    expect(scripted.stderr).toContain('approved by --approve: Go on to 100%?')
    const wrong = await sluice(['run', file, '--yes', '--approve', '1'], {env: fx.env})
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--approve 1: step 1 (Ramp maintenance: 20%) is a ramp step, not an approve step; the approve steps are 2 (go-on)')
  }, 120_000)

  it('a promote with nothing waiting for it (the run is restarting a batch) says so, with what the run is doing, and exits 4', async () => {
    // A restart hook that takes its time: the run is busy, not waiting for anyone. It ends when the
    // test says (the go file), not after a sleep the abort would have to wait out: an abort lets a
    // batch's hooks finish before it stops.
    const slow = join(fx.dir, 'slow-restart.sh')
    const go = join(fx.dir, 'restarts-may-end')
    writeFileSync(slow, `#!/bin/sh\nwhile [ ! -e '${go}' ]; do sleep 0.1; done\n`)
    chmodSync(slow, 0o755)
    const file = dnsRunbook(
      fx,
      'busy',
      `  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
steps:
  - {action: cycle, pool: mailbox, batch: 100%, budget: 100%, restart: {command: ['${slow}', '{id}']}}
`,
    )
    const run = spawnRun(['run', file, '--yes'], fx.env)
    const runId = await run.runId()
    await run.seen(/restart/)
    const promoted = await sluice(['promote', runId], {env: fx.env})
    expect(promoted.code, promoted.stderr + promoted.stdout).toBe(4)
    expect(promoted.stdout).toMatch(/the run took it up: nothing was waiting for a promote: the run is at step 1 \(Cycle mailbox/)
    expect((await journalOf(runId, fx.env)).entries.filter((e) => e.type === 'control').map((e) => e.effect)).toEqual(['nothing waiting'])
    expect((await sluice(['abort', runId], {env: fx.env})).code).toBe(0)
    writeFileSync(go, '')
    expect((await run.ended).code).toBe(130)
  }, 120_000)
})

const table = uniqueName('sluice')
/** An S3 team store in a bucket of this file's own. */
let s3State = ''
beforeAll(async () => {
  s3State = await seedS3State(cfg)
})
