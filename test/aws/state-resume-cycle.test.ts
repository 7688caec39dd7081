import {chmodSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {ElasticLoadBalancingV2Client, ModifyTargetGroupAttributesCommand} from '@aws-sdk/client-elastic-load-balancing-v2'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {targetsOf} from './proxy.js'
import {spawnRun, when} from './spawned-run.js'
import {cfg, journalOf, killWhen, onlyRunId, registeredOf, runbook as runbookFor, useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

describe('kill -9 and resume', () => {
  it('mid-cycle: resume returns the batch left out, cycles the rest, and every target is back', async () => {
    const hook = join(fx.dir, 'slow-restart.sh')
    const log = join(fx.dir, 'restarts.log')
    writeFileSync(hook, `#!/bin/sh\necho "$SLUICE_TARGET_ID" >> '${log}'\nsleep 1\n`)
    chmodSync(hook, 0o755)
    const file = runbook('cycle', `  - {action: cycle, pool: blue, batch: 2, restart: {command: [${hook}]}}\n`)
    const before = await registeredOf(fx)
    await killWhen(['run', file, '--yes'], /batch 2 of 4 \([^)]*\): restart/, fx.env)
    // The killed run left batch 2 out of rotation.
    expect((await registeredOf(fx)).length).toBe(6)
    const runId = await onlyRunId(fx.env)

    const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await registeredOf(fx)).toEqual(before)
    // Hooks get the bare target (the IP here), not id:port.
    const restarted = readFileSync(log, 'utf8').trim().split('\n')
    expect(new Set(restarted)).toEqual(new Set(before.map((t) => t.split(':')[0])))
    // Each target restarted once: the batch the killed run had restarted is not restarted again.
    expect(restarted).toHaveLength(before.length)
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

  it.each([
    ['before its outcome was journaled', 0],
    ['after its outcome was journaled', 1500],
  ])(
    'kill -9 while a batch drains (AWS keeps it draining for the deregistration delay), %s: resume waits the drain out, deregisters nothing twice, restarts nothing still draining',
    async (_when, killAfterMs) => {
      // ELBv2 as AWS runs it: deregistered targets stay listed as draining for the delay (8 s here).
      const delay = 8
      fx.proxy.emulateDraining(delay)
      const elb = new ElasticLoadBalancingV2Client(cfg)
      await elb.send(
        new ModifyTargetGroupAttributesCommand({
          TargetGroupArn: fx.targetGroupArn,
          Attributes: [{Key: 'deregistration_delay.timeout_seconds', Value: String(delay)}],
        }),
      )
      elb.destroy()
      const hook = join(fx.dir, 'restart.sh')
      const log = join(fx.dir, 'restarts.log')
      writeFileSync(hook, `#!/bin/sh\necho "$SLUICE_TARGET_ID $(date +%s%3N)" >> '${log}'\n`)
      chmodSync(hook, 0o755)
      const file = runbook('drain', `  - {action: cycle, pool: blue, batch: 4, restart: {command: [${hook}]}}\n`)
      const before = await registeredOf(fx)

      // Killed as the second batch's DeregisterTargets arrives (it still lands), or once it is journaled.
      const run = spawnRun(['run', file, '--yes'], fx.env)
      fx.proxy.onCall = (call) => {
        if (call.operation !== 'DeregisterTargets' || fx.proxy.count('DeregisterTargets') !== 2) return
        if (killAfterMs === 0) run.signal('SIGKILL')
        else setTimeout(() => run.signal('SIGKILL'), killAfterMs)
      }
      const killed = await run.ended
      fx.proxy.onCall = undefined
      expect(killed.signal, killed.stderr).toBe('SIGKILL')
      // The killed call still lands: the proxy records its drain once moto answers, which on a
      // loaded machine can come after the client has gone.
      await when(() => fx.proxy.of('DeregisterTargets').filter((c) => c.status !== 0).length >= 2, 30_000)
      const out = fx.proxy.draining(fx.targetGroupArn).map((d) => d.target)
      expect(out, 'the second batch is still draining when the resume starts').toHaveLength(4)
      const runId = await onlyRunId(fx.env)

      const resumed = await sluice(['resume', runId, '--yes'], {env: fx.env})
      expect(resumed.code, resumed.stderr).toBe(0)
      // Every target is back.
      expect(await registeredOf(fx)).toEqual(before)
      // No target was deregistered twice without a register in between (from the calls AWS saw).
      const membership = new Map<string, string[]>()
      for (const call of fx.proxy.calls.filter((c) => c.operation === 'DeregisterTargets' || c.operation === 'RegisterTargets'))
        for (const t of targetsOf(new URLSearchParams(call.body))) membership.set(t, [...(membership.get(t) ?? []), call.operation])
      for (const [t, ops] of membership) {
        expect(ops, t).toEqual(['DeregisterTargets', 'RegisterTargets'])
      }
      expect([...membership.keys()].sort()).toEqual(before)
      // No target was restarted before its drain ended: each restart is after its deregistration's drain.
      const restarts = readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' '))
      expect(restarts.map(([id]) => id).sort()).toEqual(before.map((t) => t.split(':')[0]).sort())
      for (const [id, at] of restarts) {
        const drain = fx.proxy.drains.find((d) => d.target.startsWith(`${id}:`))!
        expect(Number(at), `${id} restarted ${Number(at) - drain.until} ms after its drain ended`).toBeGreaterThanOrEqual(drain.until)
      }
      // The journal's outcomes match what happened: both deregistrations and both registrations applied.
      const journal = await journalOf(runId, fx.env)
      const outcomes = journal.entries.filter((e) => e.type === 'mutation' && e.mutation!.phase === 'outcome').map((e) => e.mutation!)
      const applied = (kind: string) =>
        outcomes.filter((m) => m.kind === kind && m.ok).map((m) => ((kind === 'deregister' ? m.before : m.after) as string[]).slice().sort())
      expect(
        outcomes.every((m) => m.ok),
        JSON.stringify(outcomes),
      ).toBe(true)
      expect(applied('deregister').flat().sort()).toEqual(before)
      expect(applied('register').flat().sort()).toEqual(before)
      expect(applied('deregister')).toHaveLength(2)
      if (killAfterMs === 0) expect(resumed.stderr).toMatch(/found on resume: .*deregister.*: applied/)
    },
    120_000,
  )
})
