import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {killWhen, onlyRunId, ramp, runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
const current = useStateFixture()
beforeEach(() => {
  fx = current()
})
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('locks', () => {
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
  }, 120_000)
})
