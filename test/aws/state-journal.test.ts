import {readdirSync, readFileSync, truncateSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {journalOf, killRampWhen, onlyRunId, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('journal integrity and rollback', () => {
  it('a torn last line is reported, and resume refuses to guess and says what to check', async () => {
    await killRampWhen(fx, /blue at 30%/)
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
    expect(await weightsOf(fx)).toEqual({blue: 30, green: 70})
  }, 120_000)

  it('rollback after a completed ramp restores the original weights exactly, read back from the API', async () => {
    const file = runbook('ramp', `  - {action: ramp, set: blue, schedule: [25, 100], bake: 1}\n`)
    const done = await sluice(['run', file, '--yes', '--json'], {env: fx.env})
    expect(done.code, done.stderr).toBe(0)
    const runId = JSON.parse(done.stdout).runId as string
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    // Not confirmed (no terminal, no --yes): refused, nothing changed. The ramp had no gate, so the way back is taken --ungated.
    const refused = await sluice(['rollback', runId, '--ungated'], {env: fx.env})
    expect(refused.code).toBe(4)
    expect(refused.stderr).toMatch(/needs an answer, but this run is not interactive/)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    const rolled = await sluice(['rollback', runId, '--yes', '--ungated'], {env: fx.env})
    expect(rolled.code, rolled.stderr).toBe(0)
    expect(rolled.stdout).toContain('set the weights of')
    expect(await weightsOf(fx)).toEqual({blue: 0, green: 100})
    expect((await journalOf(runId, fx.env)).status).toBe('rolled-back')
  }, 120_000)
})

it('keeps nothing secret in the journal', () => {
  const dir = join(fx.dir, 'state', 'runs')
  for (const f of (() => {
    try {
      return readdirSync(dir)
    } catch {
      return []
    }
  })()) {
    expect(readFileSync(join(dir, f), 'utf8')).not.toMatch(/testing|AWS_SECRET|aws_secret_access_key/i)
  }
})
