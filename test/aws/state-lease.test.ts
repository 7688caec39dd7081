import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {uniqueName} from './seed.js'
import {killWhen, LEASE, onlyRunId, ramp, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
const current = useStateFixture()
beforeEach(() => {
  fx = current()
})
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

/** Starts a run and resolves with its id once its stderr says it changed something. */
async function liveRun(file: string, env: Record<string, string>) {
  const {spawn} = await import('node:child_process')
  const {runJs} = await import('../helpers/cli.js')
  const child = spawn(process.execPath, [runJs, 'run', file, '--yes'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  const done = new Promise<number>((r) => child.on('close', (code) => r(code ?? -1)))
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      if (/blue at 20%/.test(stderr)) resolve()
    })
    void done.then(() => reject(new Error(`the run ended first:\n${stderr}`)))
  })
  return {pid: child.pid!, done, runId: await onlyRunId(env)}
}

describe('locks are leases: resume of a live run is refused, of a dead one proceeds', () => {
  const slow = `  - {action: ramp, set: blue, schedule: [20, 40], bake: 10}\n`

  it.each([
    ['local', (env: Record<string, string>) => env],
    ['DynamoDB', (env: Record<string, string>) => ({...env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
  ])('%s: `resume RUN` while RUN is running exits 4 naming the holder, and the run goes on unharmed', async (_store, envOf) => {
    const env = envOf(fx.env)
    const run = await liveRun(runbook('slow', slow), env)
    const resumed = await sluice(['resume', run.runId, '--yes'], {env})
    expect(resumed.code, resumed.stderr).toBe(4)
    expect(resumed.stderr).toMatch(new RegExp(
      `^Error: \\S+ is locked by run ${run.runId} of \\S+ on \\S+ \\(pid ${run.pid}\\) since \\d{4}-[^,]+, last heartbeat \\d{4}-[^:]+:\\d\\d:[^:]+: that process is alive \\(it renewed its ${LEASE} s lease while sluice watched\\)`, 'm'))
    expect(await run.done).toBe(0)
    expect(await weightsOf(fx)).toEqual({blue: 40, green: 60})
  }, 120_000)

  it('after kill -9, resume waits out the lease (by its own clock) and then finishes the run', async () => {
    const file = runbook('ramp', ramp)
    await killWhen(['run', file, '--yes'], /blue at 10%/, fx.env)
    const runId = await onlyRunId(fx.env)
    const started = Date.now()
    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toMatch(new RegExp(`is locked by run ${runId} .*: watching for up to ${LEASE} s whether that process is alive`))
    expect(Date.now() - started).toBeGreaterThanOrEqual(Number(LEASE) * 1000)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    const locks = await sluice(['locks', '--json'], {env: fx.env})
    expect(JSON.parse(locks.stdout)).toEqual({locks: []})
  }, 120_000)
})
