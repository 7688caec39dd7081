import {spawn} from 'node:child_process'
import {chmodSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {expect} from 'vitest'
import {runJs} from '../helpers/cli.js'
import {sluiceInProcess} from '../helpers/command.js'
import {dnsRunbook, seedMetrics, type Fixture} from './live-fixture.js'
import {testLease} from './lengths.js'

export type WatchedEntry = {
  seq: number
  type: string
  step?: number
  status?: string
  effect?: string
  control?: {kind: string; operator: string}
  mutation?: {step: number; phase: string; kind: string}
}

/** A run's journal as `sluice watch RUN --json` prints it, entry by entry, while the run goes on. */
export function followJournal(runId: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [runJs, 'watch', runId, '--json'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  const entries: WatchedEntry[] = []
  let buffer = ''
  let stderr = ''
  child.stderr.on('data', (d) => (stderr += d))
  child.stdout.on('data', (d) => {
    buffer += d
    const lines = buffer.split('\n')
    buffer = lines.pop()!
    for (const line of lines) if (line.trim()) entries.push(JSON.parse(line) as WatchedEntry)
  })
  const ended = new Promise<number | null>((resolve) => child.on('close', resolve))
  return {
    entries,
    ended,
    /** Resolves once an entry matches, rejects after `timeoutMs` or if the watch ends first. */
    async until(match: (e: WatchedEntry) => boolean, what: string, timeoutMs = 60_000): Promise<WatchedEntry> {
      const give = Date.now() + timeoutMs
      let done = false
      void ended.then(() => (done = true))
      for (;;) {
        const found = entries.find(match)
        if (found) return found
        if (done || Date.now() > give)
          throw new Error(
            `never saw ${what} in the journal (watch ${done ? 'ended' : 'still running'}); ${entries.length} entries:\n${entries.map((e) => JSON.stringify(e)).join('\n')}\n${stderr}`,
          )
        await new Promise((r) => setTimeout(r, 50))
      }
    },
    stop: () => child.kill('SIGINT'),
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * One runbook with every step kind a pause must hold in, each long enough that a pause sent as it
 * starts lands inside it: a wait, a bake with no gate, a gated bake, a cycle between its two
 * batches (its first batch's restarts wait for the test's word), and an approval.
 */
export function everyStepKind(fx: Fixture): string {
  const slowHook = join(fx.dir, 'slow-restart.sh')
  // The first batch's restarts wait for the test's word (firstBatchGo), so the pause always lands
  // between batches however slowly the machine runs `sluice pause`; then each takes a second. (They
  // took 4 s when that was what let the pause land in time; the word made the wait pointless.)
  writeFileSync(slowHook, `#!/bin/sh\nwhile [ ! -e '${firstBatchGo(fx)}' ]; do sleep 0.1; done\nsleep 1\n`)
  chmodSync(slowHook, 0o755)
  const targetsAndSteps = `  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - {action: wait, for: 30}
  - {action: ramp, set: maintenance, schedule: [20], bake: 30}
  - action: ramp
    set: maintenance
    schedule: [50]
    bake: 30
    gate: {metric: error-rate, threshold: 1, window: 60, interval: 1, successes: 1}
  - {action: cycle, pool: mailbox, batch: 4, restart: {command: [${slowHook}], timeout: 60}}
  - {action: approve, message: Go on?}
`
  return dnsRunbook(fx, 'pause-everywhere', targetsAndSteps)
}

/** Both pause tests watch this one run of everyStepKind, started by `start` with or without a terminal, on the same metrics and leases. */
export async function startEveryStepKind<Run extends {ended: Promise<unknown>}>(
  fx: Fixture,
  start: (args: string[], env: Record<string, string>) => Run,
): Promise<{run: Run; env: Record<string, string>; running: () => boolean}> {
  await seedMetrics(fx, 0)
  const env = {...fx.env, ...testLease}
  const run = start(['run', everyStepKind(fx), '--yes'], env)
  let ended = false
  void run.ended.then(() => (ended = true))
  return {run, env, running: () => !ended}
}

/** `sluice ARGS` in this process (sluiceInProcess) with `env` over its environment, put back afterwards. */
export async function inProcessWith(env: Record<string, string>, args: string[]) {
  const saved = Object.entries(env).map(([name]) => [name, process.env[name]] as const)
  Object.assign(process.env, env)
  try {
    return await sluiceInProcess(args)
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
}

/** The file whose existence lets everyStepKind's first cycle batch finish its restarts. */
const firstBatchGo = (fx: Fixture): string => join(fx.dir, 'first-batch-go')

/**
 * Pauses the run in each step of everyStepKind and checks it holds there, alive, well past the
 * point the step would have gone on by itself; then a promote continues it and a second one
 * ends the step (or answers the approval). `alive` says whether the runner's process is still running.
 */
export async function pauseInEveryStep(fx: Fixture, runId: string, alive: () => boolean, env: Record<string, string>): Promise<void> {
  const journal = followJournal(runId, env)
  // Sent from this process, as another terminal would send them: fourteen controls in a row need no
  // process of their own each (the run, its watch and the terminal are the spawned ones).
  const send = async (kind: 'pause' | 'promote') => {
    const sent = await inProcessWith(env, [kind, runId])
    expect(sent.exit, `${kind}: ${sent.stderr}`).toBe(0)
  }
  const count = (effect: string) => journal.entries.filter((e) => e.type === 'control' && e.effect === effect).length
  const deregistered = () => fx.proxy.of('DeregisterTargets').filter((c) => c.status === 200).length
  try {
    for (const [step, kind] of [
      [0, 'wait'],
      [1, 'bake with no gate'],
      [2, 'gated bake'],
      [3, 'cycle between batches'],
      [4, 'approval'],
    ] as const) {
      await journal.until((e) => e.type === 'step-start' && e.step === step, `step ${step + 1} (${kind}) start`)
      if (step === 3) await journal.until((e) => e.type === 'mutation' && e.mutation?.step === 3 && e.mutation.kind === 'deregister', 'the first batch drained')
      const paused = count('paused')
      await send('pause')
      await journal.until(() => count('paused') > paused, `the pause in the ${kind}`)
      // A pause used to end the process within a second. Held 3 s, alive and not moving on, is
      // the check; in the cycle, 3 s past the end of its first batch, when the second batch would
      // have been drained by then.
      const drained = deregistered()
      if (step === 3) {
        // The first batch finishes now; unpaused, the cycle would drain the second straight after.
        writeFileSync(firstBatchGo(fx), '')
        await journal.until(
          (e) => e.type === 'mutation' && e.mutation?.step === 3 && e.mutation.kind === 'register' && e.mutation.phase === 'outcome',
          'the first batch back',
        )
      }
      await sleep(3000)
      expect(alive(), `the run died while paused in the ${kind}`).toBe(true)
      expect(
        journal.entries.some((e) => e.type === 'step-end' && e.step === step),
        `the ${kind} ended while paused`,
      ).toBe(false)
      expect(
        journal.entries.some((e) => e.type === 'run-end'),
        `the run ended while paused in the ${kind}`,
      ).toBe(false)
      if (step === 3) expect(deregistered(), 'the cycle drained its second batch while paused').toBe(drained)
      const continued = count('continued')
      await send('promote')
      await journal.until(() => count('continued') > continued, `the promote that continues the ${kind}`)
      // The cycle goes on by itself once continued; the others wait out 30 s or an answer.
      if (step !== 3) await send('promote')
      await journal.until((e) => e.type === 'step-end' && e.step === step, `step ${step + 1} (${kind}) end`)
    }
    await journal.until((e) => e.type === 'run-end', 'the run end')
  } finally {
    journal.stop()
  }
}
