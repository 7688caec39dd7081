import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

const outlook = 'runbooks/outlook-staged-return.yaml'

/** Bad input: exit 2, one line on stderr that starts with what it names, nothing on stdout. */
async function expectBadInput(args: string[], start: string) {
  const r = await sluiceInProcess(['tune', ...args])
  expect({args, exit: r.exit}).toEqual({args, exit: 2})
  expect(r.stdout).toBe('')
  const lines = r.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0].startsWith(`Error: ${start}`), lines[0]).toBe(true)
}

describe('sluice tune (in process)', () => {
  it('refuses bad flags with exit 2, naming the flag', async () => {
    await expectBadInput([outlook, '--seeds', '0'], '--seeds')
    await expectBadInput([outlook, '--seeds', '101'], '--seeds')
    await expectBadInput([outlook, '--seeds', 'many'], '--seeds')
    await expectBadInput([outlook, '--demand-margin', '95'], '--demand-margin: expected a number less than or equal to 90')
    await expectBadInput([outlook, '--demand-margin', '-5'], '--demand-margin: expected a number greater than or equal to 0')
    await expectBadInput([outlook, '--demand-margin', 'ten'], '--demand-margin: expected a number but received: ten')
  })

  it('refuses a runbook with no ramp, at its steps, and one it cannot find', async () => {
    await expectBadInput(['runbooks/thread-hold-recovery.yaml'], 'runbooks/thread-hold-recovery.yaml:')
    const r = await sluiceInProcess(['tune', 'runbooks/thread-hold-recovery.yaml'])
    expect(r.stderr).toMatch(/:\d+:\d+: thread-hold-recovery has no ramp step, or lift with a schedule, to tune\n$/)
    await expectBadInput(['no-such-runbook'], 'RUNBOOK')
  })

  it('says where --write cannot write, exit 2', async () => {
    const missing = join(mkdtempSync(join(tmpdir(), 'sluice-tune-')), 'no-such-dir', 'tuned.yaml')
    const r = await sluiceInProcess(['tune', outlook, '--seeds', '1', '--demand-margin', '0', '--write', missing, '--json'])
    expect(r.exit).toBe(2)
    expect(JSON.parse(r.stdout).error.message).toBe(`--write: cannot write ${missing}: ENOENT`)
  })

  it('rehearses against another setup with --setup, as run --dry-run does, and names a wrong one; --no-slow-minority leaves the slow tenth out', async () => {
    const r = await sluiceInProcess<{setup: string; scenario: string; robustness: {slowMinority: null; tuned: Array<{passed: boolean}>}}>([
      'tune',
      outlook,
      '--setup',
      'cap-shed-slow-start',
      '--seeds',
      '1',
      '--demand-margin',
      '0',
      '--no-slow-minority',
      '--json',
    ])
    expect(r.exit, r.stderr).toBe(0)
    expect(r.result).toMatchObject({scenario: 'outlook-recovery', setup: 'cap-shed-slow-start', robustness: {slowMinority: null, tuned: [{passed: true}]}})
    await expectBadInput([outlook, '--setup', 'nope'], '--setup: unknown setup "nope" in scenario outlook-recovery')
  })

  it('with no schedule that passes everywhere, leaves the ramps alone, saves nothing and exits 3', async () => {
    // A check before every ramp that fails whenever the pool has collapsed, which with arrivals
    // drawn it has on every variant (at 90% on seeds 1 and 3 a few requests still get through):
    // nothing a ramp does can change it.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tune-'))
    const file = join(dir, 'impossible.yaml')
    const park = '  - action: ramp\n    name: Park traffic on the maintenance page\n'
    const text = readFileSync(outlook, 'utf8')
    expect(text).toContain(park)
    writeFileSync(
      file,
      text.replace(park, `  - action: check\n    name: Impossible\n    bake: 30\n    gate: {metric: error-rate, threshold: 0, pool: mailbox}\n${park}`),
    )
    const out = join(dir, 'tuned.yaml')
    const r = await sluiceInProcess(['tune', file, '--write', out])
    expect(r.exit, r.stderr).toBe(3)
    expect(r.stdout).toContain('Time to full traffic: none → none')
    expect(r.stdout).toContain('The shipped ramps pass 0 of 16 rehearsals')
    // Where the seeds that failed one way differ by demand, each demand says its own: never a
    // seed that did not fail that way.
    expect(r.stdout).toMatch(
      /^ {2}fail at demand 90% \(seeds 2, 4, 5\); 100%, 110% \(seeds 1–5\): step 3: gate error-rate ≤ 0% over 30 s \(mailbox\): 100\.00% fail \(Impossible\)$/m,
    )
    expect(r.stdout).toMatch(/^ {2}fail at demand 90% \(seeds 1\): step 3: gate error-rate ≤ 0% over 30 s \(mailbox\): 9\d\.\d\d% fail \(Impossible\)$/m)
    // The slow tenth fails the same way, and says so on a line of its own.
    expect(r.stdout).toMatch(
      /^ {2}fail at demand 100% \(seeds 1, slow servers\): step 3: gate error-rate ≤ 0% over 30 s \(mailbox\): 100\.00% fail \(Impossible\)$/m,
    )
    expect(r.stdout).toContain('No schedule tune tried passes every gate in all 16 rehearsals; the ramps are left as they are.')
    expect(r.stderr).toContain(`nothing saved to ${out}: no tuned runbook`)
    expect(existsSync(out)).toBe(false)
  })

  it('says in --help what time to full traffic means', async () => {
    const r = await sluiceInProcess(['tune', '--help'])
    expect(r.stdout.replace(/\s+/g, ' ')).toContain(
      "Time to full traffic: seconds of rehearsal time from the runbook's start to the change that brings the last traffic back: the last step of its last ramp (the final weight; clients see it within one TTL), or of its last lift (the whole type let back) where that comes later",
    )
    expect(r.stdout).toContain('--demand-margin=PERCENT')
    expect(r.stdout).toContain('--seeds=<value>')
  })
})
