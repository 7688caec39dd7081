import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {spawnInTerminal, type TerminalRun} from '../helpers/terminal.js'

const env = () => ({SLUICE_STATE: join(mkdtempSync(join(tmpdir(), 'sluice-dym-')), 'state')})

/** Resolves once the terminal shows `pattern` (counting matches, so a second prompt is told from the first). */
async function shown(run: TerminalRun, pattern: RegExp, times = 1): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((run.screen().match(new RegExp(pattern, 'g')) ?? []).length >= times) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the terminal never showed ${pattern}:\n${run.screen()}`)
}

describe('a mistyped command (spawned)', () => {
  it('on a terminal, the did-you-mean question defaults to No: Enter runs nothing (exit 2)', async () => {
    const run = spawnInTerminal(['pasue', '20261130-054012-a1b2'], env())
    await shown(run, /Did you mean pause\? \(y\/N\)/)
    run.type('\r')
    const end = await run.ended
    expect(end.code, end.screen).toBe(2)
    expect(end.screen).toContain('Error: pasue is not a sluice command; did you mean pause?')
    expect(end.screen).not.toContain('not running')
  }, 60_000)

  it('a guess that can change something needs a second yes naming exactly what runs; Enter there runs nothing', async () => {
    const run = spawnInTerminal(['pasue', '20261130-054012-a1b2'], env())
    await shown(run, /Did you mean pause\? \(y\/N\)/)
    run.type('y\r')
    await shown(run, /sluice pause 20261130-054012-a1b2 can change live state\. Run exactly that\? \(y\/N\)/)
    run.type('\r')
    const end = await run.ended
    expect(end.code, end.screen).toBe(2)
    expect(end.screen).not.toContain('not running')
  }, 60_000)

  it('a read-only guess runs after one yes; without a terminal the suggestion is the error (exit 2)', async () => {
    const e = env()
    const run = spawnInTerminal(['jounral'], e)
    await shown(run, /Did you mean journal\? \(y\/N\)/)
    run.type('y\r')
    const end = await run.ended
    expect(end.code, end.screen).toBe(0)
    expect(end.screen).toContain('no runs in local state')
    const piped = await sluice(['pasue', '20261130-054012-a1b2'], {env: e})
    expect(piped.code).toBe(2)
    expect(piped.stderr).toBe('Error: pasue is not a sluice command; did you mean pause? (sluice help lists every command)\n')
  }, 60_000)
})
