import {randomInt} from 'node:crypto'
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, it, type ExpectStatic} from 'vitest'
import {seedMetrics, type Fixture} from '../aws/live-fixture.js'
import {spawnRun} from '../aws/spawned-run.js'
import {
  SCHEDULE,
  changesSeen,
  describeJournal,
  describeKill,
  generator,
  journalFile,
  journalStatus,
  killAt,
  limiter,
  liveWeights,
  locksLeft,
  mailboxShare,
  openTrial,
  rampRunbook,
  type Change,
  type Ended,
  type Entry,
  type KillPoint,
} from './kill-trials-fixture.js'
import {gamedayDir} from './timeline.js'

// kill -9 at random points of a ramped rollback (A) and of an `abort --rollback` (B), then
// `sluice resume RUN` or `sluice rollback RUN` (by the seed's parity), a third of the time killed
// once more first. Every trial must end at exactly the weights before the run (mailbox 100,
// maintenance 0), the run rolled-back (`sluice journal RUN --json`), no lock left (`sluice locks
// --json`); from the way back's start on, no change Route 53 made (as the recording proxy saw
// them) may take traffic away from mailbox, the receiving pool; and the journal has no forward
// attempt or forward change after it.
//
// A: the ramp (maintenance 10 → 20 → 50 → 80 → 100, bakes of 1 s behind the error-rate gate) run
//    to its end or killed at a random step; then `sluice rollback RUN --yes`, killed.
// B: the same ramp with 3 s bakes; at a random step `sluice abort RUN --rollback --yes` from
//    another process, killed: once the abort is in the store (before the run takes it up), a
//    delay after that, on "waiting for run … to stop", on "… stopped; rolling it back", or at any
//    of the rollback's points below.
// A rollback (or a resume of one) is killed after a random delay, at its confirmation (around its
// rollback-start), after its Nth "way back:" line, after its Nth way-back verdict (in a bake), as
// its Nth weights change reaches Route 53 (in flight: made, its outcome never journaled), with its
// Nth change held by the proxy and never made (lost: intent journaled, no outcome), or once its
// rollback-end is in the journal (before it lets go of its locks). Where each kill landed is read
// from the journal and tallied.
//
// Each trial has its own world (proxy, zone, load balancer, state directory), and its choices come
// from its seed: trial n of each type has seed SLUICE_KILL_SEED + n - 1 (20261206 by default, so
// the same plans every run; `random` for fresh ones). `-t 'A7,'` replays one trial;
// SLUICE_KILL_SEED=<seed> SLUICE_KILL_TRIALS=1 with `-t 'A1,'` replays any seed. SLUICE_KILL_TRIALS
// sets the trials per type (20), SLUICE_KILL_PARALLEL how many run at once (4). The summary per
// type is printed at the end; every trial's commands, kill points and (when it failed) journal go
// to .gameday/kill-trials.log.
//
// Time, measured 2026-12-06 on this two-core machine, this file alone (20 + 20 trials, 4 at a
// time) while others' tests ran beside it: 2 m 4 s wall at load 2 to 5, 2 m 20 s at load 4 to 9,
// 3 m 19 s at load 12 to 15; about 1 m 35 s of CPU. Trials that fail by going forwards take
// longest (a forward resume bakes every step again).

const TRIALS = Number(process.env.SLUICE_KILL_TRIALS ?? 20)
/** Trial n of each type has seed BASE + n - 1: the same plans every run unless SLUICE_KILL_SEED names others (`random`: fresh ones). */
const BASE = process.env.SLUICE_KILL_SEED === 'random' ? randomInt(1, 1_000_000_000) : Number(process.env.SLUICE_KILL_SEED ?? 20261206)
if (!Number.isSafeInteger(BASE)) throw new Error(`SLUICE_KILL_SEED: a whole number or random, not ${process.env.SLUICE_KILL_SEED}`)
const slot = limiter(Number(process.env.SLUICE_KILL_PARALLEL ?? 4))

/** The ramp's bake (s): A's rollback is killed on its own, B's run must still be in its step when the abort lands. */
const BAKE_A = 1
const BAKE_B = 3

const wayBackLine = /way back: mailbox \d+%/
const verdictLine = /\[rollback\] gate /
const confirmLine = /approved by --yes: Roll back run/
const runIdLine = /live run (\d{8}-\d{6}-[0-9a-f]{4})/
/** `abort --rollback` once the run has stopped ("run RUN stopped (interrupted); rolling it back"), not its "waiting for run RUN to stop before rolling it back". */
const stoppedLine = /; rolling it back/

interface Tally {
  trials: number
  passed: number
  /** Kill points chosen, by kind, and how many of them were reached (the process was killed there). */
  chosen: Map<string, number>
  hit: Map<string, number>
  /** Where the kills landed, read from the journal. */
  landed: Map<string, number>
  finals: Map<string, number>
  failed: string[]
  /** Trials whose premise did not hold (B: the run completed before the abort reached it), skipped with the reason. */
  skipped: string[]
  /** Each trial's commands, kill points and where they landed, for the log file. */
  logs: Array<{n: number; text: string}>
  seeds: number[]
}

const tally = (): Tally => ({
  trials: 0,
  passed: 0,
  chosen: new Map(),
  hit: new Map(),
  landed: new Map(),
  finals: new Map(),
  failed: [],
  skipped: [],
  logs: [],
  seeds: [],
})
const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1)
const tallies = {A: tally(), B: tally()}

function seedList(seeds: number[]): string {
  const sorted = [...seeds].sort((a, b) => a - b)
  const contiguous = sorted.every((s, i) => s === sorted[0] + i)
  return contiguous && sorted.length > 2 ? `seeds ${sorted[0]}..${sorted.at(-1)}` : `seed${sorted.length === 1 ? '' : 's'} ${sorted.join(', ')}`
}

function summary(type: 'A' | 'B', t: Tally): string {
  const list = (m: Map<string, number>) => [...m].map(([k, n]) => `${k} ${n}`).join(', ')
  const hits = [...t.chosen].map(([k, n]) => `${k} ${t.hit.get(k) ?? 0}/${n}`).join(', ')
  return (
    `kill trials ${type} (${type === 'A' ? 'ramped rollback' : 'abort --rollback'}), ${seedList(t.seeds)}: ${t.trials} trials, ` +
    `${t.failed.length === 0 ? 'all passed' : `${t.passed} passed, ${t.failed.length} failed (${t.failed.join('; ')})`}` +
    `${t.skipped.length === 0 ? '' : `, ${t.skipped.length} skipped (${t.skipped.join('; ')})`}; ` +
    `kill points hit/chosen: ${hits}; landed: ${list(t.landed)}; finished by: ${list(t.finals)}`
  )
}

/** Every trial's story, passed or not, goes to .gameday/kill-trials.log (or $SLUICE_GAMEDAY_DIR). */
const logFile = join(gamedayDir, 'kill-trials.log')

afterAll(() => {
  const types = (['A', 'B'] as const).filter((type) => tallies[type].trials > 0)
  const lines = types.map((type) => summary(type, tallies[type]))
  mkdirSync(gamedayDir, {recursive: true})
  const logs = types.flatMap((type) => [...tallies[type].logs].sort((a, b) => a.n - b.n).map((l) => l.text))
  writeFileSync(logFile, `${lines.join('\n')}\n\n${logs.join('\n\n')}\n`)
  for (const line of lines) console.log(line)
  console.log(`each trial's commands, kill points and journal: ${logFile}`)
})

/** How many changes the way back makes from mailbox's `share` on, as a rollback plans it: through the shares the run passed, then 100. */
function stepsBack(reached: number, share: number): number {
  const passed = SCHEDULE.slice(0, reached).map((m) => 100 - m)
  return [...new Set([...passed, 100])].filter((s) => s > share).length
}

type Rng = ReturnType<typeof generator>

/**
 * A kill point for a rollback (or a resume of one) with about `steps` changes to make, each baked
 * `bake` s; a delay falls anywhere from its start (`lead` ms of starting up) to about its end.
 */
function rollbackKill(rng: Rng, steps: number, bake: number, lead = 700): KillPoint {
  const n = rng.int(1, Math.max(1, steps))
  switch (rng.pick(['delay', 'confirm', 'way back', 'verdict', 'in-flight', 'lost', 'rollback-end'] as const)) {
    case 'delay':
      return {kind: 'delay', ms: rng.int(0, lead + (bake * 1000 + 200) * (steps - 1) + 200)}
    case 'confirm':
      return {kind: 'line', label: 'its confirmation (rollback-start)', pattern: confirmLine, n: 1}
    case 'way back':
      return {kind: 'line', label: '"way back:" line', pattern: wayBackLine, n}
    case 'verdict':
      return steps > 1
        ? {kind: 'line', label: 'way-back verdict', pattern: verdictLine, n: rng.int(1, steps - 1)}
        : {kind: 'line', label: '"way back:" line', pattern: wayBackLine, n: 1}
    case 'in-flight':
      return {kind: 'in-flight', n}
    case 'lost':
      return {kind: 'lost', n}
    case 'rollback-end':
      return {kind: 'entry', type: 'rollback-end'}
  }
}

/** A kill point for `abort RUN --rollback`: before the run takes the abort up, while it stops, once it stopped, or in the rollback after. */
function abortKill(rng: Rng, steps: number): KillPoint {
  // From the abort written: the run takes it up within half a second, stops, and the rollback starts about a second after.
  const lead = 1500
  switch (rng.pick(['control', 'control delay', 'waiting', 'stopped', 'rollback', 'rollback'] as const)) {
    case 'control':
      return {kind: 'control'}
    case 'control delay':
      return {kind: 'delay', ms: rng.int(0, lead + (BAKE_B * 1000 + 200) * (steps - 1) + 200), from: 'control'}
    case 'waiting':
      return {kind: 'line', label: '"waiting for run to stop"', pattern: /waiting for run \S+ to stop/, n: 1}
    case 'stopped':
      return {kind: 'line', label: '"stopped; rolling it back"', pattern: stoppedLine, n: 1}
    case 'rollback': {
      const k = rollbackKill(rng, steps, BAKE_B, lead)
      return k.kind === 'delay' ? {...k, from: 'control'} : k
    }
  }
}

const kindOf = (k: KillPoint) =>
  k.kind === 'line' ? k.label : k.kind === 'delay' ? `delay${k.from ? ` after ${k.from}` : ''}` : k.kind === 'entry' ? `${k.type} written` : k.kind

/** Where a kill landed, by the journal: what the killed process had written of its attempt. */
function landing(before: Entry[], after: Entry[], end: Ended, kill: KillPoint, abort: boolean): string {
  if (!end.killed) return 'not reached (it ended first)'
  const atKill = end.journalAtKill ?? after
  if (abort) {
    const control = atKill.findIndex((e) => e.type === 'control' && e.effect === 'aborting')
    if (control < 0) return 'abort sent, not yet taken up'
    if (!atKill.slice(control).some((e) => e.type === 'run-end')) return 'abort taken up, run stopping'
  }
  const starts = (es: Entry[]) => es.filter((e) => e.type === 'rollback-start').length
  if (starts(after) === starts(before)) return abort ? 'run stopped, rollback not started' : 'before rollback-start'
  const last = after.map((e) => e.type).lastIndexOf('rollback-start')
  if (after.slice(last).some((e) => e.type === 'rollback-end')) return 'after rollback-end, before it let go of its locks'
  const back = after.slice(last).filter((e) => e.type === 'mutation' && e.mutation?.step === -1)
  if (back.length === 0) return 'rollback started, before its first change'
  const m = back.at(-1)!.mutation!
  if (m.phase === 'intent')
    return `between a change's intent and outcome${kill.kind === 'lost' ? ' (change never made)' : kill.kind === 'in-flight' ? ' (change made)' : ''}`
  return m.after && m.after.mailbox === 100 ? 'after the last change, before rollback-end' : 'in a bake between changes'
}

/** Where a trial's way back is counted from: a time (for Route 53's changes) and the weights then; in the journal, after `seq` (null: the first rollback-start). */
interface WayBackFrom {
  at: number
  weights: Record<string, number>
  what: string
  seq: number | null
}

interface Trial {
  fx: Fixture
  type: 'A' | 'B'
  seed: number
  runId: string
  log: string[]
}

/** Spawns one attempt (rollback, resume or abort --rollback), killed at `kill` if it gets there; logs it and tallies where it landed. */
async function attempt(t: Trial, args: string[], kill: KillPoint | null, armChanges?: RegExp): Promise<Ended> {
  const before = journalFile(t.fx, t.runId)
  const started = Date.now()
  const end = await killAt(t.fx, args, kill, {runId: t.runId, ...(armChanges ? {armChanges} : {})}).ended
  const after = journalFile(t.fx, t.runId)
  const where = kill ? landing(before, after, end, kill, args[0] === 'abort') : 'ran to its end'
  const tt = tallies[t.type]
  if (kill) {
    bump(tt.chosen, kindOf(kill))
    if (end.killed) bump(tt.hit, kindOf(kill))
    bump(tt.landed, where)
  }
  t.log.push(
    `$ sluice ${args.join(' ')}${kill ? `   [kill -9 ${describeKill(kill)}]` : ''}\n` +
      `  -> ${end.killed ? 'killed' : `exit ${end.code}${end.signal ? ` (${end.signal})` : ''}`} after ${Date.now() - started} ms; ${where}; weights now ${JSON.stringify(await liveWeights(t.fx))}`,
  )
  if (!end.killed) t.log.push(indent(`${end.stderr}${end.stdout}`))
  rebuilt(end.stderr)
  return end
}

/** The tree is shared: a build elsewhere swaps dist/bundle under a spawned sluice. That trial proves nothing either way. */
function rebuilt(stderr: string): void {
  if (/Cannot find module '[^']*dist\/bundle/.test(stderr))
    throw new Error('dist/bundle changed under this trial (an `npm run build` elsewhere): it proves nothing either way; run it again')
}

const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `    | ${l}`)
    .join('\n')

/** Whether the way back has started: a rollback-start is in the journal. */
const onWayBack = (t: Trial) => journalFile(t.fx, t.runId).some((e) => e.type === 'rollback-start')

/**
 * The end every trial must reach, checked whatever the road: the weights exactly as before the
 * run; the journal says rolled-back; no locks; from `from` on (the way back's start) no change
 * moved traffic away from mailbox; after the first rollback-start, no forward attempt and no
 * forward change in the journal; every change's outcome known.
 */
async function checkEnd(t: Trial, expect: ExpectStatic, from: WayBackFrom): Promise<void> {
  const entries = journalFile(t.fx, t.runId)
  const changes = changesSeen(t.fx)
  const story = () =>
    `trial ${t.type} seed ${t.seed}, run ${t.runId}, state ${t.fx.env.SLUICE_STATE}\n${t.log.join('\n')}\n` +
    `weights changes Route 53 made: ${changes.map((c) => JSON.stringify(c.weights)).join(', ')}\n` +
    `the way back counted from ${from.what} (${JSON.stringify(from.weights)})\njournal:\n${describeJournal(entries)}`
  const back: Change[] = changes.filter((c) => c.at >= from.at)
  let previous = from.weights
  for (const [i, c] of back.entries()) {
    expect(
      mailboxShare(c.weights),
      `change ${i + 1} of the way back took traffic away from mailbox: ${JSON.stringify(previous)} → ${JSON.stringify(c.weights)}\n${story()}`,
    ).toBeGreaterThanOrEqual(mailboxShare(previous))
    previous = c.weights
  }
  expect(await liveWeights(t.fx), `the weights at the end\n${story()}`).toEqual({mailbox: 100, maintenance: 0})
  const first = entries.find((e) => e.type === 'rollback-start')
  expect(first, `no rollback-start in the journal\n${story()}`).toBeDefined()
  const since = from.seq ?? first!.seq
  const forwards = entries.filter(
    (e) => e.seq > since && (e.type === 'resume' || e.type === 'run-start' || (e.type === 'mutation' && (e.mutation?.step ?? -1) >= 0)),
  )
  expect(
    forwards.map((e) => `${e.seq} ${e.type}`),
    `went forwards after ${from.seq === null ? 'the first rollback-start' : from.what}\n${story()}`,
  ).toEqual([])
  const intents = entries.filter((e) => e.mutation?.phase === 'intent').length
  const outcomes = entries.filter((e) => e.mutation?.phase === 'outcome').length
  expect(outcomes, `a change whose outcome was never settled\n${story()}`).toBe(intents)
  expect((await journalStatus(t.fx, t.runId)).status, `sluice journal ${t.runId} --json: status\n${story()}`).toBe('rolled-back')
  expect(await locksLeft(t.fx), `sluice locks --json\n${story()}`).toEqual([])
}

/** The second kill (a third of the trials) and the final command, as every trial ends. */
async function finish(t: Trial, rng: Rng, expect: ExpectStatic, reached: number): Promise<void> {
  let forced = false
  const pick = (preferred: 'resume' | 'rollback'): 'resume' | 'rollback' => {
    // Type A only: a `sluice rollback` killed before its rollback-start left nothing of itself in
    // the journal (the kill may come before it has read a byte), so the run is what it was before
    // (completed, or unfinished forwards) and `resume` rightly goes on with it; the operator asks
    // for the rollback again. B's abort is in the store before any of its kill points.
    forced = preferred === 'resume' && t.type === 'A' && !onWayBack(t)
    if (forced) t.log.push('  (no rollback-start journaled yet: rollback instead of resume, as nothing recorded the way back)')
    return forced ? 'rollback' : preferred
  }
  if (rng.next() < 1 / 3) {
    const command = pick(rng.pick(['resume', 'rollback'] as const))
    const share = mailboxShare(await liveWeights(t.fx))
    await attempt(t, [command, t.runId, '--yes'], rollbackKill(rng, stepsBack(reached, share), t.type === 'A' ? BAKE_A : BAKE_B))
  }
  const final = pick(t.seed % 2 === 0 ? 'resume' : 'rollback')
  bump(tallies[t.type].finals, forced ? 'rollback (for resume: no rollback-start yet)' : final)
  const end = await attempt(t, [final, t.runId, '--yes'], null)
  expect(end.code, `the final sluice ${final}\n${t.log.join('\n')}\n${describeJournal(journalFile(t.fx, t.runId))}`).toBe(0)
}

/** One trial in its own world: tallied, its story logged whether it passes or not. */
/** A trial whose premise did not hold: it proves nothing either way, and is skipped saying why. */
class NotATrial extends Error {}

async function trial(
  type: 'A' | 'B',
  n: number,
  seed: number,
  context: {expect: ExpectStatic; skip: (note: string) => never},
  body: (t: Trial, rng: Rng) => Promise<void>,
): Promise<void> {
  const fx = await openTrial()
  const t: Trial = {fx, type, seed, runId: '', log: []}
  const tt = tallies[type]
  tt.trials++
  tt.seeds.push(seed)
  let verdict = 'passed'
  let failed = false
  try {
    await seedMetrics(fx, 0)
    await body(t, generator(seed))
    tt.passed++
  } catch (error) {
    if (error instanceof NotATrial) {
      tt.skipped.push(`${type}${n} seed ${seed}: ${error.message}`)
      verdict = `skipped: ${error.message}`
      context.skip(error.message)
    }
    failed = true
    verdict = `FAILED: ${String((error as Error).message ?? error).split('\n')[0]}`
    tt.failed.push(`${type}${n} seed ${seed}`)
    throw error
  } finally {
    const changes = changesSeen(fx).map((c) => `${c.weights.mailbox}/${c.weights.maintenance}`)
    tt.logs.push({
      n,
      text:
        `${type}${n}, seed ${seed}, run ${t.runId}: ${verdict}\n` +
        `${t.log.join('\n')}\n  weights changes Route 53 made (mailbox/maintenance): ${changes.join(' ')}` +
        (failed && t.runId ? `\n  journal:\n${describeJournal(journalFile(fx, t.runId))}` : ''),
    })
    await fx.proxy.stop()
    // A failed trial keeps its state directory (its story names it); a passed or skipped one leaves nothing.
    if (!failed) rmSync(fx.dir, {recursive: true, force: true})
  }
}

/** A: the ramp run to its end or killed at a random step, then `sluice rollback RUN --yes` killed at a random point. */
async function trialA(t: Trial, rng: Rng): Promise<{reached: number; from: WayBackFrom}> {
  const stop = rng.int(0, SCHEDULE.length)
  const kill: KillPoint | null = stop === 0 ? null : {kind: 'line', label: 'step', pattern: new RegExp(`maintenance at ${SCHEDULE[stop - 1]}%`), n: 1}
  const ran = await killAt(t.fx, ['run', rampRunbook(t.fx, BAKE_A), '--yes'], kill).ended
  rebuilt(ran.stderr)
  t.runId = runIdLine.exec(ran.stderr)?.[1] ?? ''
  if (!t.runId || (stop === 0 && ran.code !== 0)) throw new Error(`the run did not go as planned (exit ${ran.code}):\n${ran.stderr}`)
  const reached = stop === 0 ? SCHEDULE.length : stop
  const weights = await liveWeights(t.fx)
  t.log.push(
    `$ sluice run kill-trial.yaml --yes${stop ? `   [kill -9 once it printed maintenance at ${SCHEDULE[stop - 1]}%]` : ''}\n  -> ${JSON.stringify(weights)}`,
  )
  const from: WayBackFrom = {at: Date.now(), weights, what: 'the first rollback', seq: null}
  await attempt(t, ['rollback', t.runId, '--yes'], rollbackKill(rng, stepsBack(reached, mailboxShare(weights)), BAKE_A))
  return {reached, from}
}

/** B: the ramp with longer bakes, `sluice abort RUN --rollback --yes` sent at a random step and killed at a random point. */
async function trialB(t: Trial, rng: Rng): Promise<number> {
  const run = spawnRun(['run', rampRunbook(t.fx, BAKE_B), '--yes'], t.fx.env)
  try {
    t.runId = await run.runId()
    const at = rng.int(1, SCHEDULE.length)
    await run.seen(new RegExp(`maintenance at ${SCHEDULE[at - 1]}%`))
    t.log.push(`$ sluice run kill-trial.yaml --yes   [abort --rollback sent once it printed maintenance at ${SCHEDULE[at - 1]}%]`)
    // The way back starts from the last good weights, a step below where the abort landed.
    await attempt(t, ['abort', t.runId, '--rollback', '--yes'], abortKill(rng, Math.max(1, at - 1)), stoppedLine)
    const ran = await run.ended
    t.log.push(`  the run ended: exit ${ran.code}${ran.signal ? ` (${ran.signal})` : ''}`)
    // On a loaded machine the abort's process can start so late that the run has ended its last bake first.
    if (ran.code === 0 && !journalFile(t.fx, t.runId).some((e) => e.type === 'control'))
      throw new NotATrial('the run completed before it took up the abort (it came too late to stop anything)')
    return at
  } catch (error) {
    run.signal('SIGKILL')
    await run.ended
    throw error
  }
}

/**
 * Where B's way back is counted from: the aborted run's end, read from the journal. The abort's
 * own step back to the last good weights (maintenance's share may drop once there) is the run's,
 * made before its run-end; the rollback-start comes after it, as `abort --rollback` rolls back
 * only once the run stopped. Counting from the run-end rather than the rollback-start also
 * catches a resume that went forwards before any rollback started.
 */
function wayBackStart(t: Trial): WayBackFrom {
  const entries = journalFile(t.fx, t.runId)
  const end = entries.find((e) => e.type === 'run-end')
  if (!end) throw new Error(`the aborted run never wrote its run-end:\n${describeJournal(entries)}`)
  const at = Date.parse(end.at)
  const before = changesSeen(t.fx).filter((c) => c.at < at)
  return {at, weights: before.at(-1)?.weights ?? {mailbox: 100, maintenance: 0}, what: `the aborted run's run-end (seq ${end.seq})`, seq: end.seq}
}

const seeds = Array.from({length: TRIALS}, (_, i) => ({n: i + 1, seed: BASE + i}))

describe.concurrent('kill -9 in a ramped rollback, then resume or rollback: back to exactly the weights before the run, only towards mailbox', () => {
  it.for(seeds)('A$n, seed $seed', async ({n, seed}, context) =>
    slot(() =>
      trial('A', n, seed, context, async (t, rng) => {
        const {expect} = context
        const {reached, from} = await trialA(t, rng)
        await finish(t, rng, expect, reached)
        await checkEnd(t, expect, from)
      }),
    ),
  )
})

describe.concurrent('kill -9 in an abort --rollback, then resume or rollback: back to exactly the weights before the run, only towards mailbox', () => {
  it.for(seeds)('B$n, seed $seed', async ({n, seed}, context) =>
    slot(() =>
      trial('B', n, seed, context, async (t, rng) => {
        const {expect} = context
        const reached = await trialB(t, rng)
        await finish(t, rng, expect, reached)
        await checkEnd(t, expect, wayBackStart(t))
      }),
    ),
  )
})
