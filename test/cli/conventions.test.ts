import {describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'

/** The oclif conventions a user expects: help, suggestions for typos, shipped runbooks by name. */
const sluice = isolatedInProcess('conventions')

describe('oclif conventions', () => {
  it('sluice help run shows the exit codes, like run --help', async () => {
    const [help, flag] = await Promise.all([sluice(['help', 'run']), sluice(['run', '--help'])])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toMatch(/^EXIT CODES\n {2}0 {4}done$/m)
    expect(help.stdout).toBe(flag.stdout)
  })

  it('a mistyped command, without a terminal, names the command meant on one line and exits 2', async () => {
    const {code, stdout, stderr} = await sluice(['rn'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe('Error: rn is not a sluice command; did you mean run? (sluice help lists every command)\n')
  })

  it('a mistyped command under --json: the error as a JSON object on stdout, with the command meant, nothing on stderr (exit 2)', async () => {
    for (const [args, error] of [
      [['rn', '--json'], {message: 'rn is not a sluice command; did you mean run? (sluice help lists every command)', exit: 2, suggestion: 'run'}],
      [['zzzzzz', '--json'], {message: 'zzzzzz is not a sluice command (sluice help lists every command)', exit: 2}],
      [['simulate', 'outlook-2026', '--json'], {message: 'simulate takes no argument "outlook-2026"; `sluice simulate --help` shows its flags', exit: 2}],
    ] as const) {
      const {code, stdout, stderr} = await sluice([...args])
      expect(code, args.join(' ')).toBe(2)
      expect(stderr).toBe('')
      expect(JSON.parse(stdout)).toEqual({error})
    }
    // After `--` it is an argument, not the flag: text as ever.
    const after = await sluice(['rn', '--', '--json'])
    expect(after.stdout).toBe('')
    expect(after.stderr).toMatch(/^Error: rn is not a sluice command; did you mean run\?/)
  })

  it('a guess at a command that can change live state is a dry run only with --dry-run before any `--`, on a command that takes it', async () => {
    const {isDryRun} = await import('../../src/cli/not-found.js')
    const takes = {'dry-run': {}, yes: {}}
    expect(isDryRun(['outlook-staged-return', '--dry-run'], takes)).toBe(true)
    expect(isDryRun(['outlook-staged-return'], takes)).toBe(false)
    expect(isDryRun(['outlook-staged-return', '--', '--dry-run'], takes)).toBe(false)
    expect(isDryRun(['RUN', '--dry-run'], {yes: {}})).toBe(false)
    expect(isDryRun(['--dry-run'], undefined)).toBe(false)
  })

  it('a mistyped flag names the flag meant', async () => {
    const {code, stderr} = await sluice(['run', 'outlook-staged-return', '--dryrun'])
    expect(code).toBe(2)
    expect(stderr).toBe('Error: Nonexistent flag: --dryrun; did you mean --dry-run?\n')
  })

  it('sluice runbooks --json lists every shipped runbook with its rehearsal scenario', async () => {
    const {code, stdout, stderr} = await sluice(['runbooks', '--json'])
    expect(code, stderr).toBe(0)
    const {runbooks} = JSON.parse(stdout) as {runbooks: Array<{name: string; scenario: string; description: string}>}
    expect(runbooks.map((r) => [r.name, r.scenario])).toEqual([
      ['drill-cold-return', 'drill-cold-return'],
      ['drill-cold-storm', 'drill-cold-storm'],
      ['drill-judge-before', 'drill-judge-before'],
      ['drill-judge-regression', 'drill-judge-regression'],
      ['drill-judge-shared-errors', 'drill-judge-shared-errors'],
      ['drill-lift-at-once', 'drill-thread-hold-lingering'],
      ['drill-lift-by-degrees', 'drill-thread-hold-lingering'],
      ['drill-thread-hold-recovery', 'drill-thread-hold'],
      ['naive-full-return', 'outlook-recovery'],
      ['outlook-paced-return', 'outlook-recovery'],
      ['outlook-staged-return', 'outlook-recovery'],
      ['outlook-staged-return-haproxy', 'outlook-recovery-haproxy'],
      ['regional-dns-ramp', 'two-regions'],
      ['thread-hold-recovery', 'cafe-2024'],
    ])
    for (const r of runbooks) expect(r.description, r.name).not.toBe('')
  })

  it('a shipped runbook runs by name, from any directory', async () => {
    const {code, stdout, stderr} = await sluice(['run', 'regional-dns-ramp', '--dry-run'], {cwd: '/'})
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^Rehearsal of regional-dns-ramp against two-regions\b/m)
  })

  it('an unknown runbook name exits 2 and lists the shipped ones', async () => {
    const {code, stdout, stderr} = await sluice(['plan', 'outlook-staged'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(
      'Error: RUNBOOK: unknown runbook "outlook-staged"; built-in runbooks are drill-cold-return, drill-cold-storm, drill-judge-before, drill-judge-regression, drill-judge-shared-errors, drill-lift-at-once, drill-lift-by-degrees, drill-thread-hold-recovery, naive-full-return, outlook-paced-return, outlook-staged-return, outlook-staged-return-haproxy, regional-dns-ramp, thread-hold-recovery, or give a path to a YAML file\n',
    )
  })
})
