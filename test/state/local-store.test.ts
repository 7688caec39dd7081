import {appendFileSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {InputError, RefusedError} from '../../src/errors.js'
import {LocalStore} from '../../src/local/local-store.js'
import {LockedError, LostLockError, type JournalEntry, type LockRecord} from '../../src/ports/state-store.js'
import {DamagedStateError} from '../../src/state/records.js'
import {runStartFields} from '../helpers/journal-entries.js'

// Leases of one second, so a dead holder's lock runs out within a test.
let savedLease: string | undefined
beforeAll(() => {
  savedLease = process.env.SLUICE_LEASE_SECONDS
  process.env.SLUICE_LEASE_SECONDS = '1'
})
afterAll(() => {
  if (savedLease === undefined) delete process.env.SLUICE_LEASE_SECONDS
  else process.env.SLUICE_LEASE_SECONDS = savedLease
})

const base = () => mkdtempSync(join(tmpdir(), 'sluice-local-store-'))
const fresh = () => new LocalStore(base())
const RUN = '20261104-100000-aaaa'
const RUN2 = '20261104-100500-bbbb'
const entry = (seq: number, type: string, extra: Record<string, unknown> = {}): JournalEntry => ({seq, at: `2026-11-04T10:00:0${seq}.000Z`, type, ...extra})
const holder = (runId: string) => ({runId, operator: 'alice', host: 'laptop', since: '2026-11-04T10:00:00.000Z'})
const journalFile = (store: LocalStore, runId = RUN) => join(store.dir, 'runs', `${runId}.jsonl`)

/** Another run's lock on route53:Z1 as its process left it (pid 999999 is gone): what a taker finds. */
async function leaveLockBehind(store: LocalStore, heartbeat: string, leaseSeconds: number): Promise<void> {
  const record: LockRecord = {resource: 'route53:Z1', ...holder(RUN), pid: 999999, heartbeat, leaseSeconds, lockId: '0123456789abcdef', version: 'v1', fence: 1}
  await store.acquire(['x'], holder(RUN2)) // makes the locks directory
  writeFileSync(join(store.dir, 'locks', 'route53_Z1.json'), JSON.stringify(record))
}

describe('the local state store: journals', () => {
  it('appends entries as JSON lines, one per entry, and reads them back in order', async () => {
    const store = fresh()
    // A journal begins with its run-start entry (a store reads one that does not as damaged).
    const start = entry(1, 'run-start', runStartFields(RUN))
    await store.append(RUN, start)
    await store.append(RUN, entry(2, 'step-start', {step: 0, title: 'ramp'}))
    // The entry after the first carries the fencing token of the journal's lock it was written under.
    const {fence} = (await store.locks()).find((l) => l.resource === `journal:${RUN}`)!
    const second = {...entry(2, 'step-start', {step: 0, title: 'ramp'}), fence}
    const text = readFileSync(journalFile(store), 'utf8')
    expect(text.split('\n')).toEqual([JSON.stringify(start), JSON.stringify(second), ''])
    expect(await store.read(RUN)).toEqual({entries: [start, second], torn: null})
    await store.release([], RUN)
  })

  it('lists its runs in order, and none before the first', async () => {
    const store = fresh()
    expect(await store.runIds()).toEqual([])
    await store.append(RUN2, entry(1, 'note'))
    await store.append(RUN, entry(1, 'note'))
    expect(await store.runIds()).toEqual([RUN, RUN2])
  })

  it('a run id that is not one is bad input (never a path); an unknown one names the store', async () => {
    const store = fresh()
    await expect(store.read('../../../../tmp/x')).rejects.toThrow(
      new InputError('run id "../../../../tmp/x": expected YYYYMMDD-HHMMSS-xxxx, like 20261130-054012-a1b2 (`sluice journal` lists the runs)'),
    )
    await expect(store.read(RUN)).rejects.toThrow(new InputError(`no run ${RUN} in local state ${store.dir}; \`sluice journal\` lists the runs`))
  })

  it('a torn last line is reported with its line and size, and the entries before it are kept', async () => {
    const store = fresh()
    await store.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    await store.append(RUN, entry(2, 'note'))
    await store.release([], RUN)
    appendFileSync(journalFile(store), '{"seq":3,"at":"2026-11-04T10:0')
    const read = await store.read(RUN)
    expect(read.entries.map((e) => e.seq)).toEqual([1, 2])
    expect(read.torn).toEqual({line: 3, bytes: 30, text: '{"seq":3,"at":"2026-11-04T10:0'})
  })

  it('readAfter gives the entries after one a follower has, reading only what was appended since its last look; a torn tail, read again, comes whole', async () => {
    const writer = fresh()
    // The follower is another process: `sluice serve` beside the run.
    const follower = new LocalStore(writer.dir)
    await writer.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    await writer.append(RUN, entry(2, 'note'))
    await writer.append(RUN, entry(3, 'note'))
    expect((await follower.readAfter(RUN, 0)).entries.map((e) => e.seq)).toEqual([1, 2, 3])
    expect(await follower.readAfter(RUN, 3)).toEqual({entries: [], torn: null})
    await writer.append(RUN, entry(4, 'note'))
    await writer.append(RUN, entry(5, 'note'))
    expect((await follower.readAfter(RUN, 3)).entries.map((e) => e.seq)).toEqual([4, 5])
    // Only the tail is read: a line before it damaged in place (same length) goes unseen by the
    // follower, and the whole read still reports it.
    const file = journalFile(writer)
    const text = readFileSync(file, 'utf8')
    const second = text.split('\n')[1]
    writeFileSync(file, text.replace(second, `X${second.slice(1)}`))
    const half = JSON.stringify(entry(6, 'note')).slice(0, 20)
    appendFileSync(file, half)
    expect(await follower.readAfter(RUN, 5)).toEqual({entries: [], torn: {line: 6, bytes: 20, text: half}})
    appendFileSync(file, `${JSON.stringify(entry(6, 'note')).slice(20)}\n`)
    expect(await follower.readAfter(RUN, 5)).toEqual({entries: [entry(6, 'note')], torn: null})
    await expect(follower.read(RUN)).rejects.toThrow(`${file}:2: not JSON`)
    // Damage in the tail is named by its line in the whole file.
    appendFileSync(file, `${JSON.stringify(entry(9, 'note'))}\n`)
    await expect(follower.readAfter(RUN, 6)).rejects.toThrow(`${file}:7: entry number 9 where 7 was expected`)
    await writer.release([], RUN)
  })

  it('readAfter from an entry it never stopped at reads the journal whole, and gives the same entries', async () => {
    const store = fresh()
    const follower = new LocalStore(store.dir)
    await store.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    for (let seq = 2; seq <= 6; seq++) await store.append(RUN, entry(seq, 'note'))
    expect((await follower.readAfter(RUN, 6)).entries).toEqual([])
    expect((await follower.readAfter(RUN, 2)).entries.map((e) => e.seq)).toEqual([3, 4, 5, 6])
    await expect(follower.readAfter(RUN2, 4)).rejects.toThrow(`no run ${RUN2} in local state ${store.dir}`)
    await store.release([], RUN)
  })

  it.each([
    ['edited by hand', 'not JSON; the journal was changed after it was written'],
    ['[1,2,3]', 'not a journal entry: expected a JSON object, got an array'],
    [
      '{"seq":2,"at":"2026-11-04T10:00:02.000Z","type":"mutation"}',
      'a mutation entry without what it needs: mutation: Invalid input: expected object, received undefined',
    ],
    [
      '{"seq":2,"at":"2026-11-04T10:00:02.000Z","type":"mutation","mutation":{"step":0,"kind":"weights","resource":"r"}}',
      'a mutation entry without what it needs: mutation.phase: Invalid option: expected one of "intent"|"outcome"',
    ],
    ['{"seq":2,"at":"yesterday","type":"note"}', 'not a journal entry: at: expected an ISO 8601 time'],
    ['{"seq":7,"at":"2026-11-04T10:00:02.000Z","type":"note"}', 'entry number 7 where 2 was expected; two processes wrote this journal, or it was edited'],
  ])('a damaged line (%s) is reported as FILE:LINE: what is wrong, and nothing past it is read', async (line, problem) => {
    const store = fresh()
    await store.append(RUN, entry(1, 'note'))
    appendFileSync(journalFile(store), `${line}\n${JSON.stringify(entry(3, 'note'))}\n`)
    const error = await store.read(RUN).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DamagedStateError)
    expect((error as Error).message).toBe(`${journalFile(store)}:2: ${problem}`)
  })

  it("another process's entries in between stop this one from writing, rather than interleave", async () => {
    const store = fresh()
    await store.append(RUN, entry(1, 'note'))
    await store.append(RUN, entry(2, 'note'))
    appendFileSync(journalFile(store), `${JSON.stringify(entry(3, 'note'))}\n`)
    await expect(store.append(RUN, entry(3, 'note'))).rejects.toThrow(`${journalFile(store)}: changed by another process since this one wrote entry 2`)
    await store.release([], RUN)
  })

  it('state files are 0600 and directories 0700, whatever the umask', async () => {
    const old = process.umask(0)
    try {
      const store = new LocalStore(join(base(), 'state'))
      await store.append(RUN, entry(1, 'note'))
      await store.acquire(['route53:Z1'], holder(RUN))
      await store.freeze.set({by: 'alice', reason: 'incident', since: '2026-11-04T10:00:00.000Z'})
      const mode = (p: string) => (statSync(join(store.dir, p)).mode & 0o777).toString(8)
      expect([mode('.'), mode('runs'), mode('locks')]).toEqual(['700', '700', '700'])
      expect([mode(`runs/${RUN}.jsonl`), mode('locks/route53_Z1.json'), mode('freeze.json')]).toEqual(['600', '600', '600'])
      await store.release(['route53:Z1'], RUN)
    } finally {
      process.umask(old)
    }
  })
})

describe('the local state store: locks are leases', () => {
  it('a second process is refused with LockedError naming the live holder, and keeps none of its locks', async () => {
    const dir = base()
    const a = new LocalStore(dir)
    const b = new LocalStore(dir)
    await a.acquire(['route53:Z1', 'elbv2:tg-1'], holder(RUN))
    const error = await b.acquire(['elbv2:tg-2', 'route53:Z1'], holder(RUN2)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LockedError)
    expect((error as LockedError).holder).toMatchObject({resource: 'route53:Z1', ...holder(RUN), pid: process.pid, leaseSeconds: 1})
    expect((error as Error).message).toMatch(
      new RegExp(
        `^route53:Z1 is locked by run ${RUN} of alice on laptop \\(pid ${process.pid}\\) since 2026-11-04T10:00:00.000Z, last heartbeat \\d{4}-.*Z: that process is alive \\(it renewed its 1 s lease while sluice watched\\)`,
      ),
    )
    // All or nothing: the lock b took before it was refused is released again.
    await a.acquire(['elbv2:tg-2'], holder(RUN))
    await a.release(['route53:Z1', 'elbv2:tg-1', 'elbv2:tg-2'], RUN)
  })

  it('the same run id from another process (a resume of a live run) is refused too', async () => {
    const dir = base()
    const a = new LocalStore(dir)
    await a.acquire(['route53:Z1'], holder(RUN))
    await expect(new LocalStore(dir).acquire(['route53:Z1'], holder(RUN))).rejects.toBeInstanceOf(LockedError)
    // Within one process the run holds its locks once.
    await expect(a.acquire(['route53:Z1'], holder(RUN))).resolves.toBeUndefined()
    await a.release(['route53:Z1'], RUN)
  })

  it("a lock nobody renews is taken once a whole lease passes, by the taker's clock", async () => {
    const store = fresh()
    await leaveLockBehind(store, '2026-11-04T10:00:00.000Z', 1)
    const started = performance.now()
    const waits: string[] = []
    await store.acquire(['route53:Z1'], holder(RUN), {notify: (m) => waits.push(m)})
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000)
    expect(waits[0]).toMatch(/^route53:Z1 is locked by run .* \(pid 999999\): watching for up to 1 s whether that process is alive/)
    expect((await store.locks()).find((l) => l.resource === 'route53:Z1')).toMatchObject({runId: RUN, pid: process.pid})
    await store.release(['route53:Z1', 'x'], RUN)
    await store.release(['x'], RUN2)
  })

  it('a renewal that fails on waking (its deadline passed while the process was stopped) and finds the lock taken: lost, naming the holder, not a failed renewal', async () => {
    // As the S3 store's PutObject did in CI: in flight at SIGSTOP, timed out at SIGCONT, while bob held the lock.
    class Waking extends LocalStore {
      asleep = false
      protected override async replaceLock(record: LockRecord, version: string): Promise<boolean> {
        if (this.asleep) throw new Error('Timeout: no answer within 30 s')
        return super.replaceLock(record, version)
      }
    }
    const store = new Waking(base())
    await store.append(RUN, entry(1, 'run-start', runStartFields(RUN)))
    await store.append(RUN, entry(2, 'note'))
    const mine = (await store.locks()).find((l) => l.resource === `journal:${RUN}`)!
    store.asleep = true
    const taken = {...mine, lockId: 'feedfacefeedface', version: 'taken', fence: mine.fence + 1, operator: 'bob', host: 'far-away', pid: 4242}
    writeFileSync(join(store.dir, 'locks', `journal_${RUN}.json`), JSON.stringify(taken))
    // A heartbeat (a third of the 1 s lease) tries and fails.
    await new Promise((resolve) => setTimeout(resolve, 700))
    const lost = await store.stillHolds(RUN)
    expect(lost).toBeInstanceOf(LostLockError)
    expect(lost!.message).toMatch(/another took the lock.*held by run .* of bob on far-away \(pid 4242\)/)
  })

  it("a lock record claiming a lease past what sluice writes (1e12 s) is damaged: said so, and judged by the taker's own lease", async () => {
    const store = fresh()
    await leaveLockBehind(store, '2099-01-01T00:00:00.000Z', 1e12)
    expect((await store.locks()).find((l) => l.resource === 'route53:Z1')).toMatchObject({
      leaseSeconds: 1,
      damaged: 'a lease of 1000000000000 s, past the 3600 s at most that sluice writes; judged by a 1 s lease',
    })
    const started = performance.now()
    const waits: string[] = []
    await store.acquire(['route53:Z1'], holder(RUN), {notify: (m) => waits.push(m)})
    // Bounded by the taker's own lease (1 s here), not by what the record claims.
    expect(performance.now() - started).toBeLessThan(5000)
    expect(waits[0]).toMatch(
      /\(its lock record is damaged: a lease of 1000000000000 s, past the 3600 s at most that sluice writes; judged by a 1 s lease\): watching for up to 1 s/,
    )
    await store.release(['route53:Z1', 'x'], RUN)
    await store.release(['x'], RUN2)
  })

  it("leftovers of a process killed mid-change (a renewal's .tmp, a takeover's .claim) are swept once old and their pid is gone; fresh or live ones stay", async () => {
    const store = fresh()
    await store.acquire(['x'], holder(RUN2)) // makes the locks directory
    const locks = join(store.dir, 'locks')
    const old = new Date(Date.now() - 60 * 60_000)
    const dead = 2 ** 31 - 2
    const files = {
      deadTmp: `route53_Z1.json.${dead}.tmp`,
      deadClaim: `route53_Z1.json.${dead}.0a1b2c3d.claim`,
      freshTmp: `route53_Z2.json.${dead}.tmp`,
      liveTmp: `route53_Z3.json.${process.pid}.tmp`,
    }
    for (const f of Object.values(files)) writeFileSync(join(locks, f), '{}')
    for (const f of [files.deadTmp, files.deadClaim, files.liveTmp]) utimesSync(join(locks, f), old, old)
    await store.locks()
    const left = readdirSync(locks)
    expect(left).not.toContain(files.deadTmp)
    expect(left).not.toContain(files.deadClaim)
    expect(left).toEqual(expect.arrayContaining([files.freshTmp, files.liveTmp]))
    await store.release(['x'], RUN2)
  })

  it('release lets go only of what this process holds', async () => {
    const dir = base()
    const a = new LocalStore(dir)
    const b = new LocalStore(dir)
    await a.acquire(['route53:Z1'], holder(RUN))
    await b.release(['route53:Z1'], RUN)
    expect((await b.locks()).map((l) => l.resource)).toEqual(['route53:Z1'])
    await a.release(['route53:Z1'], RUN)
    expect(await b.locks()).toEqual([])
  })

  it('breakLock takes the lock id, refuses while the holder renews, asks, and breaks a dead one', async () => {
    const dir = base()
    const a = new LocalStore(dir)
    const b = new LocalStore(dir)
    await a.acquire(['route53:Z1'], holder(RUN))
    const [live] = await b.locks()
    expect(live.lockId).toMatch(/^[0-9a-f]{16}$/)
    await expect(b.breakLock(RUN, async () => true)).rejects.toBeInstanceOf(InputError)
    await expect(b.breakLock('ffffffffffffffff', async () => true)).rejects.toThrow('no lock ffffffffffffffff')
    await expect(b.breakLock(live.lockId, async () => true)).rejects.toThrow(/will not break lock [0-9a-f]{16}: its holder is alive/)
    // A dead holder: its record stays, unrenewed.
    writeFileSync(join(dir, 'locks', 'route53_Z2.json'), JSON.stringify({...live, resource: 'route53:Z2', lockId: 'aaaaaaaaaaaaaaaa', version: 'old'}))
    await expect(b.breakLock('aaaaaaaaaaaaaaaa', async () => false)).rejects.toThrow(
      new RefusedError('lock aaaaaaaaaaaaaaaa on route53:Z2: not broken (not confirmed)'),
    )
    const broken = await b.breakLock('aaaaaaaaaaaaaaaa', async (lock) => lock.resource === 'route53:Z2')
    expect(broken).toMatchObject({resource: 'route53:Z2', runId: RUN})
    expect((await b.locks()).map((l) => l.resource)).toEqual(['route53:Z1'])
    await a.release(['route53:Z1'], RUN)
  })

  it("writing to a journal after its first entry takes the journal's lock: a live writer keeps others out", async () => {
    const dir = base()
    const a = new LocalStore(dir)
    await a.append(RUN, entry(1, 'note'))
    await a.append(RUN, entry(2, 'note'))
    await expect(new LocalStore(dir).append(RUN, entry(3, 'note'))).rejects.toBeInstanceOf(LockedError)
    await a.release([], RUN)
  })

  it('keeps the freeze in the same directory', async () => {
    const store = fresh()
    await store.freeze.set({by: 'alice', reason: 'incident', since: '2026-11-04T10:00:00.000Z'})
    expect(JSON.parse(readFileSync(join(store.dir, 'freeze.json'), 'utf8'))).toEqual({by: 'alice', reason: 'incident', since: '2026-11-04T10:00:00.000Z'})
    writeFileSync(join(store.dir, 'unrelated'), '')
    expect(await store.freeze.get()).toMatchObject({reason: 'incident'})
  })
})
