import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {gatedRamp, runIdOf, spawnRun, when} from './spawned-run.js'

let fx: Fixture
const current = useLiveFixture()
beforeEach(() => {
  fx = current()
})

describe('CloudWatch going quiet during a bake, Route 53 fine', () => {
  it('the gate gives up at the 30 s call deadline, the ramp steps back to the last good weights, exit 1 naming the source', async () => {
    await seedMetrics(fx, 0)
    const run = spawnRun(['run', gatedRamp(fx), '--yes'], fx.env)
    await run.seen(/maintenance at 50%/)
    fx.proxy.hold('GetMetricData')
    const hung = await when(() => fx.proxy.held.length > 0)
    const end = await run.ended
    const stoppedIn = (end.at - hung) / 1000
    console.log(`GetMetricData never answering: exited ${end.code} ${stoppedIn.toFixed(1)} s after the read hung, after ${fx.proxy.held.length} attempts`)
    expect(end.code, end.stderr).toBe(1)
    expect(stoppedIn).toBeGreaterThan(29)
    expect(stoppedIn).toBeLessThan(40)
    expect(end.stderr).toMatch(
      /ERROR gate error-rate ≤ 1% over 60 s could not read its metrics at maintenance 50%: CloudWatch GetMetricData on app\/\S+ failed: Timeout: no answer within 30 s .*; weights back to maintenance 20% \(mailbox=80 maintenance=20\)/,
    )
    // Not left on the step nobody judged: the weights read back are the 20% step's.
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 80, maintenance: 20})
    const shown = await sluice(['journal', runIdOf(end.stderr), '--json'], {env: fx.env})
    expect(JSON.parse(shown.stdout).status).toBe('failed')
  }, 120_000)
})
