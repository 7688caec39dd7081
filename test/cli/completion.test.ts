import {mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {letGoOfRuns, stateWith} from '../helpers/live-runs.js'

// What `sluice complete` answers, through the CLI in this process. The scripts the shells run,
// calling a real sluice: test/smoke/completion.test.ts.

afterEach(letGoOfRuns)

const OLD = '20261204-050000-0a0a'
const DEAD = '20261204-055000-3d3d'
const LIVE = '20261204-060000-1b1b'
const NEWEST = '20261204-070000-4e4e'

const complete = async (words: string[], env: Record<string, string> = {}) => {
  const {code, stdout, stderr} = await sluice(['complete', '--', ...words], {env})
  return {code, stdout, stderr}
}
const lines = (stdout: string) => stdout.split('\n').slice(0, -1)

describe('sluice complete: argument and flag values for the shells (in process)', () => {
  it('a runbook argument: shipped runbook names matching what is typed, and YAML files (:files)', async () => {
    const r = await complete(['run', 'outlook'])
    expect(r.code, r.stderr).toBe(0)
    expect(lines(r.stdout)).toEqual([':files', 'outlook-paced-return', 'outlook-staged-return', 'outlook-staged-return-haproxy'])
    for (const command of [['plan'], ['validate', 'a.yaml'], ['iam-policy'], ['tune'], ['status']]) {
      const each = await complete([...command, 'regional'])
      expect(lines(each.stdout), command.join(' ')).toEqual([':files', 'regional-dns-ramp'])
    }
    // Past its one argument, and at a flag or a command name, it leaves completion to the static script.
    for (const words of [['run', 'x', ''], ['run', '--dr'], ['ru'], ['freeze', '']]) expect((await complete(words)).stdout, words.join(' ')).toBe('')
  })

  it('run ids: the running one first, then the rest newest first, for every command that takes RUN and status --run', async () => {
    const {env, dir} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
      {runId: DEAD, life: 'dead'},
      {runId: NEWEST, life: 'ended'},
    ])
    // What a renewal killed mid-write leaves: `sluice locks` sweeps it away once old; completion must not.
    const leftover = join(dir, 'locks', 'journal_x.json.999999.tmp')
    writeFileSync(leftover, '{}')
    utimesSync(leftover, new Date(Date.now() - 3600_000), new Date(Date.now() - 3600_000))
    const before = listing(dir)
    for (const words of [
      ['watch', ''],
      ['pause', ''],
      ['promote', ''],
      ['abort', ''],
      ['resume', ''],
      ['rollback', ''],
      ['journal', ''],
      ['status', '--run', ''],
    ]) {
      const r = await complete(words, env)
      expect(r.code, r.stderr).toBe(0)
      expect(lines(r.stdout), words.join(' ')).toEqual([':values', LIVE, NEWEST, DEAD, OLD])
    }
    expect(lines((await complete(['watch', '20261204-05'], env)).stdout)).toEqual([':values', DEAD, OLD])
    // --state on the line is the store read.
    expect(lines((await complete(['abort', '--state', dir, ''], {SLUICE_STATE: join(dir, 'none')})).stdout)).toEqual([':values', LIVE, NEWEST, DEAD, OLD])
    // Completion writes nothing: the store is as it was.
    expect(listing(dir)).toEqual(before)
  })

  it('scenario names for --scenario (also as --scenario=), the setups of the scenario meant for --setup, and fixed options', async () => {
    expect(lines((await complete(['simulate', '--scenario', 'outlook-2026'])).stdout)).toEqual([':files', 'outlook-2026', 'outlook-2026-haproxy'])
    expect(lines((await complete(['run', 'x', '-s', 'two'])).stdout)).toEqual([':files', 'two-regions'])
    // Bash hands `--scenario=out` over as three words.
    expect(lines((await complete(['simulate', '--scenario', '=', 'relap'])).stdout)).toEqual([':files', 'relapse'])
    expect(lines((await complete(['simulate', '--scenario=relap'])).stdout)).toEqual([':files', 'relapse'])
    // The runbook's rehearsal scenario (outlook-recovery), unless --scenario names another.
    expect(lines((await complete(['run', 'outlook-staged-return', '--setup', ''])).stdout)).toEqual([':values', 'no-guard', 'cap-shed-slow-start'])
    expect(lines((await complete(['simulate', '--scenario', 'outlook-recovery', '--setup', 'cap'])).stdout)).toEqual([':values', 'cap-shed-slow-start'])
    expect(lines((await complete(['run', 'x', '--rollback', ''])).stdout)).toEqual([':values', 'ramped', 'now'])
  })

  it("flags after the runbook argument or another flag: the command's flags matching what is typed, less those given once already", async () => {
    const after = await complete(['run', 'outlook-staged-return', '--'])
    expect(after.code, after.stderr).toBe(0)
    const offered = lines(after.stdout)
    expect(offered[0]).toBe(':values')
    expect(offered).toEqual(expect.arrayContaining(['--dry-run', '--yes', '--scenario', '--setup', '--json', '--state', '--approve']))
    // Hidden flags are not offered, and every one offered is run's.
    expect(offered.slice(1).every((f) => f.startsWith('--'))).toBe(true)
    expect(lines((await complete(['run', 'outlook-staged-return', '--dr'])).stdout)).toEqual([':values', '--dry-run'])
    // Given already: not again; --approve may be given again.
    const again = lines((await complete(['run', 'outlook-staged-return', '--dry-run', '--approve', '2', '--'])).stdout)
    expect(again).not.toContain('--dry-run')
    expect(again).toContain('--approve')
    expect(lines((await complete(['promote', '20261204-060000-1b1b', '--f'])).stdout)).toEqual([':values', '--full'])
    expect(lines((await complete(['validate', 'a.yaml', 'b.yaml', '--j'])).stdout)).toEqual([':values', '--json'])
  })

  it('a broken store, a team store or a runbook that does not load: nothing on stderr, exit 0', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-complete-broken-')), 'not-a-dir')
    writeFileSync(file, 'x')
    const broken = await complete(['watch', ''], {SLUICE_STATE: file})
    expect(broken).toEqual({code: 0, stdout: ':values\n', stderr: ''})
    // A team's DynamoDB store is not read at all (its first read creates its table), so no AWS call waits.
    const started = Date.now()
    const team = await complete(['journal', '--state', 'dynamodb://sluice-state', ''])
    expect(team).toEqual({code: 0, stdout: ':values\n', stderr: ''})
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(await complete(['run', 'no-such-runbook', '--setup', ''])).toEqual({code: 0, stdout: ':values\n', stderr: ''})
    expect(await complete([])).toEqual({code: 0, stdout: '', stderr: ''})
  })
})

/**
 * Every file under a directory, and the journals' sizes, to see that nothing was made, removed or
 * appended to (the running run's own lock is renewed by this process meanwhile, so its time moves).
 */
function listing(dir: string): string[] {
  return (readdirSync(dir, {recursive: true}) as string[]).sort().map((f) => (f.endsWith('.jsonl') ? `${f} ${statSync(join(dir, f)).size}` : f))
}
