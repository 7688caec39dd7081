import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {seedS3State} from './seed.js'
import {spawnRun} from './spawned-run.js'
import {cfg, runbook, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

// A run on the S3 store killed (kill -9) in the middle of its writes to the bucket: at each of a
// spread of its writes, once with the write landed and once with it never sent. Whatever is left
// reads back whole (an object is written whole or not at all: no journal entry or lock is torn),
// and `resume` finishes the run from there.

let fx: Fixture
useStateFixture((current) => (fx = current))

const steps = `  - {action: ramp, set: blue, schedule: [50, 100], bake: 1}\n`
const isWrite = (call: {service: string; method: string}) => call.service === 's3' && (call.method === 'PUT' || call.method === 'DELETE')

/**
 * The run's writes to count, from a call on: every write but a lock's renewal (a PUT to a lock
 * already written). Renewals come with the clock (one a third of a lease), so a run on a loaded
 * machine makes more of them than one on a quiet one; the other writes are the same in every run.
 */
function countedWrites(): (call: {service: string; method: string; path: string}) => boolean {
  const locks = new Set<string>()
  return (call) => {
    if (!isWrite(call)) return false
    if (call.method !== 'PUT' || !call.path.includes('/locks/')) return true
    if (locks.has(call.path)) return false
    locks.add(call.path)
    return true
  }
}

describe('the S3 store, killed in every kind of write of a run', () => {
  it('leaves each journal entry and lock as it was before or after the write, never torn; resume completes the run', async () => {
    // How many writes a whole run makes, from one that is not killed.
    const whole = {...fx.env, SLUICE_STATE: await seedS3State(cfg)}
    const before = fx.proxy.calls.length
    const clean = await sluice(['run', runbook(fx, 'counted', steps), '--yes'], {env: whole})
    expect(clean.code, clean.stderr).toBe(0)
    const writes = fx.proxy.calls.slice(before).filter(countedWrites()).length
    expect(writes).toBeGreaterThan(8)
    // Six points spread over the run's writes, the first and the last among them, landed and not by turns.
    const points = [...new Set(Array.from({length: 6}, (_, i) => 1 + Math.round((i * (writes - 1)) / 5)))]
    for (const [n, k] of points.entries()) {
      const landed = n % 2 === 0
      const env = {...fx.env, SLUICE_STATE: await seedS3State(cfg)}
      let seen = 0
      let held: string | undefined
      const counted = countedWrites()
      const run = spawnRun(['run', runbook(fx, `killed-${k}`, steps), '--yes'], env)
      fx.proxy.onCall = (call) => {
        if (!counted(call) || ++seen !== k) return
        // Never sent on: held, unanswered, as a write cut off by the kill would be.
        if (!landed) fx.proxy.hold((held = call.operation))
        run.signal('SIGKILL')
      }
      expect((await run.ended).signal, `killed at write ${k} of ${writes}`).toBe('SIGKILL')
      fx.proxy.onCall = undefined
      // Only that one request is dropped: later writes to the same object go through.
      if (held) fx.proxy.release(held)
      const listed = await sluice(['journal', '--json'], {env})
      expect(listed.code, `write ${k} (${landed ? 'landed' : 'not sent'}): ${listed.stderr}`).toBe(0)
      const runs = (JSON.parse(listed.stdout) as {runs: Array<{runId: string}>}).runs
      // Killed at its very first write (the run's first entry) with it not sent: no run at all.
      if (runs.length === 0) {
        expect([k, landed]).toEqual([1, false])
        continue
      }
      const runId = runs[0].runId
      const shown = await sluice(['journal', runId, '--json'], {env})
      expect(shown.code, shown.stderr).toBe(0)
      const entries = (JSON.parse(shown.stdout) as {entries: Array<{seq: number}>; torn: unknown}).entries
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1))
      expect((JSON.parse(shown.stdout) as {torn: unknown}).torn).toBeNull()
      expect((await sluice(['locks', '--json'], {env})).code).toBe(0)
      // The kill left it dead (its pid is gone): resume takes its locks at once and finishes it, or it had ended.
      const resumed = await sluice(['resume', runId, '--yes'], {env})
      expect([0, 4], `resume after a kill at write ${k}: ${resumed.stderr}`).toContain(resumed.code)
      if (resumed.code === 4) expect(resumed.stderr).toMatch(/has ended|is not running: it ended/)
      expect(await weightsOf(fx), `after a kill at write ${k} and its resume`).toEqual({blue: 100, green: 0})
      expect(JSON.parse((await sluice(['locks', '--json'], {env})).stdout)).toEqual({locks: []})
    }
  }, 300_000)
})
