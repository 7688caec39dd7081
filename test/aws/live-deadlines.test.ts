import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {runGatedRampHanging, seedMetrics, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {gatedRamp, runIdOf, spawnRun, when} from './spawned-run.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

const afterFirstStep = {mailbox: 80, maintenance: 20}
const journalStatus = async (runId: string) => {
  const shown = await sluice(['journal', runId, '--json'], {env: fx.env})
  expect(shown.code, shown.stderr).toBe(0)
  return (JSON.parse(shown.stdout) as {status: string}).status
}

describe('a hung or failing API mid-ramp, through bin/run.js against moto', () => {
  it.each([
    ['SIGINT (Ctrl-C)', 'SIGINT', 'interrupt:'],
    ['SIGTERM (kill, CI runners)', 'SIGTERM', 'SIGTERM:'],
    ['SIGHUP (a closed terminal, a dropped SSH session)', 'SIGHUP', 'SIGHUP:'],
  ] as const)(
    '%s while CloudWatch GetMetricData hangs: acts within 5 s, back at the last good weights, exit 130',
    async (_name, signal, note) => {
      // The 20% step's gate has passed once the 50% step is on: from then on CloudWatch goes quiet.
      const {end, stoppedIn} = await runGatedRampHanging(fx, /maintenance at 50%/, 'GetMetricData', (run) => run.signal(signal))
      console.log(`${signal} during a hung GetMetricData: exited ${end.code} ${stoppedIn.toFixed(1)} s after the call hung`)
      expect(end.code, end.stderr).toBe(130)
      expect(stoppedIn).toBeLessThan(5)
      expect(end.stderr).toContain(`${note} stopping at the next safe point`)
      expect(end.stderr).toMatch(/interrupted at maintenance 50%; weights back to maintenance 20% \(mailbox=80 maintenance=20\)/)
      expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual(afterFirstStep)
      // The run let go of its locks and left a journal that says how it ended.
      const runId = runIdOf(end.stderr)
      expect(await journalStatus(runId)).toBe('interrupted')
    },
    120_000,
  )

  it('SIGTERM while a Route 53 change hangs: the change is aborted, the weights stay at the last good step, exit 130', async () => {
    const {end, stoppedIn} = await runGatedRampHanging(fx, /maintenance at 20%/, 'ChangeResourceRecordSets', (run) => run.signal('SIGTERM'))
    console.log(`SIGTERM during a hung ChangeResourceRecordSets: exited ${end.code} ${stoppedIn.toFixed(1)} s after the call hung`)
    expect(end.code, end.stderr).toBe(130)
    expect(stoppedIn).toBeLessThan(5)
    expect(end.stderr).toMatch(/interrupted at maintenance 50%; weights back to maintenance 20%/)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual(afterFirstStep)
    expect(await journalStatus(runIdOf(end.stderr))).toBe('interrupted')
  }, 120_000)

  it('CloudWatch failing mid-ramp with Route 53 up: back at the last good step, exit 1 naming the source', async () => {
    await seedMetrics(fx, 0)
    const run = spawnRun(['run', gatedRamp(fx), '--yes'], fx.env)
    await run.seen(/maintenance at 50%/)
    // What a load balancer in front of an unwell service answers; the SDK retries it (5xx) first.
    fx.proxy.inject({operation: 'GetMetricData', times: 1000, status: 503, contentType: 'text/plain', body: 'Service Unavailable'})
    const failing = await when(() => fx.proxy.of('GetMetricData').some((c) => c.status === 503))
    const end = await run.ended
    console.log(
      `GetMetricData answering 503: exited ${end.code} ${((end.at - failing) / 1000).toFixed(1)} s after the first failed read, ${fx.proxy.of('GetMetricData').filter((c) => c.status === 503).length} attempts`,
    )
    expect(end.code, end.stderr).toBe(1)
    expect(end.stderr).toMatch(
      /gate error-rate ≤ 1% over 60 s could not read its metrics at maintenance 50%: CloudWatch GetMetricData on app\/\S+ failed: HTTP 503: .*; weights back to maintenance 20% \(mailbox=80 maintenance=20\)/,
    )
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual(afterFirstStep)
    expect(await journalStatus(runIdOf(end.stderr))).toBe('failed')
  }, 120_000)

  it('Ctrl-C while the first read (preflight) hangs: exit 130 within 5 s, nothing changed', async () => {
    await seedMetrics(fx, 0)
    fx.proxy.hold('ListResourceRecordSets')
    const run = spawnRun(['run', gatedRamp(fx), '--yes'], fx.env)
    const hung = await when(() => fx.proxy.held.length > 0)
    run.signal('SIGINT')
    const end = await run.ended
    const stoppedIn = (end.at - hung) / 1000
    expect(end.code, end.stderr).toBe(130)
    expect(stoppedIn).toBeLessThan(5)
    expect(end.stderr).toContain('interrupted while reading what it would change; nothing was changed')
    expect(fx.proxy.count('ChangeResourceRecordSets')).toBe(0)
    expect(await journalStatus(runIdOf(end.stderr))).toBe('interrupted')
  }, 120_000)
})
