import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {runJs, sluice, spawnCollected} from '../helpers/cli.js'
import {letGoOfRuns, stateWith} from '../helpers/live-runs.js'

// The completion scripts as the shells run them: bash sources the script, which calls the sluice on
// the PATH. What `sluice complete` answers is tested in process (test/cli/completion.test.ts).

afterEach(letGoOfRuns)

const OLD = '20261204-050000-0a0a'
const LIVE = '20261204-060000-1b1b'

describe('sluice autocomplete writes scripts that complete values (spawned)', () => {
  let cache: string
  let bin: string
  beforeAll(async () => {
    cache = mkdtempSync(join(tmpdir(), 'sluice-autocomplete-'))
    // `sluice` on the PATH, as an installed one is: the scripts call the sluice being completed.
    bin = join(cache, 'bin')
    mkdirSync(bin)
    symlinkSync(runJs, join(bin, 'sluice'))
    const r = await sluice(['autocomplete', 'bash'], {env: {XDG_CACHE_HOME: cache}})
    expect(r.code, r.stderr).toBe(0)
  })
  const script = (shell: 'bash' | 'zsh') => join(cache, 'sluice', 'autocomplete', 'functions', shell, shell === 'bash' ? 'sluice.bash' : '_sluice')

  /** What bash's completion offers for the words (the last one is being typed), as the shell would call it. */
  async function bashCompletes(words: string[], env: Record<string, string>, cwd?: string): Promise<string[]> {
    const program = `source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _sluice_values_autocomplete; printf '%s\\n' "\${COMPREPLY[@]}"`
    const r = await spawnCollected('bash', ['--norc', '--noprofile', '-c', program, 'bash', script('bash'), 'sluice', ...words], {
      cwd,
      env: {...env, NO_COLOR: '1', PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH}`},
    })
    expect(r.code, r.stderr).toBe(0)
    return r.stdout.split('\n').filter(Boolean)
  }

  it('the bash script has the layer once, after the static function it falls back to', () => {
    const text = readFileSync(script('bash'), 'utf8')
    expect(text.match(/sluice complete: argument and flag values/g)).toHaveLength(1)
    expect(text).toContain('complete -F _sluice_autocomplete sluice')
    expect(text.trimEnd().endsWith('complete -F _sluice_values_autocomplete sluice')).toBe(true)
  })

  it('bash completes run ids (the running one first), runbook names and YAML files, scenario names, and still commands', async () => {
    const {env} = await stateWith([
      {runId: OLD, life: 'ended'},
      {runId: LIVE, life: 'running'},
    ])
    expect(await bashCompletes(['watch', ''], env)).toEqual([LIVE, OLD])
    const cwd = mkdtempSync(join(tmpdir(), 'sluice-autocomplete-cwd-'))
    writeFileSync(join(cwd, 'outlook-mine.yaml'), '')
    writeFileSync(join(cwd, 'outlook-notes.txt'), '')
    expect((await bashCompletes(['run', 'outlook'], env, cwd)).sort()).toEqual([
      'outlook-mine.yaml',
      'outlook-paced-return',
      'outlook-staged-return',
      'outlook-staged-return-haproxy',
    ])
    expect(await bashCompletes(['simulate', '--scenario', '=', 'two'], env)).toEqual(['two-regions'])
    expect(await bashCompletes(['journ'], env)).toEqual(['journal'])
    // Flags after the runbook argument (the plugin's static function finds no command there) and after another flag.
    expect(await bashCompletes(['run', 'outlook-staged-return', '--dr'], env)).toEqual(['--dry-run'])
    expect(await bashCompletes(['run', 'outlook-staged-return', '--dry-run', '--ye'], env)).toEqual(['--yes'])
    // Right after the command, the static function still answers.
    expect(await bashCompletes(['run', '--dr'], env)).toEqual(['--dry-run'])
  })

  it('the zsh script keeps the plugin function as _sluice_static behind a _sluice that asks sluice complete, and parses', () => {
    const text = readFileSync(script('zsh'), 'utf8')
    expect(text).toContain('\n_sluice_static() {\n')
    expect(text).toContain('complete -- "${(@)words[2,CURRENT]}"')
    expect(text.trimEnd().endsWith('_sluice "$@"')).toBe(true)
    if (hasZsh()) execFileSync('zsh', ['-n', script('zsh')])
  })

  it('--refresh-cache writes the scripts again, with the layer once', async () => {
    const r = await sluice(['autocomplete', '--refresh-cache'], {env: {XDG_CACHE_HOME: cache}})
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(script('bash'), 'utf8').match(/sluice complete: argument and flag values/g)).toHaveLength(1)
    expect(readFileSync(script('zsh'), 'utf8').match(/sluice complete: argument and flag values/g)).toHaveLength(1)
  })
})

function hasZsh(): boolean {
  try {
    execFileSync('zsh', ['-c', 'true'])
    return true
  } catch {
    return false
  }
}
