import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {LocalStore} from '../../src/local/local-store.js'
import {ControlPoller} from '../../src/state/controls.js'
import {control, FakeClock, FakeDns, FakeMetrics, RecordingIO, runbook} from '../helpers/fakes.js'

const alice = {operator: 'alice', host: 'laptop', pid: 7}
const bob = {operator: 'bob', host: 'ops-2', pid: 8}
const gate = `{metric: error-rate, threshold: 1, interval: 10, successes: 1}`

/** Until `done()` holds, looking every 10 ms (the poller looks every 20 ms here); fails the test rather than hang. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (done()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`never: ${what}`)
}

/**
 * A clock on which every bake and wait passes at once, but an approval's hour never does: only
 * a promote answers it.
 */
class ApprovalClock extends FakeClock {
  override async sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    if (seconds < 3600) return super.sleep(seconds, signal)
    await new Promise<void>((r) => signal?.addEventListener('abort', () => r(), {once: true}))
  }
}

describe('promote --full (a real control poller over a state store)', () => {
  it('one promote --full ends every bake and wait left, each gate still judged exactly once; an approve step still asks', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-promote-full-')))
    const runId = '20261206-120000-f0f0'
    const poller = new ControlPoller(
      store,
      runId,
      () => undefined,
      () => undefined,
    )
    await poller.start(20)
    const io = new RecordingIO(true)
    // What the run did with each control, as its journal records it.
    const taken = () => io.of('control').map((e) => [e.control.operator, e.control.full ?? false, e.effect, e.did])
    let reads = 0
    // The first verdict of the first bake: alice sends one promote --full, and the run takes it up
    // before the verdict is judged.
    const metrics = new FakeMetrics(() => 0.1)
    const read = metrics.read.bind(metrics)
    metrics.read = async (...a) => {
      if (++reads === 1) {
        await store.sendControl(runId, {...alice, kind: 'promote', full: true, at: new Date().toISOString()})
        await until(() => taken().length === 1, 'the run takes up the promote --full')
      }
      return read(...a)
    }
    // The approve step asks; bob answers it with a plain promote once it does.
    const answering = until(() => io.of('progress').some((e) => e.message.startsWith('waiting for approval')), 'the approval asks').then(() =>
      store.sendControl(runId, {...bob, kind: 'promote', at: new Date().toISOString()}),
    )
    const clock = new ApprovalClock()
    const steps = `  - {action: ramp, set: green, schedule: [25, 50], bake: 300, gate: ${gate}}
  - {action: wait, for: 600}
  - {action: approve, message: Reopen to everyone?, timeout: 3600}
  - {action: ramp, set: green, schedule: [100], bake: 300, gate: ${gate}}
`
    const run = runRunbook(runbook(steps), {
      control: control({weights: new FakeDns({blue: 100, green: 0}), metrics, clock}),
      io,
      signal: new AbortController().signal,
      controls: poller,
    })
    const result = await run
    await answering
    await poller.stop()

    expect(result.outcome, result.message).toBe('completed')
    // Each gate judged exactly once: one verdict per bake, in order.
    expect(io.of('verdict').map((v) => `${v.verdict.step}:${v.verdict.context}:${v.verdict.outcome}`)).toEqual([
      '0:green 25%:pass',
      '0:green 50%:pass',
      '3:green 100%:pass',
    ])
    // No bake or wait waited out: the clock moved only by the three gates' intervals (10 s each).
    expect(clock.t).toBe(30)
    expect(io.of('bake')).toEqual([{type: 'bake', step: 0, seconds: 300, at: 0}])
    expect(result.steps[1].message).toBe('promoted before the wait of 600 s was over')
    expect(io.of('progress').map((e) => e.message)).toEqual(
      expect.arrayContaining([
        'promoted fully by alice on laptop (sluice promote --full): no bake of 300 s; it ends as soon as its gate has passed 1 time in a row',
        'promoted fully by alice on laptop (sluice promote --full): no bake of 600 s; it ends at once',
      ]),
    )
    // The approval was not answered by the promote --full: it asked, and bob's promote answered it.
    expect(result.steps[2].message).toBe('approved by bob on ops-2 (sluice promote): Reopen to everyone?')
    expect(taken()).toEqual([
      [
        'alice',
        true,
        'promoted fully',
        'promoted fully: ended the bake of step 1 at green 25% early, 290 s before its end: it passes as soon as its gate has passed 1 time in a row; ' +
          'every bake and wait from here ends as soon as its gate has passed the times in a row it needs (a gate is still judged); an approve step still asks',
      ],
      ['bob', false, 'promoted', 'approved step 3 (Approval: Reopen to everyone?)'],
    ])
  }, 60_000)

  it('a gate promoted fully still needs its passes in a row, and a failing gate still stops the run', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-promote-full-')))
    const runId = '20261206-120000-f1f1'
    const poller = new ControlPoller(
      store,
      runId,
      () => undefined,
      () => undefined,
    )
    await poller.start(20)
    const io = new RecordingIO(true)
    // Passing on the first three reads, then failing: the second step's gate fails its first verdicts.
    let reads = 0
    const metrics = new FakeMetrics(() => (reads <= 3 ? 0.1 : 5))
    const read = metrics.read.bind(metrics)
    metrics.read = async (...a) => {
      if (++reads === 1) {
        await store.sendControl(runId, {...alice, kind: 'promote', full: true, at: new Date().toISOString()})
        await until(() => io.of('control').length === 1, 'the run takes up the promote --full')
      }
      return read(...a)
    }
    const result = await runRunbook(
      runbook(
        `  - {action: ramp, set: green, schedule: [25, 50], bake: 300, gate: {metric: error-rate, threshold: 1, interval: 10, successes: 2, failureLimit: 2}}\n`,
      ),
      {
        control: control({weights: new FakeDns({blue: 100, green: 0}), metrics, clock: new FakeClock()}),
        io,
        signal: new AbortController().signal,
        controls: poller,
      },
    )
    await poller.stop()
    expect(result.message).toMatch(/gate .* failed at green 50%/)
    // Two passes in a row at 25% (not one), then 50% fails twice and stops the run.
    expect(io.of('verdict').map((v) => `${v.verdict.context}:${v.verdict.outcome}`)).toEqual([
      'green 25%:pass',
      'green 25%:pass',
      'green 50%:pass',
      'green 50%:fail',
      'green 50%:fail',
    ])
    expect(result.outcome).toBe('gate-failed')
    // The 50% step's bake was never counted down: only the first bake, the one promoted, began as a bake.
    expect(io.of('bake')).toHaveLength(1)
  }, 60_000)

  it('sent while the run is paused, it continues it (as a promote does) and every bake from then on is promoted', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-promote-full-')))
    const runId = '20261206-120000-f2f2'
    const poller = new ControlPoller(
      store,
      runId,
      () => undefined,
      () => undefined,
    )
    await poller.start(20)
    const seen: string[] = []
    poller.subscribe((_c, effect, did) => seen.push(`${effect}: ${did}`))
    await store.sendControl(runId, {...bob, kind: 'pause', at: new Date().toISOString()})
    await until(() => poller.pausedBy !== null, 'the pause is taken')
    await store.sendControl(runId, {...alice, kind: 'promote', full: true, at: new Date().toISOString()})
    await until(() => seen.length === 2, 'the promote --full is taken')
    expect(poller.pausedBy).toBeNull()
    expect(poller.fullyPromotedBy).toEqual(alice)
    expect(seen[1]).toMatch(/^promoted fully: promoted fully: continued from the pause: /)
    // A bake listening now is promoted from its first instant; an approval is not.
    const signal = new AbortController().signal
    expect(poller.listenForPromote(() => 'bake', signal).taken()).toBe(true)
    expect(poller.listenForPromote(() => 'approval', signal, 'approval').taken()).toBe(false)
    await poller.stop()
  }, 60_000)
})
