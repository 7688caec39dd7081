import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {journalOf, killRampWhen, onlyRunId, runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

interface Lock {
  resource: string
  runId: string
  lockId: string
  pid: number
}
const locksOf = async (env: Record<string, string>) => {
  const listed = await sluice(['locks', '--json'], {env})
  expect(listed.code, listed.stderr).toBe(0)
  return (JSON.parse(listed.stdout) as {locks: Lock[]}).locks
}

describe('--break-lock LOCK_ID (like terraform force-unlock)', () => {
  it("takes a lock id from `sluice locks`, asks first, and is journalled in the broken run's journal", async () => {
    await killRampWhen(fx, /blue at 10%/)
    const runId = await onlyRunId(fx.env)
    const locks = await locksOf(fx.env)
    expect(locks.map((l) => l.runId)).toEqual(locks.map(() => runId))
    const lock = locks.find((l) => l.resource.startsWith('route53:'))!
    expect(lock.lockId).toMatch(/^[0-9a-f]{16}$/)
    // Another runbook on the same record: the dead run's own runbook is refused before any lock (one run per runbook).
    const other = runbook('other-team', `  - {action: ramp, set: blue, schedule: [100], bake: 1}\n`)
    // A run id is not a lock id; and the lock error never shows the lock id.
    const wrongId = await sluice(['run', other, '--yes', '--break-lock', runId], {env: fx.env})
    expect(wrongId.code).toBe(2)
    expect(wrongId.stderr).toContain('--break-lock: expected a lock id as `sluice locks` shows it')
    // No terminal and no --yes: refused, nothing broken.
    const unasked = await sluice(['run', other, '--break-lock', lock.lockId], {env: fx.env})
    expect(unasked.code, unasked.stderr).toBe(4)
    expect(unasked.stderr).toContain(`Break lock ${lock.lockId} on ${lock.resource}? needs an answer`)
    expect((await locksOf(fx.env)).map((l) => l.lockId)).toContain(lock.lockId)
    const broken = await sluice(['run', other, '--yes', '--break-lock', lock.lockId], {env: fx.env})
    expect(broken.code, broken.stderr).toBe(0)
    expect(broken.stderr).toContain(`broke lock ${lock.lockId} on ${lock.resource} (run ${runId}`)
    const journal = await journalOf(runId, fx.env)
    expect(journal.entries.filter((e) => e.type === 'lock-broken')).toEqual([
      expect.objectContaining({lockId: lock.lockId, resource: lock.resource, operator: expect.any(String), host: expect.any(String)}),
    ])
    expect(await locksOf(fx.env)).toEqual([])
  }, 120_000)

  it('is refused while the holder is alive (its lease renewed while sluice watched)', async () => {
    // Held alive at an approval for as long as the test needs, then approved: no bakes to wait out.
    const file = runbook(
      'held',
      `  - {action: ramp, set: blue, schedule: [20], bake: 1}
  - {action: approve, message: Go on to 40%?}
  - {action: ramp, set: blue, schedule: [40], bake: 1}
`,
    )
    const first = sluice(['run', file, '--yes'], {env: fx.env})
    let locks: Lock[] = []
    for (let i = 0; i < 60 && locks.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 500))
      locks = await locksOf(fx.env)
    }
    const lock = locks.find((l) => l.resource.startsWith('route53:'))!
    const other = runbook('other-team', `  - {action: ramp, set: green, schedule: [100], bake: 1}\n`)
    const refused = await sluice(['run', other, '--yes', '--break-lock', lock.lockId], {env: fx.env})
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stderr).toMatch(new RegExp(`will not break lock ${lock.lockId}: its holder is alive \\(run ${lock.runId} of .* pid ${lock.pid}`))
    expect((await sluice(['promote', lock.runId], {env: fx.env})).code).toBe(0)
    const finished = await first
    expect(finished.code, finished.stderr).toBe(0)
  }, 120_000)
})
