import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, readdirSync, watch, writeFileSync, type FSWatcher} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {cfg, moto, weights, type Fixture} from '../aws/live-fixture.js'
import {awsTestEnv} from '../aws/moto.js'
import {RecordingProxy} from '../aws/proxy.js'
import {seedLoadBalancer, seedZone, uniqueName} from '../aws/seed.js'
import {runJs} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'

// What test/gameday/kill-trials.test.ts needs: a fixture per trial (the trials run side by side,
// so useLiveFixture's one fixture per test file cannot serve them), a seeded generator, a spawned
// sluice that can be killed at a chosen point, and the journal read straight from the state
// directory (at the instant of a kill, where spawning `sluice journal` would be too late).

/** Spawned sluices hold their locks by leases this long (s): as test/aws/state-fixture.ts's LEASE. */
export const LEASE = '3'

/**
 * A trial's own world, as useLiveFixture sets one up before each test: a recording proxy in front
 * of moto, a zone with the weighted record (mailbox 100, maintenance 0), a load balancer with 8
 * targets, a state directory, and the environment for a spawned sluice (with short leases).
 */
export async function openTrial(): Promise<Fixture> {
  const proxy = new RecordingProxy(moto)
  await proxy.start()
  const name = uniqueName('kill')
  const zone = await seedZone(cfg, {zoneName: `${name}.example.com`, record: 'outlook', ttl: 1, sets: {mailbox: 100, maintenance: 0}})
  const lb = await seedLoadBalancer(cfg, {name, targets: 8})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-kill-'))
  return {
    proxy,
    dir,
    hook: '',
    hookLog: '',
    targets: {
      zoneId: zone.zoneId,
      record: zone.record,
      targetGroupArn: lb.targetGroupArn,
      listenerArn: lb.listenerArn,
      loadBalancer: lb.loadBalancerDimension,
    },
    env: {...awsTestEnv(proxy.endpoint), SLUICE_STATE: join(dir, 'state'), SLUICE_LEASE_SECONDS: LEASE},
  }
}

/** The ramp of test/aws/way-back-run.test.ts: maintenance 10 → 20 → 50 → 80 → 100 behind an error-rate gate, each step baked `bake` s. */
export function rampRunbook(fx: Fixture, bake: number): string {
  const file = join(fx.dir, 'kill-trial.yaml')
  writeFileSync(
    file,
    `name: kill-trial
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - action: ramp
    set: maintenance
    schedule: [10, 20, 50, 80, 100]
    bake: ${bake}
    gate: {metric: error-rate, threshold: 1, window: 60, interval: 1, successes: 1}
`,
  )
  return file
}

export const SCHEDULE = [10, 20, 50, 80, 100]

/** mulberry32: a small seeded generator, so a trial's choices replay from its seed. */
export function generator(seed: number): {next: () => number; int: (lo: number, hi: number) => number; pick: <T>(items: readonly T[]) => T} {
  let s = seed | 0
  const next = () => {
    let t = (s = (s + 0x6d2b79f5) | 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  return {next, int, pick: (items) => items[Math.floor(next() * items.length)]}
}

/** One journal entry as the local store keeps it (state/runs/RUN.jsonl). */
export interface Entry {
  seq: number
  at: string
  type: string
  step?: number
  outcome?: string
  effect?: string
  mutation?: {phase: string; kind: string; step: number; ok?: boolean; before?: Record<string, number>; after?: Record<string, number>}
  [key: string]: unknown
}

/** The run's journal as it is on disk now (whole lines only). */
export function journalFile(fx: Fixture, runId: string): Entry[] {
  const file = join(fx.env.SLUICE_STATE, 'runs', `${runId}.jsonl`)
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Entry]
      } catch {
        return []
      }
    })
}

/** The journal lines a failing trial shows: one per entry, the fields that tell what happened. */
export function describeJournal(entries: Entry[]): string {
  return entries
    .map((e) => {
      const m = e.mutation
      const what = m
        ? `${m.phase} step ${m.step} ${m.kind} ${JSON.stringify(m.before ?? '')} -> ${JSON.stringify(m.after ?? '')}${m.ok === undefined ? '' : ` ok=${m.ok}`}`
        : [e.outcome, e.effect, typeof e.message === 'string' ? e.message : '', e.continues ? 'continues' : ''].filter(Boolean).join(' ')
      return `  ${e.seq} ${e.at} ${e.type}${e.step === undefined ? '' : ` step ${e.step}`} ${what}`.trimEnd()
    })
    .join('\n')
}

/** Whether a control was written for the run (its file in state/controls/RUN). */
export function controlWritten(fx: Fixture, runId: string): boolean {
  const dir = join(fx.env.SLUICE_STATE, 'controls', runId)
  return existsSync(dir) && readdirSync(dir).some((f) => /^\d+\.json$/.test(f))
}

/**
 * A point at which to SIGKILL a spawned sluice:
 * - delay: `ms` after it was spawned (or after its control for the run is in the state store);
 * - line: once its stderr has shown `pattern` `n` times;
 * - in-flight: when its `n`th ChangeResourceRecordSets reaches the proxy (the intent is journaled;
 *   the change is then made by moto, and its outcome never recorded);
 * - lost: its `n`th ChangeResourceRecordSets is held by the proxy, never made, and it is killed
 *   (the intent is journaled, the change never made, no outcome);
 * - control: once its control for the run is in the state store (abort --rollback: sent, not yet taken up);
 * - entry: once it has written a journal entry of this type (rollback-end: before it lets go of its locks).
 */
export type KillPoint =
  | {kind: 'delay'; ms: number; from?: 'control'}
  | {kind: 'line'; label: string; pattern: RegExp; n: number}
  | {kind: 'in-flight' | 'lost'; n: number}
  | {kind: 'control'}
  | {kind: 'entry'; type: string}

export function describeKill(k: KillPoint): string {
  switch (k.kind) {
    case 'delay':
      return `${k.ms} ms after ${k.from === 'control' ? 'the abort was written' : 'it started'}`
    case 'line':
      return `after ${k.label} #${k.n}`
    case 'in-flight':
      return `change #${k.n} in flight (made, outcome unrecorded)`
    case 'lost':
      return `change #${k.n} lost (intent journaled, never made)`
    case 'control':
      return 'abort written, before the run took it up'
    case 'entry':
      return `once its ${k.type} is in the journal`
  }
}

export interface Ended {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** Whether it was killed at its kill point (else it ended on its own first). */
  killed: boolean
  /** The run's journal read at the instant of the kill. */
  journalAtKill?: Entry[]
}

/**
 * Spawns `sluice ARGS` and kills it with SIGKILL at `point` (if it gets there before it ends).
 * `armChanges` says from when its ChangeResourceRecordSets are counted for in-flight and lost
 * kills (at once by default; abort --rollback counts from its rollback, not the run's own revert).
 */
export function killAt(fx: Fixture, args: string[], point: KillPoint | null, options: {runId?: string; armChanges?: RegExp} = {}): {ended: Promise<Ended>} {
  const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, NO_COLOR: '1', ...fx.env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  let killed = false
  let journalAtKill: Entry[] | undefined
  let alive = true
  const timers: NodeJS.Timeout[] = []
  const kill = () => {
    if (killed || !alive) return
    killed = true
    child.kill('SIGKILL')
    if (options.runId) journalAtKill = journalFile(fx, options.runId)
  }
  let armed = options.armChanges === undefined
  let changes = 0
  const held: string[] = []
  if (point?.kind === 'in-flight' || point?.kind === 'lost') {
    fx.proxy.onCall = (call) => {
      if (!armed || killed || call.operation !== 'ChangeResourceRecordSets') return
      if (++changes !== point.n) return
      // Held before the proxy forwards it: onCall runs before the proxy looks at its holds.
      if (point.kind === 'lost') {
        fx.proxy.hold('ChangeResourceRecordSets')
        held.push('ChangeResourceRecordSets')
      }
      kill()
    }
  }
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => {
    stderr += d
    if (!armed && options.armChanges?.test(stderr)) armed = true
    if (point?.kind === 'line' && (stderr.match(new RegExp(point.pattern.source, 'g')) ?? []).length >= point.n) kill()
  })
  if (point?.kind === 'delay' && point.from === undefined) timers.push(setTimeout(kill, point.ms))
  let watcher: FSWatcher | undefined
  if (point?.kind === 'entry' && options.runId) {
    const runId = options.runId
    const count = () => journalFile(fx, runId).filter((e) => e.type === point.type).length
    const already = count()
    const check = () => {
      if (count() > already) kill()
    }
    // Told by the kernel as each entry is appended; the poll is in case a change is missed.
    watcher = watch(join(fx.env.SLUICE_STATE, 'runs', `${runId}.jsonl`), check)
    timers.push(setInterval(check, 20))
  }
  if (point?.kind === 'control' || (point?.kind === 'delay' && point.from === 'control')) {
    const poll = setInterval(() => {
      if (!options.runId || !controlWritten(fx, options.runId)) return
      clearInterval(poll)
      if (point.kind === 'delay') timers.push(setTimeout(kill, point.ms))
      else kill()
    }, 5)
    timers.push(poll)
  }
  const ended = new Promise<Ended>((resolve) =>
    child.on('close', (code, signal) => {
      alive = false
      for (const t of timers) clearTimeout(t)
      watcher?.close()
      if (point?.kind === 'in-flight' || point?.kind === 'lost') fx.proxy.onCall = undefined
      // The held change was never made; later calls go through.
      for (const op of held) fx.proxy.release(op)
      resolve({code, signal, stdout, stderr, killed, ...(journalAtKill ? {journalAtKill} : {})})
    }),
  )
  return {ended}
}

/** One ChangeResourceRecordSets that took effect, with its weights and when it reached the proxy. */
export interface Change {
  at: number
  weights: Record<string, number>
}

/** Every weights change moto made, in order (held calls never were; a killed client's forwarded call was). */
export function changesSeen(fx: Fixture): Change[] {
  return fx.proxy
    .of('ChangeResourceRecordSets')
    .filter((c) => c.status === 200)
    .map((c) => {
      const sets = [...c.body.matchAll(/<SetIdentifier>([^<]+)<\/SetIdentifier>[\s\S]*?<Weight>(\d+)<\/Weight>/g)]
      return {at: c.at, weights: Object.fromEntries(sets.map((m) => [m[1], Number(m[2])]))}
    })
}

export const mailboxShare = (w: Record<string, number>) => (100 * (w.mailbox ?? 0)) / ((w.mailbox ?? 0) + (w.maintenance ?? 0))

export const liveWeights = (fx: Fixture) => weights(fx.targets.zoneId, fx.targets.record)

export async function journalStatus(fx: Fixture, runId: string): Promise<{status: string; entries: Entry[]}> {
  const shown = await sluice(['journal', runId, '--json'], {env: fx.env})
  if (shown.code !== 0) throw new Error(`sluice journal ${runId} --json: exit ${shown.code}\n${shown.stderr}`)
  return JSON.parse(shown.stdout) as {status: string; entries: Entry[]}
}

export async function locksLeft(fx: Fixture): Promise<unknown[]> {
  const shown = await sluice(['locks', '--json'], {env: fx.env})
  if (shown.code !== 0) throw new Error(`sluice locks --json: exit ${shown.code}\n${shown.stderr}`)
  return (JSON.parse(shown.stdout) as {locks: unknown[]}).locks
}

/** Runs `check` at most `limit` at a time: trials share two cores and one moto. */
export function limiter(limit: number): <T>(check: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: Array<() => void> = []
  return async (check) => {
    // A slot freed is handed to the next waiting, never left for a newcomer to take first.
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await check()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running--
    }
  }
}
