import {spawn} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {runJs} from '../helpers/cli.js'
import type {Fixture} from './live-fixture.js'

/** A spawned sluice that a test can watch and signal while it runs. */
export interface SpawnedRun {
  /** Resolves once stderr matches, with the time it did; rejects if the run ends first. */
  seen(pattern: RegExp): Promise<number>
  signal(name: NodeJS.Signals): void
  /** The run id its plan line names (`plan: N steps, live run RUN`), once it has printed it. */
  runId(): Promise<string>
  /** How it ended, and when (Date.now()). */
  ended: Promise<{code: number | null; signal: NodeJS.Signals | null; at: number; stdout: string; stderr: string}>
}

export function spawnRun(args: string[], env: Record<string, string>): SpawnedRun {
  const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  const waiting: Array<{pattern: RegExp; resolve: (at: number) => void}> = []
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => {
    stderr += d
    for (const w of [...waiting]) {
      if (w.pattern.test(stderr)) {
        waiting.splice(waiting.indexOf(w), 1)
        w.resolve(Date.now())
      }
    }
  })
  const ended = new Promise<{code: number | null; signal: NodeJS.Signals | null; at: number; stdout: string; stderr: string}>((resolve) =>
    child.on('close', (code, signal) => resolve({code, signal, at: Date.now(), stdout, stderr})),
  )
  return {
    seen: (pattern) =>
      pattern.test(stderr)
        ? Promise.resolve(Date.now())
        : Promise.race([
            new Promise<number>((resolve) => waiting.push({pattern, resolve})),
            ended.then((end) => Promise.reject(new Error(`the run ended (${end.code}) before stderr showed ${pattern}:\n${end.stderr}`))),
          ]),
    signal: (name) => child.kill(name),
    runId: async () => {
      await Promise.race([
        new Promise<number>((resolve) =>
          /live run \d{8}-\d{6}-[0-9a-f]{4}/.test(stderr) ? resolve(0) : waiting.push({pattern: /live run \d{8}-\d{6}-[0-9a-f]{4}/, resolve}),
        ),
        ended.then((end) => Promise.reject(new Error(`the run ended (${end.code}) before it named its run id:\n${end.stderr}`))),
      ])
      return /live run (\d{8}-\d{6}-[0-9a-f]{4})/.exec(stderr)![1]
    },
    ended: ended.finally(() => child.kill('SIGKILL')),
  }
}

/** Resolves with the time `check` first holds, polling every 20 ms. */
export async function when(check: () => boolean, timeoutMs = 60_000): Promise<number> {
  const give = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > give) throw new Error('the condition never held')
    await new Promise((r) => setTimeout(r, 20))
  }
  return Date.now()
}

/**
 * A ramp of maintenance 20% → 50% → 100% behind a CloudWatch error-rate gate, with waits as short
 * as the seeded TTL allows (as test/aws/live-runbook.ts shortens the shipped runbooks): each step
 * bakes `bake` s (1 by default) and passes on one good verdict, so a step takes about a second.
 */
export function gatedRamp(fx: Fixture, bake = 1, name = 'gated-ramp'): string {
  const file = join(fx.dir, `${name}-${bake}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  metrics: {source: cloudwatch, loadBalancer: ${fx.targets.loadBalancer}}
steps:
  - action: ramp
    set: maintenance
    schedule: [20, 50, 100]
    bake: ${bake}
    gate: {metric: error-rate, threshold: 1, window: 60, interval: 1, successes: 1}
`,
  )
  return file
}

/** The run id a run's stderr names in its resume hint. */
export function runIdOf(stderr: string): string {
  const m = /sluice resume (\S+?)`/.exec(stderr)
  if (!m) throw new Error(`no resume hint in:\n${stderr}`)
  return m[1]
}
