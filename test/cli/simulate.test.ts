import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {expectBadInput as expectBadResult} from '../helpers/expect-cli.js'

// Both simulate tiers refuse bad input as the single-action commands do.
const expectBadInput = async (args: string[], message: string | RegExp) => expectBadResult(await sluice(args), message)

describe('sluice simulate --scenario outlook-2026 --compare', () => {
  it('prints the four setups, the figures for each and a chart per setup', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026', '--compare'])
    expect(code, stderr).toBe(0)
    const rows = Object.fromEntries(
      stdout
        .split('\n')
        .filter((l) => /^(no-guard|cap-third|panic-50|cap-shed-slow-start) /.test(l))
        .map((l) => [l.split(/\s+/)[0], l]),
    )
    expect(Object.keys(rows)).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
    // The last column is the load during the fault: no retries in this scenario, so 1.00×.
    expect(rows['no-guard']).toMatch(/not recovered\s+0\s+1\.00×$/)
    expect(rows['panic-50']).toMatch(/\b0 s\b/)
    expect(rows['cap-shed-slow-start']).toMatch(/\b5 s\s+14\s+1\.00×$/)
    // One chart per setup, with braille plots, markers and a legend.
    expect(stdout.match(/^outlook-2026 · /gm)).toHaveLength(4)
    expect(stdout).toMatch(/[\u2801-\u28ff]/)
    expect(stdout).toMatch(/fault.*fix/)
    expect(stdout).toContain('in rotation (took traffic that second, before its checks ejected any) (servers, right axis)')
    expect(stdout).not.toContain('\u001b[') // no colour without a TTY
  })

  it("--json gives the documented shape, and the seed's verdicts hold in it", async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026', '--compare', '--json'])
    expect(code, stderr).toBe(0)
    const json = JSON.parse(stdout)
    expect(json.scenario).toBe('outlook-2026')
    const byName = Object.fromEntries(json.setups.map((s: {name: string}) => [s.name, s]))
    for (const s of json.setups) {
      expect(Object.keys(s)).toEqual(
        expect.arrayContaining(['name', 'meanServedDuringFault', 'lostPercent', 'recoveredSecondsAfterFix', 'minInRotation', 'series']),
      )
      expect(Object.keys(s.series)).toEqual(expect.arrayContaining(['t', 'offered', 'served', 'inRotation']))
      expect(s.series.t).toHaveLength(600)
      expect(s.series.served).toHaveLength(600)
    }
    expect(byName['no-guard'].recoveredSecondsAfterFix).toBeNull()
    expect(byName['no-guard'].meanServedDuringFault).toBeLessThan(300)
    expect(byName['cap-third'].meanServedDuringFault).toBeGreaterThan(3 * byName['no-guard'].meanServedDuringFault)
    expect(byName['panic-50'].recoveredSecondsAfterFix).toBeLessThanOrEqual(10)
    expect(byName['cap-shed-slow-start'].meanServedDuringFault).toBeGreaterThanOrEqual(1260)
    expect(byName['cap-shed-slow-start'].recoveredSecondsAfterFix).toBeLessThanOrEqual(15)
  })

  // Across processes: test/smoke/streams.test.ts compares this process's JSON with a spawned CLI's.
  it('is deterministic: the same scenario and seed give byte-identical JSON, run after run', async () => {
    const args = ['simulate', '--scenario', 'outlook-2026', '--compare', '--seed', '7', '--json']
    const [a, b] = await Promise.all([sluice(args), sluice(args)])
    expect(a.code).toBe(0)
    expect(a.stdout.length).toBeGreaterThan(1000)
    expect(a.stdout).toBe(b.stdout)
  })
})

describe('sluice simulate: bad input (in process)', () => {
  it('an unknown scenario', () =>
    expectBadInput(['simulate', '--scenario', 'nope'], /^Error: --scenario: unknown scenario "nope"; built-in scenarios are .*outlook-2026/))

  it('keeps exit 2 under --json, with the error as JSON on stdout', async () => {
    const {code, stdout} = await sluice(['simulate', '--setup', 'nope', '--json'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout).error).toMatchObject({exit: 2, message: expect.stringContaining('unknown setup "nope"')})
  })
})

describe('sluice --help', () => {
  it('lists simulate and shows the exit codes in its help', async () => {
    const top = await sluice(['--help'])
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/simulate\s+Simulate a pool under a fault/)
    const sim = await sluice(['simulate', '--help'])
    expect(sim.code).toBe(0)
    expect(sim.stdout).toContain('EXIT CODES')
    expect(sim.stdout).toContain('--compare')
  })
})
