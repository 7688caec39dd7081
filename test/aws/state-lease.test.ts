import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {elsewhere} from '../helpers/elsewhere.js'
import {spawnRun} from './spawned-run.js'
import {seedS3State, uniqueName} from './seed.js'
import {cfg, killRampWhen, LEASE, onlyRunId, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

/** Starts a run and resolves with its id once its stderr says it waits for an approval. */
async function liveRun(file: string, env: Record<string, string>) {
  const {spawn} = await import('node:child_process')
  const {runJs} = await import('../helpers/cli.js')
  const child = spawn(process.execPath, [runJs, 'run', file, '--yes'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  const done = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)))
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      if (/waiting for approval/.test(stderr)) resolve()
    })
    void done.then(() => reject(new Error(`the run ended first:\n${stderr}`)))
  })
  return {pid: child.pid!, done, runId: await onlyRunId(env)}
}

describe('locks are leases: resume of a live run is refused, of a dead one proceeds', () => {
  // Held alive at an approval, for as long as the test needs and not a second longer: no bake to
  // outlast a busy machine's resume, nor to wait out afterwards.
  const held = `  - {action: ramp, set: blue, schedule: [20], bake: 1}
  - {action: approve, message: Go on to 40%?}
  - {action: ramp, set: blue, schedule: [40], bake: 1}
`

  it.each([
    ['local', async (env: Record<string, string>) => env],
    ['DynamoDB', async (env: Record<string, string>) => ({...env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
    ['S3', async (env: Record<string, string>) => ({...env, SLUICE_STATE: await seedS3State(cfg)})],
  ])(
    '%s: `resume RUN` while RUN is running exits 4 naming the holder, and the run goes on unharmed',
    async (_store, envOf) => {
      const env = await envOf(fx.env)
      const run = await liveRun(runbook('held', held), env)
      const resumed = await sluice(['resume', run.runId, '--yes'], {env})
      expect(resumed.code, resumed.stderr).toBe(4)
      expect(resumed.stderr).toMatch(
        new RegExp(
          `^Error: \\S+ is locked by run ${run.runId} of \\S+ on \\S+ \\(pid ${run.pid}\\) since \\d{4}-[^,]+, last heartbeat \\d{4}-[^:]+:\\d\\d:[^:]+: that process is alive \\(it renewed its ${LEASE} s lease while sluice watched\\)`,
          'm',
        ),
      )
      // Unharmed: it keeps its locks through a whole lease after the refusal (a run whose lock was
      // taken would stop before its next change), then goes on when approved and finishes.
      await new Promise((r) => setTimeout(r, Number(LEASE) * 1000))
      const approved = await sluice(['promote', run.runId], {env})
      expect(approved.code, approved.stderr).toBe(0)
      expect(await run.done).toBe(0)
      expect(await weightsOf(fx)).toEqual({blue: 40, green: 60})
    },
    120_000,
  )

  it.each([
    ['local', async (env: Record<string, string>) => env],
    ['S3', async (env: Record<string, string>) => ({...env, SLUICE_STATE: await seedS3State(cfg)})],
  ])(
    "%s: after kill -9 on this host, resume takes the dead run's locks at once (its pid is gone) and finishes the run",
    async (_store, envOf) => {
      const env = await envOf(fx.env)
      await killRampWhen(fx, /blue at 10%/, env)
      const runId = await onlyRunId(env)
      const resumed = await sluice(['resume', runId, '--yes'], {env})
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.stderr).toMatch(new RegExp(`is locked by run ${runId} .*: that process is gone from this host, so its locks are taken now`))
      expect(resumed.stderr).not.toContain('watching for up to')
      expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
      const locks = await sluice(['locks', '--json'], {env})
      expect(JSON.parse(locks.stdout)).toEqual({locks: []})
    },
    120_000,
  )

  it('killed mid-change on another host: resume waits one lease, not two, and says from its first line what it waits for', async () => {
    // Killed by the proxy, not the clock, so its bakes need be no longer than a second.
    const file = runbook('ramp', `  - {action: ramp, set: blue, schedule: [10, 30, 100], bake: 1}\n`)
    // Killed while its second weight change is in flight: intent recorded, outcome never.
    const run = spawnRun(['run', file, '--yes'], elsewhere(fx.env))
    fx.proxy.onCall = (call) => {
      if (call.operation === 'ChangeResourceRecordSets' && fx.proxy.count('ChangeResourceRecordSets') === 2) run.signal('SIGKILL')
    }
    expect((await run.ended).signal).toBe('SIGKILL')
    fx.proxy.onCall = undefined
    const runId = await onlyRunId(fx.env)
    const started = Date.now()
    const resumed = spawnRun(['resume', runId, '--yes'], fx.env)
    const said = await resumed.seen(/watching for up to \d+ s whether that process is alive/)
    const end = await resumed.ended
    expect(end.code, end.stderr).toBe(0)
    // Said first, after the store it uses, and then waited out: the lease runs from the notice on.
    const lines = end.stderr.split('\n')
    expect(lines[0]).toMatch(/^using /)
    expect(lines[1], 'the wait is the first thing resume says').toMatch(/watching for up to \d+ s whether that process is alive/)
    expect(end.at - said, 'the wait comes after the notice').toBeGreaterThan(0)
    // Both locks (the journal's and the record's) in that one notice, waited out together.
    expect(end.stderr).toMatch(
      new RegExp(
        `route53:\\S+ is locked by run ${runId} of \\S+ on far-away-host \\(pid \\d+\\); journal:${runId} is locked by run ${runId} of \\S+ on far-away-host`,
      ),
    )
    expect(end.stderr.match(/watching for up to/g)).toHaveLength(1)
    const waited = end.at - started
    console.log(`resume after a kill -9 on another host, lease ${LEASE} s: done in ${waited} ms; ${lines[1]}`)
    expect(waited).toBeGreaterThanOrEqual(Number(LEASE) * 1000)
    expect(end.stderr).toMatch(/found on resume: weights .*: (applied|not applied)/)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
  }, 120_000)
})
