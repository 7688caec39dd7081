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
