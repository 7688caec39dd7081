import {mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {root, sluiceInProcess} from '../helpers/command.js'

const rampTooFast = 'test/fixtures/runbooks/ramp-too-fast.yaml'

describe('sluice validate (in process)', () => {
  it('validate runbooks/*.yaml (and the ramp-too-fast fixture, valid until rehearsed) exits 0 and says ok for each file', async () => {
    const shipped = readdirSync(`${root}runbooks`)
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => `runbooks/${f}`)
    expect(shipped.length).toBeGreaterThanOrEqual(4)
    const files = [...shipped, rampTooFast]
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', ...files.map((f) => `${root}${f}`)])
    expect(exit, stderr).toBe(0)
    expect(stderr).toBe('')
    const lines = stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(files.length)
    files.forEach((file, i) => expect(lines[i]).toMatch(new RegExp(`^${`${root}${file}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ok\\b`)))
    expect(lines.at(-1)).toBe(`${root}${rampTooFast}: ok (ramp-too-fast, 3 steps)`)
  })

  it('a bad runbook among good ones: exit 2, the good one ok on stdout, the bad one as file:line:column on stderr, then the count', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'))
    const bad = join(dir, 'bad.yaml')
    writeFileSync(bad, 'name: bad\ntargets: {}\nsteps:\n  - action: frobnicate\n')
    const good = `${root}runbooks/regional-dns-ramp.yaml`
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', good, bad])
    expect(exit).toBe(2)
    expect(stdout).toMatch(new RegExp(`^${good.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ok \\(regional-dns-ramp, \\d+ steps?\\)\n$`))
    expect(stderr.trimEnd().split('\n')).toEqual([
      `${bad}:4:13: steps[0].action: expected one of freeze, unfreeze, restrict, lift, cycle, ramp, weighted-target-groups, approve, wait, check, assess, got "frobnicate"`,
      '1 of 2 runbooks are invalid',
    ])
  })

  it('--json: one entry per file with valid and the error, nothing on stderr', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'))
    const bad = join(dir, 'bad.yaml')
    writeFileSync(bad, 'name: Bad Name\ntargets: {}\nsteps:\n  - action: unfreeze\n')
    const good = `${root}runbooks/regional-dns-ramp.yaml`
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', good, bad, '--json'])
    expect(exit).toBe(2)
    expect(stderr).toBe('')
    const json = JSON.parse(stdout) as {runbooks: Array<{file: string; valid: boolean; error?: string}>}
    expect(json.runbooks.map((r) => [r.file, r.valid])).toEqual([
      [good, true],
      [bad, false],
    ])
    expect(json.runbooks[1].error).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1:7: name: expected a lower-case name`))
  })
})

/** A live runbook on AWS that outlook-recovery cannot rehearse: it cycles the sorry pool, and restricts a type the scenario lacks. */
const unrehearsable = `name: cycles-maintenance
targets:
  dns:
    zone: Z1
    record: mail.example.com.
    ttl: 30
    sets: {main: mailbox, parked: maintenance}
  targetGroups: {mailbox: arn:tg/mailbox, maintenance: arn:tg/maintenance}
  listener: arn:listener
rehearsal:
  scenario: outlook-recovery
steps:
  - {action: restrict, type: calendar-sync, paths: [/cal/], retryAfter: 60}
  - {action: ramp, set: main, schedule: [100], bake: 30}
`

describe('sluice validate: validity and rehearsal are two questions (in process)', () => {
  it('a live runbook its scenario cannot rehearse is valid (exit 0), answered once, each warning naming the scenario', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'))
    const file = join(dir, 'cycles-maintenance.yaml')
    writeFileSync(file, unrehearsable)
    const good = `${root}runbooks/regional-dns-ramp.yaml`
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', file, good])
    expect(exit, stderr).toBe(0)
    expect(stdout.trimEnd().split('\n')).toEqual([
      `${file}: ok (cycles-maintenance, 2 steps), 2 warnings: its rehearsal scenario outlook-recovery cannot rehearse it`,
      expect.stringMatching(/: ok \(regional-dns-ramp, \d+ steps?\)$/),
    ])
    expect(stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warning: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:8:\\d+: pool "maintenance" is a sorry pool in outlook-recovery; it has no targets to cycle$`,
        ),
      ),
      expect.stringMatching(/:13:\d+: the rehearsal scenario outlook-recovery has no traffic type "calendar-sync"; its types are /),
    ])
    expect(stderr).not.toContain('invalid')
  })

  it('--json: the file once, valid, with its warnings; an invalid file beside it once, invalid (exit 2)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'))
    const file = join(dir, 'cycles-maintenance.yaml')
    writeFileSync(file, unrehearsable)
    const bad = join(dir, 'bad.yaml')
    writeFileSync(bad, unrehearsable.replace('name: cycles-maintenance', 'name: Bad Name'))
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', file, bad, '--json'])
    expect(exit).toBe(2)
    expect(stderr).toBe('')
    const json = JSON.parse(stdout) as {runbooks: Array<{file: string; valid: boolean; warnings: string[]; problems?: string[]}>}
    expect(json.runbooks.map((r) => [r.file, r.valid, r.warnings.length])).toEqual([
      [file, true, 2],
      [bad, false, 0],
    ])
    expect(json.runbooks[0].warnings[0]).toMatch(/: pool "maintenance" is a sorry pool in outlook-recovery; it has no targets to cycle$/)
    expect(json.runbooks[1].problems).toEqual([expect.stringMatching(/:1:7: name: expected a lower-case name/)])
  })

  it('a rehearsal scenario that cannot be found is a warning naming it, not invalidity', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-validate-'))
    const file = join(dir, 'lost.yaml')
    writeFileSync(file, unrehearsable.replace('scenario: outlook-recovery', 'scenario: no-such-scenario'))
    const {exit, stdout, stderr} = await sluiceInProcess(['validate', file])
    expect(exit, stderr).toBe(0)
    expect(stdout).toContain(`${file}: ok (cycles-maintenance, 2 steps), 1 warning: its rehearsal scenario no-such-scenario cannot rehearse it`)
    expect(stderr).toMatch(/^warning: the rehearsal scenario no-such-scenario cannot rehearse it: .*no-such-scenario/)
  })
})
