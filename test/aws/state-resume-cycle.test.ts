import {chmodSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {journalOf, killWhen, onlyRunId, registeredOf, runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
const current = useStateFixture()
beforeEach(() => {
  fx = current()
})
const registered = () => registeredOf(fx)
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('kill -9 and resume', () => {
  it('mid-cycle: resume returns the batch left out, cycles the rest, and every target is back', async () => {
    const hook = join(fx.dir, 'slow-restart.sh')
    const log = join(fx.dir, 'restarts.log')
    writeFileSync(hook, `#!/bin/sh\necho "$SLUICE_TARGET_ID" >> '${log}'\nsleep 1\n`)
    chmodSync(hook, 0o755)
    const file = runbook('cycle', `  - {action: cycle, pool: blue, batch: 2, restart: {command: [${hook}]}}\n`)
    const before = await registered()
    await killWhen(['run', file, '--yes'], /batch 2 of 4 \([^)]*\): restart/, fx.env)
    // The killed run left batch 2 out of rotation.
    expect((await registered()).length).toBe(6)
    const runId = await onlyRunId(fx.env)

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await registered()).toEqual(before)
    const restarted = readFileSync(log, 'utf8').trim().split('\n')
    expect(new Set(restarted)).toEqual(new Set(before))
    // Every deregistration in the journal has its registration.
    const journal = await journalOf(runId, fx.env)
    const done = journal.entries.filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome' && e.mutation!.ok)
    const out = done.filter((e) => e.mutation!.kind === 'deregister').flatMap((e) => e.mutation!.before as string[])
    const back = done.filter((e) => e.mutation!.kind === 'register').flatMap((e) => e.mutation!.after as string[])
    expect(new Set(back)).toEqual(new Set(out))
    expect(new Set(out)).toEqual(new Set(before))
    // Batch calls, not per-target ones: the proxy saw exactly as many calls as the journal.
    expect(fx.proxy.count('DeregisterTargets')).toBe(out.length / 2)
  }, 120_000)
})
