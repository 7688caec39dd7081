import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedSluice, root} from '../helpers/cli.js'

// What only a process of its own shows: the exit code a shell sees (0/1/2/3/4 here, 130 in
// signals.test.ts), stdout and stderr as two streams, and what Node itself prints. Each outcome's
// details are tested in process (test/cli/); here, one real process per exit code.

const sluice = isolatedSluice('smoke')
const inRoot = {cwd: root}
const progressLine = /^\[\+\d\d:\d\d\] /m

describe.concurrent('exit codes and streams of a real process (spawned)', () => {
  it('0: a rehearsal that recovers; the report on stdout, the progress on stderr, neither in the other', async () => {
    const r = await sluice(['run', 'runbooks/regional-dns-ramp.yaml', '--dry-run'], inRoot)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^Outcome: completed\b/m)
    expect(r.stdout).not.toMatch(progressLine)
    expect(r.stderr).toMatch(/^\[\+\d\d:\d\d\] run: completed /m)
    expect(r.stderr).not.toMatch(/^Outcome: /m)
  })

  it('1: a live run with no AWS credentials; nothing on stdout, the failed call on stderr', async () => {
    const r = await sluice(['run', 'runbooks/outlook-staged-return.yaml'], inRoot)
    expect(r.code, r.stderr).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^Error: cannot tell which AWS account the run would act in: STS GetCallerIdentity .*failed: NoCredentials: /m)
  })

  it('2: bad input on one line of stderr, nothing on stdout; under --json the error is JSON on stdout, exit 2 still', async () => {
    const text = await sluice(['run', 'outlook-staged-return', '--dryrun'])
    expect(text).toEqual({code: 2, stdout: '', stderr: 'Error: Nonexistent flag: --dryrun; did you mean --dry-run?\n'})
    const json = await sluice(['simulate', '--setup', 'nope', '--json'])
    expect(json.code).toBe(2)
    expect(json.stderr).toBe('')
    expect(JSON.parse(json.stdout).error).toMatchObject({exit: 2, message: expect.stringContaining('unknown setup "nope"')})
  })

  it("3: a rehearsal that relapses; the report on stdout, and no Node.js warning among stderr's progress lines", async () => {
    const r = await sluice(['run', 'runbooks/naive-full-return.yaml', '--dry-run'], inRoot)
    expect(r.code, r.stderr).toBe(3)
    expect(r.stdout).toMatch(/^Outcome: (held|gate-failed) — /m)
    expect(r.stdout).not.toMatch(progressLine)
    expect(r.stderr).toMatch(/^\[\+\d\d:\d\d\] run: (held|gate-failed) /m)
    expect(r.stderr).not.toContain('MaxListenersExceededWarning')
    expect(r.stderr).not.toMatch(/^\(node:\d+\)/m)
  })

  it('4: an approval nobody can give without a terminal is refused, and --json keeps the code', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-smoke-approve-')), 'needs-approval.yaml')
    writeFileSync(
      file,
      `name: needs-approval
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
`,
    )
    const [text, json] = await Promise.all([sluice(['run', file, '--dry-run']), sluice(['run', file, '--dry-run', '--json'])])
    expect(text.code, text.stderr).toBe(4)
    expect(text.stdout).toMatch(/^Outcome: refused — step 2 /m)
    expect(text.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 2\] REFUSED .*pass --yes/m)
    expect(json.code, json.stderr).toBe(4)
    expect(JSON.parse(json.stdout)).toMatchObject({outcome: 'refused', exitCode: 4})
  })
})
