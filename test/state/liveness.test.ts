import {describe, expect, it} from 'vitest'
import type {LockRecord} from '../../src/ports/state-store.js'
import {thisHost} from '../../src/state/journal.js'
import {byPid, judgeHolder, LeaseObserver} from '../../src/state/liveness.js'
import {processRuns, processStart, thisPlace, thisStart} from '../../src/platform/process-place.js'

const lock = (over: Partial<LockRecord> = {}): LockRecord => ({
  resource: 'journal:20261130-054012-a1b2',
  runId: '20261130-054012-a1b2',
  operator: 'alice',
  host: 'elsewhere',
  pid: 4242,
  since: '2026-11-30T05:40:12.000Z',
  heartbeat: '2099-01-01T00:00:00.000Z',
  leaseSeconds: 0.3,
  lockId: '0123456789abcdef',
  version: 'v1',
  fence: 1,
  ...over,
})

/** A pid no process can have (above any kernel's pid_max), so unit tests start nothing. */
const deadPid = () => 2 ** 31 - 2

describe("liveness: by pid on this host, else by the lease moving on this clock; never by the holder's timestamps", () => {
  it.skipIf(thisPlace === undefined)('a holder in this place is judged at once by its pid, whatever its heartbeat says', () => {
    expect(byPid(lock({host: thisHost, place: thisPlace, pid: process.pid, started: thisStart}))).toMatchObject({alive: true})
    expect(byPid(lock({host: thisHost, place: thisPlace, pid: Number(deadPid())}))).toEqual({
      alive: false,
      why: expect.stringMatching(/^dead \(pid \d+ gone\)$/),
    })
    // A pid now used by another process (it started at another time) is not the holder's.
    expect(byPid(lock({host: thisHost, place: thisPlace, pid: process.pid, started: '1'}))).toMatchObject({alive: false})
    expect(processRuns(process.pid, processStart(process.pid))).toBe(true)
  })

  it('a holder elsewhere (another host, or another pid namespace) is not judged by pid', () => {
    expect(byPid(lock({host: 'elsewhere', place: thisPlace, pid: process.pid}))).toBeUndefined()
    expect(byPid(lock({host: thisHost, place: 'another-boot/pid:[1]', pid: process.pid}))).toBeUndefined()
    expect(byPid(lock({host: thisHost, pid: process.pid}))).toBeUndefined()
  })

  it('elsewhere: alive once the version moves, dead once a lease passes without, undecided before either', async () => {
    const watch = new LeaseObserver()
    expect(watch.observe(lock())).toBeUndefined()
    expect(watch.observe(lock())).toBeUndefined()
    expect(watch.observe(lock({version: 'v2'}))).toMatchObject({alive: true})
    // Once seen moving, it stays alive until it stops moving for a whole lease.
    expect(watch.observe(lock({version: 'v2'}))).toMatchObject({alive: true})
    await new Promise((r) => setTimeout(r, 350))
    expect(watch.observe(lock({version: 'v2'}))).toEqual({alive: false, why: 'dead (lease lapsed: not renewed in 0.3 s while sluice watched)'})
  })

  it('judgeHolder waits at most one lease: a heartbeat in 2099 that never renews is dead; one renewing is alive', async () => {
    const started = performance.now()
    const dead = await judgeHolder(lock(), async () => lock())
    expect(dead).toMatchObject({alive: false, why: expect.stringMatching(/lease lapsed/)})
    expect(performance.now() - started).toBeGreaterThanOrEqual(300)
    expect(performance.now() - started).toBeLessThan(2000)
    let n = 0
    expect(await judgeHolder(lock(), async () => lock({version: `v${++n}`}))).toMatchObject({alive: true})
    expect(await judgeHolder(lock(), async () => null)).toMatchObject({alive: false, why: 'dead (it let go of its lock)'})
  })
})
