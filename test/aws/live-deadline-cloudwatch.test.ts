import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {DEADLINE, shortDeadline} from './lengths.js'
import {runGatedRampHanging, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {runIdOf} from './spawned-run.js'

let fx: Fixture
// The call deadline is set short (test/aws/lengths.ts), so the test waits seconds for it, not 30.
useLiveFixture((current) => (fx = current), {env: shortDeadline})
const deadline = Number(DEADLINE)

describe('CloudWatch going quiet during a bake, Route 53 fine', () => {
  it('the gate gives up at the call deadline ($SLUICE_AWS_DEADLINE_SECONDS), the ramp steps back to the last good weights, exit 1 naming the source', async () => {
    const {end, stoppedIn} = await runGatedRampHanging(fx, /maintenance at 50%/, 'GetMetricData')
    console.log(`GetMetricData never answering: exited ${end.code} ${stoppedIn.toFixed(1)} s after the read hung, after ${fx.proxy.held.length} attempts`)
    expect(end.code, end.stderr).toBe(1)
    expect(stoppedIn).toBeGreaterThan(deadline - 1)
    expect(stoppedIn).toBeLessThan(deadline + 10)
    expect(end.stderr).toMatch(
      /ERROR gate error-rate ≤ 1% over 60 s could not read its metrics at maintenance 50%: CloudWatch GetMetricData on app\/\S+ failed: Timeout: no answer within 5 s \(requests time out after 1\.7 s and are retried\); weights back to maintenance 20% \(mailbox=80 maintenance=20\)/,
    )
    // Not left on the step nobody judged: the weights read back are the 20% step's.
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 80, maintenance: 20})
    const shown = await sluice(['journal', runIdOf(end.stderr), '--json'], {env: fx.env})
    expect(JSON.parse(shown.stdout).status).toBe('failed')
  }, 120_000)
})
