import {spawn} from 'node:child_process'
import {chmodSync, mkdtempSync, readdirSync, readFileSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, inject, it} from 'vitest'
import {runJs, sluice, type CliResult} from '../helpers/cli.js'
import {awsTestEnv, clientConfig} from './moto.js'
import {RecordingProxy} from './proxy.js'
import {readWeights, registeredTargets} from './readback.js'
import {seedLoadBalancer, seedZone, uniqueName} from './seed.js'

const moto = inject('motoEndpoint')
const cfg = clientConfig(moto)

interface Fixture {
  proxy: RecordingProxy
  zoneId: string
  record: string
  targetGroupArn: string
  dir: string
  env: Record<string, string>
}
let fx: Fixture

const weights = () => readWeights(cfg, fx.zoneId, fx.record)
const registered = () => registeredTargets(cfg, fx.targetGroupArn)

function runbook(name: string, steps: string): string {
  const file = join(fx.dir, `${name}.yaml`)
  writeFileSync(file, `name: ${name}
targets:
  dns: {zone: ${fx.zoneId}, record: ${fx.record}, ttl: 1, sets: {blue: blue, green: green}}
  targetGroups: {blue: ${fx.targetGroupArn}}
steps:
${steps}`)
  return file
}

/** Starts a live run and kills it with SIGKILL once its stderr matches `when`. */
async function killWhen(args: string[], when: RegExp, env: Record<string, string>): Promise<string> {
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

async function onlyRunId(env: Record<string, string>): Promise<string> {
  const list = await sluice(['journal', '--json'], {env})
  const runs = JSON.parse(list.stdout).runs as Array<{runId: string; status: string}>
  expect(runs).toHaveLength(1)
  return runs[0].runId
}

async function journalOf(runId: string, env: Record<string, string>) {
  const shown = await sluice(['journal', runId, '--json'], {env})
  expect(shown.code, shown.stderr).toBe(0)
  return JSON.parse(shown.stdout) as {status: string; entries: Array<{type: string; mutation?: {phase: string; kind: string; ok?: boolean; before: unknown; after: unknown}}>; torn: unknown}
}

beforeEach(async () => {
  const proxy = new RecordingProxy(moto)
  await proxy.start()
  const name = uniqueName('state')
  const zone = await seedZone(cfg, {zoneName: `${name}.example.com`, record: 'app', ttl: 1, sets: {blue: 0, green: 100}})
  const lb = await seedLoadBalancer(cfg, {name, targets: 8})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-state-'))
  fx = {proxy, zoneId: zone.zoneId, record: zone.record, targetGroupArn: lb.targetGroupArn, dir, env: {...awsTestEnv(proxy.endpoint), SLUICE_STATE: join(dir, 'state')}}
})

afterEach(async () => {
  await fx.proxy.stop()
})

const ramp = `  - {action: ramp, set: blue, schedule: [10, 30, 60, 100], bake: 2}\n`

describe('kill -9 and resume', () => {
  it('mid-ramp: resume finishes it, the weights read back match an uninterrupted run, and the journal accounts for every change', async () => {
    const file = runbook('ramp', ramp)
    await killWhen(['run', file, '--yes'], /blue at 30%/, fx.env)
    expect(await weights()).toEqual({blue: 30, green: 70})
    const runId = await onlyRunId(fx.env)
    expect((await journalOf(runId, fx.env)).status).toBe('unfinished')

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`resuming run ${runId} (ramp) at step 1 of 1`)
    expect(await weights()).toEqual({blue: 100, green: 0})

    // The same runbook uninterrupted ends the same way.
    const again = runbook('again', `  - {action: ramp, set: green, schedule: [100], bake: 1}\n`)
    expect((await sluice(['run', again, '--yes'], {env: {...fx.env, SLUICE_STATE: join(fx.dir, 'other')}})).code).toBe(0)
    const straight = await sluice(['run', file, '--yes'], {env: {...fx.env, SLUICE_STATE: join(fx.dir, 'other')}})
    expect(straight.code, straight.stderr).toBe(0)
    expect(await weights()).toEqual({blue: 100, green: 0})

    // Every weight change that reached Route 53 for the killed and resumed run is in its journal.
    const journal = await journalOf(runId, fx.env)
    expect(journal.status).toBe('completed')
    const recorded = journal.entries.filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.ok).map((e) => (e.mutation!.after as Record<string, number>).blue)
    // 10 and 30 before the kill; 60 and 100 after the resume (30 was judged again, not redone).
    expect(recorded).toEqual([10, 30, 60, 100])
  }, 120_000)

  it('mid-cycle: resume returns the batch left out, cycles the rest, and every target is back', async () => {
    const hook = join(fx.dir, 'slow-restart.sh')
    const log = join(fx.dir, 'restarts.log')
    writeFileSync(hook, `#!/bin/sh\necho "$SLUICE_TARGET_ID" >> '${log}'\nsleep 1\n`)
    chmodSync(hook, 0o755)
    const file = runbook('cycle', `  - {action: cycle, pool: blue, batch: 2, restart: {command: [${hook}]}}\n`)
    const before = await registered()
    await killWhen(['run', file, '--yes'], /batch 2 of 4 \([^)]*\): restart/, fx.env)
    // The killed run left batch 2 out of rotation.
    expect((await registered()).length).toBe(6)
    const runId = await onlyRunId(fx.env)

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await registered()).toEqual(before)
    const restarted = readFileSync(log, 'utf8').trim().split('\n')
    expect(new Set(restarted)).toEqual(new Set(before))
    // Every deregistration in the journal has its registration.
    const journal = await journalOf(runId, fx.env)
    const done = journal.entries.filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.ok)
    const out = done.filter((e) => e.mutation!.kind === 'deregister').flatMap((e) => e.mutation!.before as string[])
    const back = done.filter((e) => e.mutation!.kind === 'register').flatMap((e) => e.mutation!.after as string[])
    expect(new Set(back)).toEqual(new Set(out))
    expect(new Set(out)).toEqual(new Set(before))
    // Batch calls, not per-target ones: the proxy saw exactly as many calls as the journal.
    expect(fx.proxy.count('DeregisterTargets')).toBe(out.length / 2)
  }, 120_000)
})

describe('locks', () => {
  async function race(env: Record<string, string>): Promise<[CliResult, CliResult]> {
    const file = runbook('slow', `  - {action: ramp, set: blue, schedule: [20, 40], bake: 3}\n`)
    const first = sluice(['run', file, '--yes'], {env})
    // Let the first take its locks before the second tries.
    await new Promise((r) => setTimeout(r, 2500))
    const second = await sluice(['run', file, '--yes'], {env})
    return [await first, second]
  }

  it('two runs on the same record: exactly one proceeds, the other exits 4 naming the holder', async () => {
    const [first, second] = await race(fx.env)
    expect(first.code, first.stderr).toBe(0)
    expect(second.code).toBe(4)
    expect(second.stderr).toMatch(/^Error: route53:.* is locked by run \d{8}-\d{6}-[0-9a-f]{4} of .+ on .+ since \d{4}-\d\d-\d\dT.*; if that run is dead, break the lock with --break-lock /m)
  }, 60_000)

  it('the same with the team store in DynamoDB, from two processes', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`}
    const [first, second] = await race(env)
    expect(first.code, first.stderr).toBe(0)
    expect(second.code).toBe(4)
    expect(second.stderr).toMatch(/is locked by run .* since /)
  }, 60_000)

  it('a dead run\'s lock is kept until it is broken on purpose with --break-lock', async () => {
    const file = runbook('ramp', ramp)
    await killWhen(['run', file, '--yes'], /blue at 10%/, fx.env)
    const runId = await onlyRunId(fx.env)
    const refused = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain(`locked by run ${runId}`)
    const broken = await sluice(['run', file, '--yes', '--break-lock', runId], {env: fx.env})
    expect(broken.code, broken.stderr).toBe(0)
    expect(broken.stderr).toContain(`broke 1 lock of run ${runId}`)
  }, 90_000)
})

describe('journal integrity and rollback', () => {
  it('a torn last line is reported, and resume refuses to guess and says what to check', async () => {
    const file = runbook('ramp', ramp)
    await killWhen(['run', file, '--yes'], /blue at 30%/, fx.env)
    const runId = await onlyRunId(fx.env)
    const path = join(fx.dir, 'state', 'runs', `${runId}.jsonl`)
    const size = readFileSync(path).length
    truncateSync(path, size - 25)
    const shown = await sluice(['journal', runId], {env: fx.env})
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/is a torn write \(\d+ bytes, cut off while it was written\)/)
    expect(shown.stdout).toContain('status: torn')
    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code).toBe(4)
    expect(resumed.stderr).toMatch(/torn write at line \d+ .* It will not resume on a guess\. Check .* with `sluice status`/)
    expect(await weights()).toEqual({blue: 30, green: 70})
  }, 90_000)

  it('rollback after a completed ramp restores the original weights exactly, read back from the API', async () => {
    const file = runbook('ramp', `  - {action: ramp, set: blue, schedule: [25, 100], bake: 1}\n`)
    const done = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(done.code, done.stderr).toBe(0)
    const runId = JSON.parse(done.stdout).runId as string
    expect(await weights()).toEqual({blue: 100, green: 0})
    const refused = await sluice(['rollback', runId], {env: fx.env})
    expect(refused.code).toBe(4)
    expect(await weights()).toEqual({blue: 100, green: 0})
    const rolled = await sluice(['rollback', runId, '--yes'], {env: fx.env})
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout).toContain('set the weights of')
    expect(await weights()).toEqual({blue: 0, green: 100})
    expect((await journalOf(runId, fx.env)).status).toBe('rolled-back')
  }, 60_000)
})

describe('freeze and freeze check, in another process', () => {
  it.each([
    ['the local store', () => fx.env],
    ['the team store', () => ({...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
  ])('with %s', async (_name, env) => {
    const e = env()
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
    const frozen = await sluice(['freeze', '--reason', 'mailbox recovery'], {env: e})
    expect(frozen.code, frozen.stderr).toBe(0)
    const check = await sluice(['freeze', 'check', '--json'], {env: e})
    expect(check.code).toBe(4)
    expect(JSON.parse(check.stdout)).toMatchObject({frozen: true, freeze: {reason: 'mailbox recovery'}})
    expect((await sluice(['unfreeze'], {env: e})).code).toBe(0)
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
  }, 60_000)
})

it('keeps nothing secret in the journal', () => {
  const dir = join(fx.dir, 'state', 'runs')
  for (const f of (() => { try { return readdirSync(dir) } catch { return [] } })()) {
    expect(readFileSync(join(dir, f), 'utf8')).not.toMatch(/testing|AWS_SECRET|aws_secret_access_key/i)
  }
})
