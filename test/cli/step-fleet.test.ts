import {describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('step-fleet')

// A single action rehearsed from flags with no --scenario: the default scenario (outlook-2026: one
// pool, mailbox, of 20 servers, one traffic type) made to have what the flags name, and said so on stderr.
describe('a dry run from flags rehearses on the fleet the flags describe', () => {
  it('ramp --set onto a set the default fleet does not have: its pool renamed, traffic parked on a sorry pool, the ramp moves it', async () => {
    const r = await sluice(['ramp', '--dry-run', '--set', 'web', '--schedule', '10,50,100', '--bake', '60', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("rehearsal fleet: outlook-2026's pool mailbox (20 servers of 100 rps) is called web")
    expect(r.stderr).toContain('rehearsal fleet: traffic starts parked on a sorry pool maintenance (weights web=0 maintenance=100)')
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.outcome).toBe('completed')
    expect(json.steps[0].message).toMatch(/web at 100%/)
  })

  it('ramp --set onto the pool it has: only the parked traffic is added', async () => {
    const r = await sluice(['ramp', '--dry-run', '--set', 'mailbox', '--schedule', '50,100', '--bake', '60'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).not.toContain('is called')
    expect(r.stderr).toContain('a sorry pool maintenance (weights mailbox=0 maintenance=100)')
  })

  it('restrict --type a type it does not have: added as a fifth of demand, and turned away', async () => {
    const r = await sluice(['restrict', '--dry-run', '--type', 'background-sync', '--path', '/sync/*', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('rehearsal fleet: a traffic type background-sync added as 20% of demand (all 80%, background-sync 20%)')
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.report!.restrictedAtEnd).toEqual(['background-sync'])
    expect(json.report!.restrictedPercentAtEnd).toBeCloseTo(20, 0)
  })

  it('lift --type: the type is turned away from the start, and the lift lets it back', async () => {
    const r = await sluice(['lift', '--dry-run', '--type', 'background-sync', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('rehearsal fleet: background-sync is turned away from the start (Retry-After 120 s), for the lift to let back')
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.steps[0].message).toBe('background-sync traffic is let through again')
    expect(json.report!.restrictedAtEnd).toEqual([])
  })

  it('cycle --pool a pool it does not have: its pool renamed and cycled', async () => {
    const r = await sluice(['cycle', '--dry-run', '--pool', 'web', '--batch', '5', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain("outlook-2026's pool mailbox (20 servers of 100 rps) is called web")
    expect((JSON.parse(r.stdout) as RunJson).outcome).toBe('completed')
  })

  it('with --scenario named, the scenario is rehearsed as written: what it lacks is still an error at the flag', async () => {
    const r = await sluice(['ramp', '--dry-run', '--set', 'mailbox', '--schedule', '50,100', '--bake', '60', '--scenario', 'outlook-2026'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--set: steps[0].set: a ramp moves traffic between weighted sets: targets.dns.sets needs at least two')
    expect(r.stderr).not.toContain('rehearsal fleet')
  })
})
