import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {deleteListenerRules, setWeightsByHand} from './by-hand.js'
import {cfg, dnsRunbook, ruleCount, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {journalOf, killWhen, onlyRunId} from './state-fixture.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('resume reads the world before it acts (spawned, against moto)', () => {
  it('a restriction removed and weights moved by hand while the run was down: resume stops (exit 4) showing the drift; status --run shows it and exits 4 (0 once none); --reapply puts it back, journalled, then finishes', async () => {
    const targetsAndSteps = `  listener: ${fx.targets.listenerArn}
steps:
  - {action: restrict, type: background-sync, paths: ['/sync/*']}
  - {action: ramp, set: maintenance, schedule: [30, 100], bake: 2}
`
    const file = dnsRunbook(fx, 'drift', targetsAndSteps)
    await killWhen(['run', file, '--yes'], /maintenance at 30%/, fx.env)
    const runId = await onlyRunId(fx.env)
    const listener = fx.targets.listenerArn
    expect(await ruleCount(listener)).toBe(1)
    // While it is down: the restriction disappears (as a HAProxy restart drops a runtime map
    // entry), and someone moves the weights.
    expect(await deleteListenerRules(cfg, listener)).toBe(1)
    await setWeightsByHand(cfg, fx.targets.zoneId, fx.targets.record, {mailbox: 50, maintenance: 50})
    const changes = () => fx.proxy.of('ChangeResourceRecordSets').filter((c) => c.status === 200).length + fx.proxy.of('CreateRule').length
    const before = changes()

    const refused = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stderr).toMatch(/drift since run \S+ stopped: the restriction on background-sync on .*: the journal says in place; now gone/)
    expect(refused.stderr).toMatch(/drift since run \S+ stopped: the weights of .*: the journal says mailbox=70 maintenance=30; now mailbox=50 maintenance=50/)
    expect(refused.stderr).toContain(`Nothing was changed. \`sluice resume ${runId} --reapply\` puts back what the journal says first`)
    expect(changes()).toBe(before)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 50, maintenance: 50})
    expect(await ruleCount(listener)).toBe(0)

    // Drift found: refused (exit 4), as resume's own check, with everything still printed.
    const shown = await sluice(['status', '--run', runId], {env: fx.env})
    expect(shown.code, shown.stderr).toBe(4)
    expect(shown.stdout).toMatch(/^drift: the restriction on background-sync on .*: the journal says in place; now gone/m)
    expect(shown.stdout).toMatch(/^drift: the weights of .*: the journal says mailbox=70 maintenance=30; now mailbox=50 maintenance=50/m)
    expect(shown.stdout).toMatch(/^freeze: /m)
    expect(shown.stderr).not.toContain('Error:')
    const status = await sluice(['status', '--run', runId, '--json'], {env: fx.env})
    expect(status.code, status.stderr).toBe(4)
    const drift = (JSON.parse(status.stdout) as {drift: {found: Array<{subject: string; left: string; now: string}>}}).drift.found
    expect(drift.map((d) => [d.left, d.now])).toEqual(
      expect.arrayContaining([
        ['in place', 'gone'],
        ['mailbox=70 maintenance=30', 'mailbox=50 maintenance=50'],
      ]),
    )

    const reapplied = await sluice(['resume', runId, '--yes', '--reapply'], {env: fx.env})
    expect(reapplied.code, reapplied.stderr).toBe(0)
    expect(reapplied.stderr).toContain('put back: restrict background-sync on')
    expect(reapplied.stderr).toMatch(/put back: set the weights of .* back to mailbox=70 maintenance=30/)
    expect(await ruleCount(listener)).toBe(1)
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 0, maintenance: 100})
    const journal = await journalOf(runId, fx.env)
    expect(journal.status).toBe('completed')
    expect(journal.entries.filter((e) => e.type === 'drift').map((e) => (e as unknown as {reapply: boolean}).reapply)).toEqual([false, true])
    const putBack = journal.entries.filter(
      (e) => e.type === 'mutation' && (e.mutation as unknown as {step: number}).step === -1 && e.mutation!.phase === 'outcome',
    )
    expect(putBack.map((e) => e.mutation!.kind).sort()).toEqual(['restrict', 'weights'])

    const clean = await sluice(['status', '--run', runId], {env: fx.env})
    expect(clean.code, clean.stderr).toBe(0)
    expect(clean.stdout).toContain(`drift: none; everything run ${runId} left is as its journal says`)
  }, 120_000)
})
