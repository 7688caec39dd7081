import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedSluice, type CliResult} from '../helpers/cli.js'

/** Every spawn runs without AWS and with its own state directory. */
const sluice = isolatedSluice('bad')

const dir = mkdtempSync(join(tmpdir(), 'sluice-bad-runbooks-'))

function write(name: string, text: string): string {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

/**
 * `line:column` (both from 1) of `needle` in `text`; with `within`, of the last `needle` inside the
 * first occurrence of `within`, e.g. the value of one key: at(text, '30', 'bake: 30').
 */
function at(text: string, needle: string, within = needle): string {
  const outer = text.indexOf(within)
  if (outer < 0) throw new Error(`"${within}" is not in the fixture`)
  const inner = within.lastIndexOf(needle)
  if (inner < 0) throw new Error(`"${needle}" is not in "${within}"`)
  const offset = outer + inner
  const line = text.slice(0, offset).split('\n').length
  const column = offset - text.lastIndexOf('\n', offset - 1)
  return `${line}:${column}`
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const twoRegionsDns = `targets:
  dns:
    zone: Z2FDTNDATAQYW2
    record: api.example.com.
    ttl: 60
    sets: {api-east: east, api-west: west}
  metrics: {source: cloudwatch}
rehearsal:
  scenario: two-regions
`

interface BadCase {
  name: string
  text: string
  /** Where the error must point, as line:column. */
  where: (text: string) => string
  /** The rest of the line after `file:line:column: `. */
  message: RegExp
}

const cases: BadCase[] = [
  {
    name: 'an unknown step (action: frobnicate)',
    text: `name: unknown-step
${twoRegionsDns}steps:
  - action: freeze
    reason: rehearsal
  - action: frobnicate
    pool: east
`,
    where: (t) => at(t, 'frobnicate'),
    message: /^steps\[1\]\.action: expected one of freeze, unfreeze, restrict, lift, cycle, ramp, approve, wait, check, got \"frobnicate\"$/,
  },
  {
    name: 'a weight over 100% in a ramp schedule',
    text: `name: overweight
${twoRegionsDns}steps:
  - action: ramp
    set: api-west
    schedule: [1, 50, 150]
    bake: 60
`,
    where: (t) => at(t, '150'),
    message: /^steps\[0\]\.schedule\[2\]: expected a weight of at most 100%, got 150%$/,
  },
  {
    name: 'a cycle naming a pool that is not in targets.targetGroups',
    text: `name: missing-group
targets:
  targetGroups:
    east: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/east/1a2b3c4d
rehearsal:
  scenario: two-regions
steps:
  - action: cycle
    pool: west
    batch: 2
`,
    where: (t) => at(t, 'west', 'pool: west'),
    message: /^steps\[0\]\.pool: no target group for pool "west" in targets\.targetGroups; it has east$/,
  },
  {
    name: 'a restrict step without targets.listener',
    text: `name: missing-listener
${twoRegionsDns}steps:
  - action: freeze
    reason: rehearsal
  - action: restrict
    type: background-sync
`,
    where: (t) => at(t, 'action: restrict'),
    message: /^steps\[1\]: a restrict step needs targets\.listener\b/,
  },
  {
    name: 'a bake shorter than the TTL, with no allowShortBake',
    text: `name: short-bake
${twoRegionsDns}steps:
  - action: ramp
    set: api-west
    schedule: [5, 50]
    bake: 30
`,
    where: (t) => at(t, '30', 'bake: 30'),
    message: /^steps\[0\]\.bake: a bake of 30 s is shorter than the record's TTL of 60 s\b.*allowShortBake: true$/,
  },
  {
    name: 'a bake shorter than the TTL, from defaults.bake (the step is named)',
    text: `name: short-default-bake
${twoRegionsDns}defaults:
  bake: 45
steps:
  - action: ramp
    set: api-west
    schedule: [5, 50]
`,
    where: (t) => at(t, 'ramp', 'action: ramp'),
    message: /^steps\[0\]\.action: a bake of 45 s is shorter than the record's TTL of 60 s\b/,
  },
  {
    name: 'a batch larger than the disruption budget',
    text: `name: big-batch
targets:
  targetGroups:
    west: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/west/1a2b3c4d
rehearsal:
  scenario: two-regions
steps:
  - action: cycle
    pool: west
    batch: 50%
    budget: 25%
`,
    where: (t) => at(t, '50%', 'batch: 50%'),
    message: /^steps\[0\]\.batch: a batch of 50% is larger than the disruption budget of 25%$/,
  },
  {
    name: 'a gate with no threshold, and none in defaults.gate',
    text: `name: no-threshold
${twoRegionsDns}defaults:
  gate:
    window: 30
steps:
  - action: check
    gate:
      metric: error-rate
      pool: west
`,
    where: (t) => at(t, 'metric: error-rate'),
    message: /^steps\[0\]\.gate: gate on error-rate has no threshold, and defaults\.gate sets none$/,
  },
  {
    name: 'malformed YAML: a key given twice',
    text: `name: twice
${twoRegionsDns}steps:
  - action: unfreeze
name: again
`,
    where: (t) => at(t, 'name: again'),
    message: /^malformed YAML: Map keys must be unique$/,
  },
  {
    name: 'malformed YAML: a mapping where a plain value belongs',
    text: `name: nested
${twoRegionsDns}steps:
  - action: freeze
    reason: traffic: back
`,
    where: (t) => at(t, 'traffic: back'),
    message: /^malformed YAML: .*mapping/i,
  },
  {
    name: 'malformed YAML: a tab as indentation',
    text: `name: tabbed
${twoRegionsDns}steps:
\t- action: unfreeze
`,
    where: (t) => at(t, '\t'),
    message: /^malformed YAML: Tabs are not allowed as indentation$/,
  },
]

const files = cases.map(({name, text}) => write(`${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`, text))
/** One `sluice validate` over every bad file: each gets its own line, in order, then a count. */
let validateAll: Promise<CliResult> | undefined
const validated = (): Promise<CliResult> => (validateAll ??= sluice(['validate', ...files]))

describe.concurrent('a bad runbook: exit 2 and one line with file:line:column and what was expected', () => {
  it('sluice validate FILE... prints one error line per bad file, in order, then how many were invalid', async () => {
    const validate = await validated()
    expect(validate.code, validate.stderr).toBe(2)
    expect(validate.stdout).toBe('')
    const lines = validate.stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(files.length + 1)
    files.forEach((file, i) => expect(lines[i].startsWith(`${file}:`), lines[i]).toBe(true))
    expect(lines.at(-1)).toBe(`${files.length} of ${files.length} runbooks are invalid`)
  })

  it.each(cases.map((c, i) => ({...c, file: files[i]})))('$name', async ({file, text, where, message}) => {
    const prefix = `${file}:${where(text)}: `
    const [validate, run] = await Promise.all([validated(), sluice(['run', file, '--dry-run'])])

    // validate: the error line, without "Error: ".
    expect(validate.code, validate.stderr).toBe(2)
    const line = validate.stderr.split('\n').find((l) => l.startsWith(`${file}:`))
    expect(line, validate.stderr).toBeDefined()
    expect(line!.startsWith(prefix), `${line}\nexpected it to start with ${prefix}`).toBe(true)
    expect(line!.slice(prefix.length)).toMatch(message)

    // run --dry-run: nothing on stdout, the same problem as one "Error: " line on stderr.
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
    expect(run.stderr).toMatch(/^\[step 1\] warning bake of 30 s is shorter than the TTL of 60 s/m)
  })
})

describe.concurrent('a runbook whose rehearsal scenario lacks a pool it names', () => {
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
  metrics: {source: cloudwatch}
rehearsal:
  scenario: two-regions
steps:
  - action: freeze
    reason: rehearsal
`
    const file = write('wrong-region.yaml', text)
    const {code, stdout, stderr} = await sluice(['run', file, '--dry-run'])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(`Error: ${file}:${at(text, 'north', 'api-north: north')}: the rehearsal scenario two-regions has no pool "north"; its pools are east, west`)
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
    const {code, stdout, stderr} = await sluice(['run', file, '--dry-run'])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    // The entry `cafe: arn:...` on line 4: either its key or its value is a fair place to point.
    const [line, keyColumn] = at(text, 'cafe: arn').split(':')
    const valueColumn = at(text, 'arn', 'cafe: arn').split(':')[1]
    expect(lines[0]).toMatch(
      new RegExp(`^Error: ${escape(file)}:${line}:(${keyColumn}|${valueColumn}): the rehearsal scenario two-regions has no pool "cafe"; its pools are east, west$`),
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
  metrics: {source: cloudwatch}
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
    expect(refused.stderr).toMatch(/^\[step 2\] REFUSED .*not interactive.*pass --yes/m)
    expect(refused.stderr).toMatch(/^run: refused /m)
    expect(refused.stderr).not.toMatch(/^\[step 3\] start/m)

    expect(json.code, json.stderr).toBe(4)
    const run = JSON.parse(json.stdout) as {outcome: string; exitCode: number; message: string; steps: Array<{status: string}>}
    expect(run.outcome).toBe('refused')
    expect(run.exitCode).toBe(4)
    expect(run.message).toContain('--yes')
    expect(run.steps.map((s) => s.status)).toEqual(['done', 'refused', 'skipped'])

    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stdout).toMatch(/^Outcome: completed\b/m)
    expect(approved.stderr).toContain('approved by --yes: Move traffic back to west?')
    expect(approved.stderr).toMatch(/^\[step 3\] done /m)
  })
})
