import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {elsewhere} from '../helpers/elsewhere.js'
import {spawnRun} from './spawned-run.js'
import {killWhen, LEASE, onlyRunId, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))

/** Rewrites every lock's fields (its heartbeat, its lease), as a damaged or hand-edited store might hold them. */
function rewriteLocks(fields: Record<string, unknown>): void {
  const dir = join(fx.env.SLUICE_STATE, 'locks')
  for (const f of readdirSync(dir)) {
    const lock = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>
    writeFileSync(join(dir, f), JSON.stringify({...lock, ...fields}))
  }
}
const heartbeatsAt = (iso: string) => rewriteLocks({heartbeat: iso})

const slow = `  - {action: ramp, set: blue, schedule: [10, 30, 60, 100], bake: 30}\n`

describe("controls judge liveness by pid on this host or by the lease moving, never by the holder's clock", () => {
  it('right after kill -9 on this host: pause and abort are refused at once (exit 4) naming the dead pid and resume/rollback, even with a heartbeat in 2099', async () => {
    await killWhen(['run', runbookFor(fx, 'killed', slow), '--yes'], /blue at 10%/, fx.env)
    const runId = await onlyRunId(fx.env)
    // A lease of two minutes: a control that waited one out instead of reading the pid could not
    // answer within a minute, however busy the machine; one that reads the pid answers in seconds.
    const lease = 120
    rewriteLocks({heartbeat: '2099-01-01T00:00:00.000Z', leaseSeconds: lease})
    for (const kind of ['pause', 'abort', 'promote']) {
      const started = Date.now()
      const sent = await sluice([kind, runId], {env: fx.env})
      expect(sent.code, sent.stderr).toBe(4)
      expect(sent.stderr).toMatch(
        new RegExp(
          `run ${runId} is not running: it never ended, and its process on \\S+ is dead \\(pid \\d+ gone\\); \`sluice resume ${runId}\` continues it, \`sluice rollback ${runId}\` undoes what it changed`,
        ),
      )
      // Judged by the pid, not by waiting out a lease.
      expect(sent.stderr).not.toContain('watching its lease')
      expect(Date.now() - started).toBeLessThan((lease / 2) * 1000)
    }
    const listed = await sluice(['journal'], {env: fx.env})
    expect(listed.stdout).toMatch(new RegExp(`^${runId}  dead \\(pid \\d+ gone\\)\\s+killed`, 'm'))
    expect(JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs[0]).toMatchObject({
      runId,
      status: 'dead',
      detail: expect.stringMatching(/^pid \d+ gone$/),
    })
    const watched = await sluice(['watch', runId], {env: fx.env})
    expect(watched.code, watched.stderr).toBe(4)
    expect(watched.stderr).toContain(`run ${runId} is not running: it never ended`)
  }, 120_000)

  it('a runner on another host with its clock 3 minutes behind can be paused, watched and aborted', async () => {
    const run = spawnRun(['run', runbookFor(fx, 'skewed', slow), '--yes'], elsewhere(fx.env))
    await run.seen(/blue at 10%/)
    const runId = await onlyRunId(fx.env)
    expect(JSON.parse((await sluice(['journal', '--json'], {env: fx.env})).stdout).runs[0]).toMatchObject({runId, status: 'running'})
    const watch = spawnRun(['watch', runId], fx.env)
    const paused = await sluice(['pause', runId], {env: fx.env})
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.stderr).toContain(`run ${runId} is held by pid`)
    expect(paused.stdout).toMatch(
      /run by \S+ on far-away-host, pid \d+\) as control 1; the run took it up: paused: the run is at step 1 \(Ramp blue: 10% → 30% → 60% → 100%\)/,
    )
    const aborted = await sluice(['abort', runId], {env: fx.env})
    expect(aborted.code, aborted.stderr).toBe(0)
    expect(aborted.stdout).toContain('the run took it up: aborting: the run is at step 1 (Ramp blue: 10% → 30% → 60% → 100%)')
    const end = await run.ended
    expect(end.code, end.stderr).toBe(130)
    // Aborted in the first step's bake: back to the weights the run found, the last good ones.
    expect(await weightsOf(fx)).toEqual({blue: 0, green: 100})
    const watched = await watch.ended
    expect(watched.stdout).toMatch(/pause by .*: paused/)
    expect(watched.code, watched.stderr).toBe(130)
  }, 120_000)

  it('a dead runner on another host: a control waits at most one lease for its lease to move, then is refused, heartbeat in 2099 or not', async () => {
    await killWhen(['run', runbookFor(fx, 'far-killed', slow), '--yes'], /blue at 10%/, elsewhere(fx.env))
    const runId = await onlyRunId(fx.env)
    heartbeatsAt('2099-01-01T00:00:00.000Z')
    const started = Date.now()
    const sent = await sluice(['pause', runId], {env: fx.env})
    expect(sent.code, sent.stderr).toBe(4)
    expect(sent.stderr).toContain(`watching its lease for up to ${LEASE} s`)
    expect(sent.stderr).toMatch(new RegExp(`its process on far-away-host is dead \\(lease lapsed: not renewed in ${LEASE} s while sluice watched\\)`))
    expect(Date.now() - started).toBeGreaterThanOrEqual(Number(LEASE) * 1000)
  }, 120_000)
})
