import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {root, sluiceInProcess} from '../helpers/command.js'

describe('sluice run --dry-run --json (in process)', () => {
  it('rehearses regional-dns-ramp: completed, exit 0, every step done, the JSON on stdout and no progress on stderr', async () => {
    const file = `${root}runbooks/regional-dns-ramp.yaml`
    const {exit, stdout, stderr} = await sluiceInProcess(['run', file, '--dry-run', '--json'])
    expect(exit, stderr).toBe(0)
    expect(stderr).not.toMatch(/^\[\+\d\d:\d\d\] \[step /m)
    const run = JSON.parse(stdout) as RunJson
    expect(run).toMatchObject({runbook: 'regional-dns-ramp', mode: 'rehearsal', outcome: 'completed', exitCode: 0, stoppedAt: null})
    const steps = (parse(readFileSync(file, 'utf8')) as {steps: Array<{action: string}>}).steps
    expect(run.steps.map((s) => [s.action, s.status])).toEqual(steps.map((s) => [s.action, 'done']))
    expect(run.report!.recovered).toBe(true)
  })

  it('the naive return relapses: exit 3 under --json too, with the failing gate in the message', async () => {
    const {exit, stdout} = await sluiceInProcess(['run', `${root}runbooks/naive-full-return.yaml`, '--dry-run', '--json'])
    expect(exit).toBe(3)
    const run = JSON.parse(stdout) as RunJson
    expect(['held', 'gate-failed']).toContain(run.outcome)
    expect(run.exitCode).toBe(3)
    expect(run.message).toMatch(/gate .*measured .*threshold/)
  })
})
