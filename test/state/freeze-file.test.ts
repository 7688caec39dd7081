import {existsSync, mkdtempSync, readdirSync} from 'node:fs'
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
