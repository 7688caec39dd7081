import {appendFileSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {LockedError, type JournalEntry} from '../../src/ports/state-store.js'

const fresh = () => new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-local-store-')))
const entry = (seq: number, type: string, extra: Record<string, unknown> = {}): JournalEntry => ({seq, at: `2026-11-04T10:00:0${seq}.000Z`, type, ...extra})
const holder = (runId: string) => ({runId, operator: 'alice', host: 'laptop', since: '2026-11-04T10:00:00.000Z'})

describe('the local state store: journals', () => {
  it('appends entries as JSON lines, one per entry, and reads them back in order', async () => {
    const store = fresh()
    await store.append('run-1', entry(1, 'run-start', {runbookName: 'x'}))
    await store.append('run-1', entry(2, 'step-start', {step: 0}))
    const text = readFileSync(join(store.dir, 'runs', 'run-1.jsonl'), 'utf8')
    expect(text.split('\n')).toEqual([JSON.stringify(entry(1, 'run-start', {runbookName: 'x'})), JSON.stringify(entry(2, 'step-start', {step: 0})), ''])
    expect(await store.read('run-1')).toEqual({entries: [entry(1, 'run-start', {runbookName: 'x'}), entry(2, 'step-start', {step: 0})], torn: null})
  })

  it('lists its runs in order, and none before the first', async () => {
    const store = fresh()
    expect(await store.runIds()).toEqual([])
    await store.append('20261104-100500-bbbb', entry(1, 'run-start'))
    await store.append('20261104-100000-aaaa', entry(1, 'run-start'))
    expect(await store.runIds()).toEqual(['20261104-100000-aaaa', '20261104-100500-bbbb'])
  })

  it('reading a run it does not have names the run and the store', async () => {
    const store = fresh()
    await expect(store.read('nope')).rejects.toThrow(`no run nope in local state ${store.dir}`)
  })

  it('a torn last line is reported with its line and size, and the entries before it are kept', async () => {
    const store = fresh()
    await store.append('run-1', entry(1, 'run-start'))
    await store.append('run-1', entry(2, 'step-start'))
    appendFileSync(join(store.dir, 'runs', 'run-1.jsonl'), '{"seq":3,"at":"2026-11-04T10:0')
    const read = await store.read('run-1')
    expect(read.entries.map((e) => e.seq)).toEqual([1, 2])
    expect(read.torn).toEqual({line: 3, bytes: 30, text: '{"seq":3,"at":"2026-11-04T10:0'})
  })

  it('a line that is not JSON before the last is corruption, not a torn write', async () => {
    const store = fresh()
    await store.append('run-1', entry(1, 'run-start'))
    appendFileSync(join(store.dir, 'runs', 'run-1.jsonl'), 'edited by hand\n')
    await store.append('run-1', entry(3, 'run-end'))
    await expect(store.read('run-1')).rejects.toThrow('journal of run run-1 is corrupt at line 2: not JSON; it was changed after it was written')
  })
})

describe('the local state store: locks', () => {
  it('a second holder is refused with LockedError naming the holder, and takes none of its locks', async () => {
    const store = fresh()
    await store.acquire(['route53:Z1', 'elbv2:tg-1'], holder('run-1'))
    const error = await store.acquire(['elbv2:tg-2', 'route53:Z1'], holder('run-2')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LockedError)
    expect((error as LockedError).holder).toEqual({resource: 'route53:Z1', ...holder('run-1')})
    expect((error as Error).message).toBe(
      'route53:Z1 is locked by run run-1 of alice on laptop since 2026-11-04T10:00:00.000Z; if that run is dead, break the lock with --break-lock run-1',
    )
    // All or nothing: the lock run-2 took before it was refused is released again.
    await store.acquire(['elbv2:tg-2'], holder('run-3'))
  })

  it('the same run taking its own locks again (a resume) is not refused', async () => {
    const store = fresh()
    await store.acquire(['route53:Z1'], holder('run-1'))
    await expect(store.acquire(['route53:Z1', 'elbv2:tg-1'], holder('run-1'))).resolves.toBeUndefined()
  })

  it('release frees only the locks the run holds', async () => {
    const store = fresh()
    await store.acquire(['route53:Z1'], holder('run-1'))
    await store.release(['route53:Z1'], 'run-2')
    await expect(store.acquire(['route53:Z1'], holder('run-2'))).rejects.toBeInstanceOf(LockedError)
    await store.release(['route53:Z1'], 'run-1')
    await expect(store.acquire(['route53:Z1'], holder('run-2'))).resolves.toBeUndefined()
  })

  it('breakLocks removes every lock of one run, returns what it held, and leaves other runs\' locks', async () => {
    const store = fresh()
    const arn = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/mailbox/6d0e'
    await store.acquire(['route53:Z1', `elbv2:${arn}`], holder('dead-run'))
    await store.acquire(['route53:Z2'], holder('live-run'))
    expect((await store.breakLocks('dead-run')).sort()).toEqual([`elbv2:${arn}`, 'route53:Z1'])
    expect(await store.breakLocks('dead-run')).toEqual([])
    await expect(store.acquire(['route53:Z1', `elbv2:${arn}`], holder('new-run'))).resolves.toBeUndefined()
    await expect(store.acquire(['route53:Z2'], holder('new-run'))).rejects.toBeInstanceOf(LockedError)
  })

  it('breakLocks on a store that never locked anything breaks nothing', async () => {
    expect(await fresh().breakLocks('run-1')).toEqual([])
  })

  it('keeps the freeze in the same directory', async () => {
    const store = fresh()
    await store.freeze.set({by: 'alice', reason: 'incident', since: '2026-11-04T10:00:00.000Z'})
    expect(JSON.parse(readFileSync(join(store.dir, 'freeze.json'), 'utf8'))).toEqual({by: 'alice', reason: 'incident', since: '2026-11-04T10:00:00.000Z'})
    writeFileSync(join(store.dir, 'unrelated'), '')
    expect(await store.freeze.get()).toMatchObject({reason: 'incident'})
  })
})
