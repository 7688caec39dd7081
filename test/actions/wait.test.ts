import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import type {Clock} from '../../src/ports/control-plane.js'
import {control, FakeClock, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('wait', () => {
  it("waits the given time on the run's clock and changes nothing", async () => {
    const clock = new FakeClock()
    const io = new RecordingIO()
    const result = await runRunbook(runbook(`  - {action: wait, for: 2m}\n`), {control: control({clock}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0]).toMatchObject({action: 'wait', status: 'done', title: 'Wait 120 s', message: 'waited 120 s', startedAt: 0, endedAt: 120})
    expect(clock.t).toBe(120)
    expect(io.of('mutation')).toEqual([])
  })

  it('an interruption during the wait stops the run there (exit 130)', async () => {
    const abort = new AbortController()
    // A clock whose sleep is cut short by the interruption, as the wall clock's is.
    const clock: Clock & {t: number} = {
      t: 0,
      now() {
        return this.t
      },
      async sleep(seconds, signal) {
        abort.abort()
        if (signal?.aborted) return
        this.t += seconds
      },
    }
    const result = await runRunbook(runbook(`  - {action: wait, for: 60}\n  - {action: unfreeze}\n`), {
      control: control({clock}),
      io: new RecordingIO(),
      signal: abort.signal,
    })
    expect(result.outcome).toBe('interrupted')
    expect(exitCodeOf(result.outcome)).toBe(130)
    expect(result.steps.map((s) => [s.status, s.message])).toEqual([
      ['interrupted', 'interrupted while waiting'],
      ['skipped', 'not run'],
    ])
    expect(clock.t).toBe(0)
  })
})
