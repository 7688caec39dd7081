import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedSluice} from '../helpers/cli.js'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'

const sluice = isolatedSluice('assess')

interface AssessJson {
  region: string
  out: number
  backInSeconds: number | null
  stuckAboveDemand: number | null
  stuckOut: Array<[number, number]>
  levers: Array<{kind: string; value: number | null; holds: boolean; backInSeconds: number | null}>
  map: unknown
  sentences: string[]
  watchedSeconds: number
}

/**
 * The question assess asks of outlook-2026 (20 × 100 rps, checks every 10 s, ejection 30–300 s),
 * written out by hand: 6 servers broken from 30 s and fixed at 90 s, at 1,500 rps, watched 620 s
 * after. `simulate` runs it, so a lever assess proposes is confirmed by another path than its own.
 */
function questionFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-assess-')), 'question.yaml')
  writeFileSync(
    file,
    `name: outlook-now
duration: 710
model: seed
pools: [{name: mailbox, servers: 20, capacity: 100}]
demand: {rps: 1500}
healthCheck: {interval: 10, baseEjection: 30, maxEjection: 300}
faults: [{kind: broken, servers: 6, from: 30, to: 90}]
setups: {no-guard: {}}
`,
  )
  return file
}

describe('sluice assess (spawned): a pool placed on the map of its scenario, the trigger fixed now', () => {
  it('says STUCK for 6 of 20 out at 1,500 rps (the Outlook cascade), how far from the edge, and levers the simulator confirms; exit 3', async () => {
    const out = await sluice(['assess', '--scenario', 'outlook-2026', '--setup', 'no-guard', '--demand', '1500', '--in-rotation', '14', '--quick', '--json'])
    expect(out.code, out.stderr).toBe(3)
    const a = JSON.parse(out.stdout) as AssessJson
    expect(a.region).toBe('stuck')
    expect(a.out).toBe(6)
    expect(a.backInSeconds).toBeNull()
    expect(a.map).toBeNull()
    // The seed's map at 1,500 rps: stuck from 6 to 14 of 20 broken (docs/simulate.md).
    expect(a.stuckOut).toEqual([[6, 14]])
    expect(a.stuckAboveDemand!).toBeLessThan(1500)
    expect(a.stuckAboveDemand!).toBeGreaterThan(1300)
    const cap = a.levers.find((l) => l.kind === 'cap')!
    expect(cap.holds).toBe(true)
    const shed = a.levers.find((l) => l.kind === 'shed')!
    expect(shed.holds).toBe(true)
    expect(shed.value!).toBeGreaterThan(0)
    expect(shed.value!).toBeLessThan(20)

    // The simulator, through simulate, on the same question: stuck as it stands, back with the cap assess found.
    const file = questionFile()
    const run = async (policy?: string) => {
      const r = await sluice(['simulate', '--scenario', file, ...(policy ? ['--policy', policy] : []), '--json'])
      expect(r.code, r.stderr).toBe(0)
      return (JSON.parse(r.stdout) as {setups: Array<{recoveredSecondsAfterFix: number | null}>}).setups[0].recoveredSecondsAfterFix
    }
    expect(await run()).toBeNull()
    expect(await run(`maxEjectionPercent=${cap.value}`)).not.toBeNull()

    const text = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick'])
    expect(text.code).toBe(3)
    expect(text.stdout).toContain(
      'STUCK: with 6 of 20 servers out of rotation at 1,500 rps, fixing the trigger now would not bring it back on its own: the model of outlook-2026 is still short of full service 620 s after the fix.',
    )
    expect(text.stdout).toContain('At 1,500 rps it is stuck with 6–14 of 20 servers out (now 6).')
    expect(text.stdout).toMatch(/The smallest lever that gets it out: .+, back at full service \d+ s after\./)
    expect(text.stdout).toContain('Levers, each checked by simulation from now, the trigger fixed now (setup no-guard):')
    expect(text.stdout).not.toContain('The map:')
  }, 60_000)

  it('says UNHARMED with every server in and RECOVERING with all 20 out (they come back together), both exit 0', async () => {
    const whole = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '20', '--quick'])
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.stdout).toContain('UNHARMED: every server in rotation at 1,500 rps, 0% errors.')
    expect(whole.stdout).toContain('At 1,500 rps it is stuck with 6–14 of 20 servers out (now 0): 6 more out and it tips.')
    const all = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '0', '--quick', '--json'])
    expect(all.code, all.stderr).toBe(0)
    const a = JSON.parse(all.stdout) as AssessJson
    expect(a.region).toBe('recovering')
    expect(a.backInSeconds).not.toBeNull()
    expect(a.levers).toEqual([])
    // With the trigger known to have broken 6, the same pool is where the cascade leaves it: stuck.
    const six = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '0', '--broken', '6', '--quick', '--json'])
    expect(six.code, six.stderr).toBe(3)
    expect((JSON.parse(six.stdout) as AssessJson).region).toBe('stuck')
  }, 60_000)

  it('draws the map, servers out × demand, with the pool marked on the row of its demand', async () => {
    const out = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14'], {env: {COLUMNS: '120'}})
    expect(out.code, out.stderr).toBe(3)
    expect(out.stdout).toContain('The map: servers out of rotation × demand, the trigger fixed at the same moment in every cell, watched 620 s after')
    const rows = out.stdout.split('\n').filter((l) => /[│┤]/.test(l) && l.includes('●'))
    expect(rows).toHaveLength(1)
    // Six servers out: the seventh cell (two characters each) of the row, on the stuck side of its edge.
    const cells = rows[0].slice(rows[0].search(/[│┤]/) + 1)
    expect([...cells][12]).toBe('●')
    expect(out.stdout).toContain('● the pool now')
  }, 60_000)

  it('refuses what it cannot place, naming the flag', async () => {
    const cases: Array<[string[], string]> = [
      [['--demand', '1500'], '--in-rotation: a described pool needs both --demand and --in-rotation'],
      [['--demand', '1500', '--in-rotation', '25'], "--in-rotation: expected at most the pool's 20 servers but received: 25"],
      [[], 'missing the pool: --target-group and --load-balancer to read a live one, or --demand and --in-rotation to describe one'],
      [['--demand', '1500', '--in-rotation', '5', '--watch', '10'], '--watch: re-assesses a live pool'],
      [['--demand', '1500', '--in-rotation', '5', '--broken', '30'], "--broken: expected at most the pool's 20 servers but received: 30"],
      [['--target-group', 'arn:x'], '--load-balancer: a live pool is named by both --target-group and --load-balancer'],
    ]
    for (const [flags, message] of cases) {
      const out = await sluice(['assess', '--scenario', 'outlook-2026', ...flags])
      expect(out.code, flags.join(' ')).toBe(2)
      expect(out.stderr, flags.join(' ')).toContain(message)
    }
  }, 60_000)
})
