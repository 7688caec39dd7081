import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {DEADLINE, shortDeadline} from './lengths.js'
import {runGatedRampHanging, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {runIdOf} from './spawned-run.js'

let fx: Fixture
// The call deadline is set short (test/aws/lengths.ts), so the test waits seconds for it, not 30.
useLiveFixture((current) => (fx = current), {env: shortDeadline})
const deadline = Number(DEADLINE)

describe('a Route 53 endpoint that takes a change and never answers', () => {
  it('gives up at the call deadline ($SLUICE_AWS_DEADLINE_SECONDS), stays at the last good weights, leaves a journal that resumes', async () => {
    // The 50% step's change is read and never answered, nor are the SDK's retries of it.
    const {end, stoppedIn} = await runGatedRampHanging(fx, /maintenance at 20%/, 'ChangeResourceRecordSets')
    console.log(
      `ChangeResourceRecordSets never answering: exited ${end.code} ${stoppedIn.toFixed(1)} s after the call hung, after ${fx.proxy.held.length} attempts`,
    )
    expect(end.code, end.stderr).toBe(1)
    // The call's deadline, not the attempt count, ends it: a third of it per attempt, retried, and
    // the call given up at the deadline (five attempts would take longer), which the message names.
    expect(stoppedIn).toBeGreaterThan(deadline - 1)
    expect(stoppedIn).toBeLessThan(deadline + 10)
    expect(fx.proxy.held.length).toBeGreaterThanOrEqual(2)
    expect(end.stderr).toMatch(
      /ERROR Route53 ChangeResourceRecordSets on \S+ \S+ A failed: Timeout: no answer within 5 s \(requests time out after 1\.7 s and are retried\); weights back to maintenance 20% \(mailbox=80 maintenance=20\)/,
    )
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 80, maintenance: 20})

    // The run ended on record (not 'unfinished'), let go of its locks, and can be resumed.
    const runId = runIdOf(end.stderr)
    const shown = await sluice(['journal', runId], {env: fx.env})
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/status: failed/)
    fx.proxy.release('ChangeResourceRecordSets')
    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
  }, 120_000)
})
