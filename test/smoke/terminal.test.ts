import {spawn} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedEnv, runJs, sluice} from '../helpers/cli.js'
import {spawnInTerminal, type TerminalRun} from '../helpers/terminal.js'

// A real terminal (util-linux script(1)) is a process's own: the did-you-mean question and its
// refusal without a terminal, and colour, which only a terminal gets.

const env = () => ({SLUICE_STATE: join(mkdtempSync(join(tmpdir(), 'sluice-dym-')), 'state')})

/** Resolves once the terminal shows `pattern` (counting matches, so a second prompt is told from the first). */
async function shown(run: TerminalRun, pattern: RegExp, times = 1): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if ((run.screen().match(new RegExp(pattern, 'g')) ?? []).length >= times) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`the terminal never showed ${pattern}:\n${run.screen()}`)
}

describe.concurrent('a mistyped command (spawned)', () => {
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

describe.concurrent('a mistyped command that changes nothing (spawned)', () => {
  it('a guess whose command line is a dry run runs after one yes, never called a change to live state', async () => {
    const run = spawnInTerminal(['rn', 'regional-dns-ramp', '--dry-run', '--yes'], env())
    await shown(run, /Did you mean run\? \(y\/N\)/)
    run.type('y\r')
    const end = await run.ended
    expect(end.code, end.screen).toBe(0)
    expect(end.screen).not.toContain('can change live state')
    expect(end.screen).toContain('Rehearsal of regional-dns-ramp')
  }, 120_000)

  it('under --json on a terminal nothing is asked: the error is a JSON object on stdout (exit 2)', async () => {
    const run = spawnInTerminal(['rn', 'regional-dns-ramp', '--json'], env())
    const end = await run.ended
    expect(end.code, end.screen).toBe(2)
    expect(end.screen).not.toContain('Did you mean')
    expect(end.screen).toContain('"suggestion": "run"')
  }, 60_000)
})

describe('colour (spawned)', () => {
  it('--no-color takes the colour out of what a terminal would show in colour, as NO_COLOR does', async () => {
    // A real terminal, from util-linux's script(1): on one, the report and its chart are coloured.
    const onTerminal = (args: string[]) =>
      new Promise<{code: number | null; out: string}>((resolve, reject) => {
        const line = [process.execPath, runJs, ...args].map((a) => `'${a}'`).join(' ')
        const child = spawn('script', ['-qec', line, '/dev/null'], {env: {...process.env, NO_COLOR: undefined, ...isolatedEnv('first-touch-tty')}})
        let out = ''
        child.stdout.on('data', (d) => (out += d))
        child.on('error', reject)
        child.on('close', (code) => resolve({code, out}))
      })
    const [coloured, plain] = await Promise.all([
      onTerminal(['simulate', '--setup', 'no-guard']),
      onTerminal(['simulate', '--setup', 'no-guard', '--no-color']),
    ])
    expect(coloured.code).toBe(0)
    expect(coloured.out).toContain('\x1b[')
    expect(plain.code).toBe(0)
    expect(plain.out).not.toContain('\x1b[')
    // Without colour the lines keep apart by their patterns.
    expect(plain.out).toMatch(/━ completed \(rps\) {2}╍ offered \(rps\)/)
    // That help lists --no-color among the global flags is test/cli/first-touch.test.ts.
  })
})
