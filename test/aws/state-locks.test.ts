import {describe, expect, it} from 'vitest'
import {type CliResult} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {uniqueName} from './seed.js'
import {spawnRun} from './spawned-run.js'
import {runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('locks', () => {
  async function race(env: Record<string, string>): Promise<[{code: number | null; stderr: string}, CliResult]> {
    // Two runbooks on one record (the same runbook twice is refused before any lock: one run per runbook).
    // The first holds its locks at an approval while the second tries, then is approved and finishes.
    const file = runbook(
      'held',
      `  - {action: ramp, set: blue, schedule: [20], bake: 1}
  - {action: approve, message: Go on to 40%?}
  - {action: ramp, set: blue, schedule: [40], bake: 1}
`,
    )
    const other = runbook('other-team', `  - {action: ramp, set: green, schedule: [100], bake: 1}\n`)
    const first = spawnRun(['run', file, '--yes'], env)
    await first.seen(/waiting for approval/)
    const second = await sluice(['run', other, '--yes'], {env})
    expect((await sluice(['promote', await first.runId()], {env})).code).toBe(0)
    return [await first.ended, second]
  }

  it('two runs on the same record: exactly one proceeds, the other exits 4 naming the holder', async () => {
    const [first, second] = await race(fx.env)
    expect(first.code, first.stderr).toBe(0)
    expect(second.code).toBe(4)
    expect(second.stderr).toMatch(
      /^Error: route53:.* is locked by run \d{8}-\d{6}-[0-9a-f]{4} of .+ on .+ \(pid \d+\) since \d{4}-\d\d-\d\dT.*, last heartbeat \d{4}-.*: that process is alive/m,
    )
  }, 120_000)

  it('the same with the team store in DynamoDB, from two processes', async () => {
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`}
    const [first, second] = await race(env)
    expect(first.code, first.stderr).toBe(0)
    expect(second.code).toBe(4)
    expect(second.stderr).toMatch(/is locked by run .* \(pid \d+\) since .*, last heartbeat .*: that process is alive/)
  }, 120_000)
})
