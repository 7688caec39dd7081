import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {at, cases, escape, twoRegionsDns} from '../helpers/bad-runbooks.js'
import type {CliResult} from '../helpers/cli.js'
import {isolatedInProcess} from '../helpers/command.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'

/** Every command runs without AWS and with its own state directory, in this process. */
const sluice = isolatedInProcess('bad')

const dir = mkdtempSync(join(tmpdir(), 'sluice-bad-runbooks-'))

function write(name: string, text: string): string {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const files = cases.map(({name, text}) => write(`${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`, text))
/** What the runbook loader, in this process, says about the i-th bad file. */
function loaderMessage(i: number): string {
  try {
    parseRunbook(files[i], cases[i].text)
  } catch (error) {
    return (error as Error).message
  }
  throw new Error(`${cases[i].name}: the loader accepted it`)
}

/** One `sluice validate` over every bad file: each gets its own line, in order, then a count. */
let validateAll: Promise<CliResult> | undefined
const validated = (): Promise<CliResult> => (validateAll ??= sluice(['validate', ...files]))

describe('a bad runbook: exit 2 and one line with file:line:column and what was expected', () => {
  it('sluice validate FILE... prints one error line per bad file, in order, then how many were invalid', async () => {
    const validate = await validated()
    expect(validate.code, validate.stderr).toBe(2)
    expect(validate.stdout).toBe('')
    const lines = validate.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(files.length + 1)
    // Each is what the loader says about that file (test/runbook/load.test.ts checks those messages).
    files.forEach((file, i) => expect(lines[i]).toBe(loaderMessage(i)))
    expect(lines.at(-1)).toBe(`${files.length} of ${files.length} runbooks are invalid`)
  })

  it('run --dry-run on a bad runbook: exit 2, nothing on stdout, the problem validate prints as one "Error: " line on stderr', async () => {
    const i = cases.findIndex((c) => c.name.startsWith('a bake shorter than the TTL, with no'))
    const [validate, run] = await Promise.all([validated(), sluice(['run', files[i], '--dry-run'])])
    const line = validate.stderr.split('\n').find((l) => l.startsWith(`${files[i]}:`))
    expect(line, validate.stderr).toBe(loaderMessage(i))
    expect(run.code, run.stderr).toBe(2)
    expect(run.stdout).toBe('')
    const rLines = run.stderr.trimEnd().split('\n')
    expect(rLines).toHaveLength(1)
    expect(rLines[0]).toBe(`Error: ${line}`)
    expect(run.stderr).not.toMatch(/\bat .*\.js:\d+/)
  })

  it('validate --json reports the same problem without printing it on stderr', async () => {
    const {text} = cases[1]
    const file = write('overweight-json.yaml', text)
    const {code, stdout, stderr} = await sluice(['validate', file, '--json'])
    expect(code).toBe(2)
    expect(stderr).toBe('')
    const json = JSON.parse(stdout) as {runbooks: Array<{file: string; valid: boolean; error?: string}>}
    expect(json.runbooks).toHaveLength(1)
    expect(json.runbooks[0].valid).toBe(false)
    expect(json.runbooks[0].error).toMatch(new RegExp(`^${escape(file)}:${at(text, '150')}: steps\\[0\\]\\.schedule\\[2\\]: expected a weight of at most 100%`))
  })

  it('the same short bake with allowShortBake: true validates and rehearses, with a warning', async () => {
    const text = `name: short-bake-allowed
${twoRegionsDns}steps:
  - action: ramp
    set: api-west
    schedule: [5, 50]
    bake: 30
    allowShortBake: true
`
    const file = write('short-bake-allowed.yaml', text)
    const [validate, run] = await Promise.all([sluice(['validate', file]), sluice(['run', file, '--dry-run'])])
    expect(validate.code, validate.stderr).toBe(0)
    expect(validate.stdout).toBe(`${file}: ok (short-bake-allowed, 1 step)\n`)
    expect(validate.stderr).toBe('')
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^Outcome: completed\b/m)
    expect(run.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 1\] warning bake of 30 s is shorter than the TTL of 60 s/m)
  })
})

/** The one line a rehearsal of a bad runbook prints (exit 2, nothing on stdout): where each test checks it points. */
async function refusedRehearsalLine(file: string): Promise<string> {
  const {code, stdout, stderr} = await sluice(['run', file, '--dry-run'])
  expect(code, stderr).toBe(2)
  expect(stdout).toBe('')
  const lines = stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  return lines[0]
}

describe('a runbook whose rehearsal scenario lacks a pool it names', () => {
  it('run --dry-run exits 2 pointing at the weighted set in targets.dns', async () => {
    const text = `name: wrong-region
targets:
  dns:
    zone: Z2FDTNDATAQYW2
    record: api.example.com.
    ttl: 60
    sets:
      api-east: east
      api-north: north
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
rehearsal:
  scenario: two-regions
steps:
  - action: freeze
    reason: rehearsal
`
    const file = write('wrong-region.yaml', text)
    const refused = await refusedRehearsalLine(file)
    expect(refused).toBe(
      `Error: ${file}:${at(text, 'north', 'api-north: north')}: the rehearsal scenario two-regions has no pool "north"; its pools are east, west`,
    )
  })

  it('run --dry-run exits 2 pointing at the target group in targets.targetGroups', async () => {
    const text = `name: wrong-group
targets:
  targetGroups:
    cafe: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/cafe/73e2d6bc24d8a067
rehearsal:
  scenario: two-regions
steps:
  - action: cycle
    pool: cafe
    batch: 1
`
    const file = write('wrong-group.yaml', text)
    const refused = await refusedRehearsalLine(file)
    // The entry `cafe: arn:...` on line 4: either its key or its value is a fair place to point.
    const [line, keyColumn] = at(text, 'cafe: arn').split(':')
    const valueColumn = at(text, 'arn', 'cafe: arn').split(':')[1]
    expect(refused).toMatch(
      new RegExp(
        `^Error: ${escape(file)}:${line}:(${keyColumn}|${valueColumn}): the rehearsal scenario two-regions has no pool "cafe"; its pools are east, west$`,
      ),
    )
  })

  it('run --dry-run exits 2 pointing at a restrict step whose traffic type the scenario lacks', async () => {
    const text = `name: wrong-type
targets:
  listener: arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/api/1a2b3c4d/5e6f7a8b
rehearsal:
  scenario: outlook-recovery
steps:
  - action: restrict
    type: decommissioned-lookup
    paths: [/lookup/*]
`
    const file = write('wrong-type.yaml', text)
    const {code, stdout, stderr} = await sluice(['run', file, '--dry-run'])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(
      `Error: ${file}:${at(text, 'decommissioned-lookup')}: the rehearsal scenario outlook-recovery has no traffic type "decommissioned-lookup"; its types are interactive, background-sync\n`,
    )
  })
})

describe('an approve step in a run that is not interactive', () => {
  const text = `name: needs-approval
description: Freeze, ask a person, unfreeze.
targets:
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
rehearsal:
  scenario: two-regions
steps:
  - action: freeze
    reason: rehearsing an approval
  - action: approve
    message: Move traffic back to west?
  - action: unfreeze
`

  it('is refused without --yes (exit 4, says to pass --yes), and goes through with --yes (exit 0)', async () => {
    const file = write('needs-approval.yaml', text)
    const [refused, json, approved] = await Promise.all([
      sluice(['run', file, '--dry-run']),
      sluice(['run', file, '--dry-run', '--json']),
      sluice(['run', file, '--dry-run', '--yes']),
    ])

    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stdout).toMatch(/^Outcome: refused — step 2 \(Approval: Move traffic back to west\?\): .*pass --yes/m)
    expect(refused.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 2\] REFUSED .*not interactive.*pass --yes/m)
    expect(refused.stderr).toMatch(/^\[\+\d\d:\d\d\] run: refused /m)
    expect(refused.stderr).not.toMatch(/^\[\+\d\d:\d\d\] \[step 3\] start/m)

    expect(json.code, json.stderr).toBe(4)
    const run = JSON.parse(json.stdout) as {outcome: string; exitCode: number; message: string; steps: Array<{status: string}>}
    expect(run.outcome).toBe('refused')
    expect(run.exitCode).toBe(4)
    expect(run.message).toContain('--yes')
    expect(run.steps.map((s) => s.status)).toEqual(['done', 'refused', 'skipped'])

    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stdout).toMatch(/^Outcome: completed\b/m)
    expect(approved.stderr).toContain('approved by --yes: Move traffic back to west?')
    expect(approved.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 3\] done /m)
  })
})
