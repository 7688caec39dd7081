import {spawn} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, expect, inject} from 'vitest'
import {runJs} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {testLease} from './lengths.js'
import {awsTestEnv, clientConfig} from './moto.js'
import {RecordingProxy} from './proxy.js'
import {readWeights, registeredTargets} from './readback.js'
import {seedLoadBalancer, seedZone, uniqueName} from './seed.js'

/**
 * What the state tests (journal, resume, locks, rollback, freeze across processes) share, split
 * over several files so vitest runs them in parallel workers against the one moto server.
 */
export const moto = inject('motoEndpoint')
export const cfg = clientConfig(moto)

export interface Fixture {
  proxy: RecordingProxy
  zoneId: string
  record: string
  targetGroupArn: string
  dir: string
  env: Record<string, string>
}

/** The lease spawned runs hold their locks by (test/aws/lengths.ts). */
export {LEASE} from './lengths.js'

/** A runbook for the fixture's record (sets blue and green) and target group (pool blue). */
export function runbook(fx: Fixture, name: string, steps: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  dns: {zone: ${fx.zoneId}, record: ${fx.record}, ttl: 1, sets: {blue: blue, green: green}}
  targetGroups: {blue: ${fx.targetGroupArn}}
steps:
${steps}`,
  )
  return file
}

/** Starts a live run and kills it with SIGKILL once its stderr matches `when`. */
export async function killWhen(args: string[], when: RegExp, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`never saw ${when} in:\n${stderr}`)), 60_000)
      child.stderr.on('data', (d) => {
        stderr += d
        if (when.test(stderr)) {
          clearTimeout(timer)
          child.kill('SIGKILL')
          resolve()
        }
      })
      child.on('exit', () => {
        clearTimeout(timer)
        reject(new Error(`the run ended before it could be killed:\n${stderr}`))
      })
    })
  } finally {
    child.kill('SIGKILL')
  }
  await new Promise((r) => child.once('close', r))
  return stderr
}

/** Starts a live run of the ramp and kills it once `when` shows: the unfinished run most state tests start from. Returns its runbook. */
export async function killRampWhen(fx: Fixture, when: RegExp, env: Record<string, string> = fx.env): Promise<string> {
  const file = runbook(fx, 'ramp', ramp)
  await killWhen(['run', file, '--yes'], when, env)
  return file
}

export async function onlyRunId(env: Record<string, string>): Promise<string> {
  const list = await sluice(['journal', '--json'], {env})
  const runs = JSON.parse(list.stdout).runs as Array<{runId: string; status: string}>
  expect(runs).toHaveLength(1)
  return runs[0].runId
}

export async function journalOf(runId: string, env: Record<string, string>) {
  const shown = await sluice(['journal', runId, '--json'], {env})
  expect(shown.code, shown.stderr).toBe(0)
  return JSON.parse(shown.stdout) as {
    status: string
    entries: Array<{type: string; mutation?: {phase: string; kind: string; ok?: boolean; before: unknown; after: unknown}}>
    torn: unknown
  }
}

/** The fixture's weights and registered targets, read back from the API. */
export const weightsOf = (fx: Fixture) => readWeights(cfg, fx.zoneId, fx.record)
export const registeredOf = (fx: Fixture) => registeredTargets(cfg, fx.targetGroupArn)

/** Ramp blue 10 → 30 → 60 → 100 with a 2 s bake: long enough to kill a run between two steps. */
export const ramp = `  - {action: ramp, set: blue, schedule: [10, 30, 60, 100], bake: 2}\n`

/**
 * Before each test of the calling file: a recording proxy in front of moto, a zone with a
 * weighted record (blue 0, green 100), a load balancer with 8 targets, a state directory, and the
 * environment for a spawned sluice. Returns the current fixture.
 * `onEach` is handed each test's fixture, as it is set up: most files keep it in a variable of their own.
 */
export function useStateFixture(onEach?: (fx: Fixture) => void): () => Fixture {
  let fx: Fixture | undefined
  beforeEach(async () => {
    const proxy = new RecordingProxy(moto)
    await proxy.start()
    const name = uniqueName('state')
    const zone = await seedZone(cfg, {zoneName: `${name}.example.com`, record: 'app', ttl: 1, sets: {blue: 0, green: 100}})
    const lb = await seedLoadBalancer(cfg, {name, targets: 8})
    const dir = mkdtempSync(join(tmpdir(), 'sluice-state-'))
    fx = {
      proxy,
      zoneId: zone.zoneId,
      record: zone.record,
      targetGroupArn: lb.targetGroupArn,
      dir,
      env: {...awsTestEnv(proxy.endpoint), SLUICE_STATE: join(dir, 'state'), ...testLease},
    }
    onEach?.(fx)
  })

  afterEach(async () => {
    await fx?.proxy.stop()
  })
  return () => {
    if (!fx) throw new Error('the state fixture is set up before each test')
    return fx
  }
}
