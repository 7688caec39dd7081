import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import {LockedError, LostLockError, type JournalEntry, type LockRecord, type StateStore} from '../../src/ports/state-store.js'
import {DamagedStateError} from '../../src/state/records.js'
import {runStartFields} from './journal-entries.js'

/**
 * What every state store promises (the directory, DynamoDB, S3), as one suite each store's own
 * test file runs: the same journals, locks, controls and freeze by construction. `open` gives a
 * store over fresh state, and `again` another process's view of that same state (a second
 * instance, holding nothing). Leases are one second here, so a lapse fits in a test.
 */
export function storeContract(
  name: string,
  open: () => Promise<{
    store: StateStore
    again: () => StateStore
    /** Writes a lock record as another process that took the lock over would (a raw write, no conditions). */
    steal: (record: LockRecord) => Promise<void>
  }>,
): void {
  let savedLease: string | undefined
  beforeAll(() => {
    savedLease = process.env.SLUICE_LEASE_SECONDS
    process.env.SLUICE_LEASE_SECONDS = '1'
  })
  afterAll(() => {
    if (savedLease === undefined) delete process.env.SLUICE_LEASE_SECONDS
    else process.env.SLUICE_LEASE_SECONDS = savedLease
  })

  let n = 0
  /** A run id of its own for each test: a team store's state is shared by the whole file. */
  const runId = () => `20261207-06${String(n++).padStart(4, '0')}-c0${(n % 256).toString(16).padStart(2, '0')}`
  const entry = (seq: number, type: string, extra: Record<string, unknown> = {}): JournalEntry => ({
    seq,
    at: `2026-12-07T06:00:${String(seq % 60).padStart(2, '0')}.000Z`,
    type,
    ...extra,
  })
  const who = (run: string) => ({runId: run, operator: 'alice', host: 'laptop'})

  describe(`the state store contract: ${name}`, () => {
    it('keeps a journal in order, reads it whole or after any entry, and lists its runs', async () => {
      const {store, again} = await open()
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      for (let seq = 2; seq <= 12; seq++) await store.append(run, entry(seq, 'note', {text: `n${seq}`}))
      const reader = again()
      expect((await reader.read(run)).entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
      // Each entry after the first carries the fencing token of the journal's lock it was written under.
      const {fence} = (await reader.locks()).find((l) => l.resource === `journal:${run}`)!
      expect(fence).toBeGreaterThan(0)
      expect((await reader.read(run)).entries[4]).toEqual({...entry(5, 'note', {text: 'n5'}), fence})
      expect((await reader.read(run)).entries.map((e) => e.fence)).toEqual([undefined, ...Array<number>(11).fill(fence)])
      expect((await reader.readAfter(run, 9)).entries.map((e) => e.seq)).toEqual([10, 11, 12])
      expect(await reader.readAfter(run, 12)).toEqual({entries: [], torn: null})
      expect(await reader.readAfter(run, 0)).toEqual(await reader.read(run))
      expect(await reader.runIds()).toContain(run)
      await store.append(run, entry(13, 'note'))
      expect((await reader.readAfter(run, 12)).entries.map((e) => e.seq)).toEqual([13])
      await store.release([], run)
    })

    it('an unknown run, or a run id that is not one, is bad input', async () => {
      const {store} = await open()
      const unknown = runId()
      await expect(store.read(unknown)).rejects.toThrow(InputError)
      await expect(store.readAfter(unknown, 3)).rejects.toThrow(InputError)
      await expect(store.read('../../etc/passwd')).rejects.toThrow(InputError)
      expect(await store.runIds()).not.toContain(unknown)
    })

    it('never writes one entry number twice, nor out of order', async () => {
      const {store, again} = await open()
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      await store.append(run, entry(2, 'note'))
      await expect(store.append(run, entry(2, 'note', {text: 'again'}))).rejects.toThrow(DamagedStateError)
      expect((await again().read(run)).entries).toEqual([entry(1, 'run-start', runStartFields(run)), {...entry(2, 'note'), fence: expect.any(Number)}])
      // A second run with the same id is refused at its first entry.
      await expect(again().append(run, entry(1, 'run-start', runStartFields(run)))).rejects.toThrow(DamagedStateError)
      await store.release([], run)
    })

    it('another process cannot write a journal whose writer is alive: it is refused naming the holder, and nothing of it is written', async () => {
      const {store, again} = await open()
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      await store.append(run, entry(2, 'note'))
      const other = again()
      const refused = await other.append(run, entry(3, 'note', {text: 'intruder'})).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(LockedError)
      expect((refused as LockedError).holder).toMatchObject({runId: run, resource: `journal:${run}`})
      await store.append(run, entry(3, 'note'))
      expect((await other.read(run)).entries.map((e) => [e.seq, e.text])).toEqual([
        [1, undefined],
        [2, undefined],
        [3, undefined],
      ])
      await store.release([], run)
    })

    it('takes every lock or none, lists them with their holders, refuses another process while the holder renews, and lets go', async () => {
      const {store, again} = await open()
      const run = runId()
      const other = runId()
      const resources = [`route53:${run}`, `tg:${run}/blue`]
      await store.acquire(resources, who(run))
      const listed = (await again().locks()).filter((l) => resources.includes(l.resource))
      expect(listed.map((l) => [l.resource, l.runId, l.operator, l.pid])).toEqual(resources.map((r) => [r, run, 'alice', process.pid]))
      expect(listed.every((l) => /^[0-9a-f]{16}$/.test(l.lockId))).toBe(true)
      // Another process wanting one of them and one free: refused (the holder is alive), holding neither.
      const taker = again()
      const refused = await taker.acquire([`free:${run}`, resources[1]], who(other)).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(LockedError)
      expect((refused as LockedError).holder).toMatchObject({resource: resources[1], runId: run})
      expect((await taker.locks()).some((l) => l.resource === `free:${run}`)).toBe(false)
      // Breaking a live holder's lock is refused too.
      await expect(taker.breakLock(listed[0].lockId, async () => true)).rejects.toThrow(/will not break lock .*: its holder is alive/)
      await store.release(resources, run)
      expect((await taker.locks()).filter((l) => resources.includes(l.resource))).toEqual([])
      // Let go, they are anyone's at once.
      await taker.acquire(resources, who(other))
      expect((await store.locks()).filter((l) => resources.includes(l.resource)).map((l) => l.runId)).toEqual([other, other])
      await taker.release(resources, other)
    })

    it('numbers controls one after another, never two alike from senders at once', async () => {
      const {store, again} = await open()
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      const senders = [store, again(), again()]
      const sent = await Promise.all(
        Array.from({length: 9}, (_, k) =>
          senders[k % 3].sendControl(run, {kind: 'pause', operator: `op${k}`, host: 'h', pid: k, at: new Date().toISOString()}),
        ),
      )
      expect(sent.map((c) => c.seq).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
      const listed = await again().controls(run)
      expect(listed.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
      expect(new Set(listed.map((c) => c.operator)).size).toBe(9)
      await store.release([], run)
    })

    it('sets, reads and clears the freeze; one past its expiry is none', async () => {
      const {store, again} = await open()
      await store.freeze.set({by: 'alice', reason: 'incident 42', since: '2026-12-07T06:00:00.000Z'})
      expect(await again().freeze.get()).toEqual({by: 'alice', reason: 'incident 42', since: '2026-12-07T06:00:00.000Z'})
      await store.freeze.set({by: 'bob', reason: 'over', since: '2026-12-07T06:00:00.000Z', expires: new Date(Date.now() - 1000).toISOString()})
      expect(await again().freeze.get()).toBeNull()
      await store.freeze.set({by: 'carol', reason: 'again', since: '2026-12-07T06:00:00.000Z'})
      await again().freeze.clear()
      expect(await store.freeze.get()).toBeNull()
    })

    it('refuses a write under a lock another process took over, naming it, by the fencing token it finds; nothing of it is written', async () => {
      // A lease long enough that this process's own renewals do not find the loss first: the store must.
      const lease = process.env.SLUICE_LEASE_SECONDS
      process.env.SLUICE_LEASE_SECONDS = '60'
      const {store, again, steal} = await open().finally(() => {
        process.env.SLUICE_LEASE_SECONDS = lease
      })
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      await store.append(run, entry(2, 'note'))
      const mine = (await store.locks()).find((l) => l.resource === `journal:${run}`)!
      // Taken over while this process was stopped: a new lock id, the next fencing token.
      await steal({...mine, lockId: 'feedfacefeedface', version: 'taken', fence: mine.fence + 1, operator: 'bob', host: 'far-away', pid: 4242})
      const refused = await store.append(run, entry(3, 'note', {text: 'stale'})).catch((e: unknown) => e)
      expect(refused).toBeInstanceOf(LostLockError)
      expect((refused as Error).message).toMatch(
        new RegExp(
          `^this process no longer holds the lock on journal:${run}: .*with fencing token ${mine.fence + 1} against this process's ${mine.fence}; it is held by run ${run} of bob on far-away \\(pid 4242\\)`,
        ),
      )
      expect((await again().read(run)).entries.map((e) => e.seq)).toEqual([1, 2])
      // And it stays refused: nothing more from this process, whatever it tries.
      await expect(store.append(run, entry(3, 'note'))).rejects.toThrow(LostLockError)
      expect(await store.stillHolds(run)).toBeInstanceOf(LostLockError)
    })

    it("refuses a run's change to the freeze under a lock another process took over; the freeze stays as it was", async () => {
      const lease = process.env.SLUICE_LEASE_SECONDS
      process.env.SLUICE_LEASE_SECONDS = '60'
      const {store, again, steal} = await open().finally(() => {
        process.env.SLUICE_LEASE_SECONDS = lease
      })
      const run = runId()
      await store.append(run, entry(1, 'run-start', runStartFields(run)))
      await store.append(run, entry(2, 'note'))
      // Under its own lock, the run sets the freeze.
      const mine = {by: 'alice', reason: 'incident 42', since: '2026-12-07T06:00:00.000Z', runId: run}
      await store.freeze.set(mine)
      expect(await again().freeze.get()).toEqual(mine)
      const lock = (await store.locks()).find((l) => l.resource === `journal:${run}`)!
      await steal({...lock, lockId: 'feedfacefeedface', version: 'taken', fence: lock.fence + 1, operator: 'bob', host: 'far-away', pid: 4242})
      // Woken, it would lift it, or set another: both refused, naming who holds the run now.
      await expect(store.freeze.clear(run)).rejects.toThrow(new RegExp(`no longer holds the lock on journal:${run}: .*held by run ${run} of bob on far-away`))
      await expect(store.freeze.set({...mine, reason: 'stale'})).rejects.toThrow(LostLockError)
      expect(await again().freeze.get()).toEqual(mine)
      // An operator's own freeze, under no run, is no run's to fence.
      await again().freeze.clear()
      expect(await store.freeze.get()).toBeNull()
    })
  })
}
