import {existsSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {FreezeFile} from '../../src/local/freeze-file.js'

const dir = () => join(mkdtempSync(join(tmpdir(), 'sluice-freeze-')), 'state')
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString()

describe('the freeze file', () => {
  it('no file is no freeze; set writes it (making the directory) and get reads it back; clear removes it', async () => {
    const d = dir()
    const freeze = new FreezeFile(d)
    expect(await freeze.get()).toBeNull()
    const record = {by: 'alice', reason: 'incident 42', since: iso(0)}
    await freeze.set(record)
    expect(await freeze.get()).toEqual(record)
    // Written through a temporary file and renamed: nothing else is left behind.
    expect(readdirSync(d)).toEqual(['freeze.json'])
    await freeze.clear()
    expect(existsSync(join(d, 'freeze.json'))).toBe(false)
    expect(await freeze.get()).toBeNull()
    await freeze.clear()
  })

  it('a freeze that has expired is no freeze; one that has not is', async () => {
    const freeze = new FreezeFile(dir())
    await freeze.set({by: 'alice', reason: 'expired', since: iso(-120_000), expires: iso(-1000)})
    expect(await freeze.get()).toBeNull()
    const current = {by: 'alice', reason: 'current', since: iso(0), expires: iso(60_000)}
    await freeze.set(current)
    expect(await freeze.get()).toEqual(current)
  })
})

describe('a damaged freeze file', () => {
  it.each([
    ['{"by": "alice", "reason": "inc', /^(.*)freeze\.json:1: the freeze record is not JSON \(.*\); `sluice unfreeze --force` clears it$/],
    ['{\n  "by": "alice",\n  "reason": "incident",\n', /freeze\.json:4: the freeze record is not JSON/],
    ['[]', /freeze\.json:1: not a freeze record: Invalid input: expected object, received array; `sluice unfreeze --force` clears it$/],
    ['{"by": "alice", "reason": "x"}', /freeze\.json:1: not a freeze record: since: /],
  ])('%j is reported with its file and line, and clear still removes it', async (text, message) => {
    const d = dir()
    const freeze = new FreezeFile(d)
    await freeze.set({by: 'alice', reason: 'r', since: iso(0)})
    writeFileSync(join(d, 'freeze.json'), text)
    await expect(freeze.get()).rejects.toThrow(message)
    await freeze.clear()
    expect(await freeze.get()).toBeNull()
  })
})
