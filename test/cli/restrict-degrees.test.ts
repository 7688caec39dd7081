import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('restrict-degrees')
const dir = mkdtempSync(join(tmpdir(), 'sluice-degrees-'))

// The shipped lift drills' runbooks, rehearsed: drill-thread-hold-lingering's lookups (10% of 500
// rps) hold a thread 20 s each to the end of the run, so all of them need 1,000 of the pool's 600
// threads, and a tenth of them 100.
const degrees = 'drill-lift-by-degrees'
const atOnce = 'drill-lift-at-once'

describe('a restriction lifted by degrees, rehearsed', () => {
  it('while the dependency still holds threads: by degrees stops at the first share its gate fails and puts back the last that passed; at once, the pool stalls', async () => {
    const [slow, fast] = await Promise.all([sluice(['run', degrees, '--dry-run', '--json']), sluice(['run', atOnce, '--dry-run', '--json'])])
    expect(slow.code, slow.stderr).toBe(3)
    expect(fast.code, fast.stderr).toBe(3)
    const byDegrees = JSON.parse(slow.stdout) as RunJson
    const whole = JSON.parse(fast.stdout) as RunJson
    const lift = byDegrees.steps[3]
    expect(lift.status).toBe('failed')
    // Each share is judged before the next: 10% passes, a larger one fails, and the 10% share comes back.
    const contexts = [...new Set(lift.verdicts.map((v) => v.context))]
    expect(contexts[0]).toBe('lookup 10% back')
    expect(lift.verdicts.filter((v) => v.context === 'lookup 10% back').every((v) => v.outcome === 'pass')).toBe(true)
    expect(lift.verdicts.at(-1)!.outcome).toBe('fail')
    expect(lift.message).toMatch(/restriction back to lookup \(90% turned away\)$/)
    expect(byDegrees.report!.restrictedAtEnd).toEqual(['lookup'])
    // 90% of the lookups' 10% of demand is still turned away at the end.
    expect(byDegrees.report!.restrictedPercentAtEnd).toBeCloseTo(9, 0)
    // At once, every lookup comes back and the pool stalls: most of the run's requests are lost.
    expect(whole.report!.restrictedAtEnd).toEqual([])
    expect(whole.report!.lostPercent).toBeGreaterThan(3 * byDegrees.report!.lostPercent)
  })

  it('restrict --share turns away that share of a type in a rehearsal from flags', async () => {
    const r = await sluice([
      'restrict',
      '--type',
      'lookup',
      '--path',
      '/routing/lookup/',
      '--share',
      '40',
      '--scenario',
      'drill-thread-hold-lingering',
      '--dry-run',
      '--json',
    ])
    expect(r.code, r.stderr).toBe(0)
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.steps[0].message).toBe('40% of lookup traffic now gets 503 with Retry-After: 120')
    expect(json.report!.restrictedPercentAtEnd).toBeCloseTo(4, 1)
  })
})

describe('a share of a type on an ALB', () => {
  const tg = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/cafe/0123456789abcdef'
  const listener = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/app/api/9f0d3a2b1c4e5f67/abcdef0123456789'

  it('is refused where the runbook says it, with why and what to do instead', async () => {
    const file = join(dir, 'on-alb.yaml')
    writeFileSync(
      file,
      `name: on-alb
targets:
  targetGroups: {cafe: ${tg}}
  listener: ${listener}
steps:
  - {action: restrict, type: lookup, paths: [/lookup/*], share: 50}
  - {action: lift, type: lookup, schedule: [50, 100]}
`,
    )
    const r = await sluice(['validate', file])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      `on-alb.yaml:6:65: steps[0].share: an ALB listener rule turns away every request it matches (a fixed response cannot be weighted against a forward), so it cannot turn away 50% of lookup: restrict all of it, restrict a narrower path, or put the share behind HAProxy (targets.haproxy)`,
    )
    expect(r.stderr).toMatch(/on-alb\.yaml:7:\d+: steps\[1\]\.schedule: .*so lookup cannot be let back by degrees: lift it at once \(no schedule\)/)
  })

  it('from flags, names the flag', async () => {
    const r = await sluice(['restrict', '--type', 'lookup', '--path', '/lookup/*', '--share', '50', '--listener', listener, '--yes'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^Error: --share: steps\[0\]\.share: an ALB listener rule turns away every request it matches/)
  })

  it('on HAProxy from flags, names the backends it needs rather than inventing one', async () => {
    const r = await sluice([
      'restrict',
      '--type',
      'lookup',
      '--path',
      '/lookup/',
      '--share',
      '50',
      '--haproxy-socket',
      '/run/haproxy/none.sock',
      '--restrict-map',
      '/tmp/r.map',
      '--yes',
    ])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      '--haproxy-socket: needs --backend; a HAProxy target is its Runtime API, the restriction map its config names and the backends gates read',
    )
  })
})

describe('--schedule auto from flags', () => {
  it('sluice ramp --schedule auto probes the set (no capacity stated) and reaches 100% behind its gate', async () => {
    const r = await sluice(
      `ramp --set west --schedule auto --bake 60 --gate-metric error-rate --gate-threshold 1 --gate-pool west --scenario two-regions --dry-run --json`.split(
        ' ',
      ),
    )
    expect(r.code, r.stderr).toBe(0)
    const json = JSON.parse(r.stdout) as RunJson
    expect(json.steps[0].title).toBe('Ramp west: probing to 100% on west (5–50 points a step)')
    const shares = [...new Set(json.steps[0].verdicts.map((v) => Number(/west (\d+)%/.exec(v.context)![1])))]
    // The probe's first step is 5 points, and it grows while west stays in its band.
    expect(shares[0]).toBe(5)
    expect(shares[1] - shares[0]).toBe(10)
    expect(shares.at(-1)).toBe(100)
  })

  it('sluice lift --schedule auto needs the pool it probes, by flag', async () => {
    const r = await sluice(
      `lift --type lookup --schedule auto --bake 60 --gate-metric error-rate --gate-threshold 2 --scenario drill-thread-hold-lingering --dry-run`.split(' '),
    )
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/a lift with `schedule: auto` probes the pool its gate reads: give it a gate with a `pool`/)
  })

  it('refuses a schedule that is neither percentages nor auto, naming the flag', async () => {
    const r = await sluice(['ramp', '--set', 'west', '--schedule', 'fast', '--scenario', 'two-regions', '--dry-run'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--schedule: expected comma-separated percentages such as 1,5,25,50,100, or auto, got "fast"/)
  })
})
