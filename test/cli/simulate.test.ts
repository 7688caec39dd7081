import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'))

/** Bad input: exit 2, one line on stderr naming the problem, nothing on stdout, no stack trace. */
async function expectBadInput(args: string[], message: string | RegExp) {
  const result = await sluice(args)
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(typeof message === 'string' ? new RegExp(`^Error: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message)
  expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/)
}

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
    expect(rows['no-guard']).toMatch(/not recovered\s+0$/)
    expect(rows['panic-50']).toMatch(/\b0 s\b/)
    expect(rows['cap-shed-slow-start']).toMatch(/\b5 s\s+14$/)
    // One chart per setup, with braille plots, markers and a legend.
    expect(stdout.match(/^outlook-2026 · /gm)).toHaveLength(4)
    expect(stdout).toMatch(/[\u2801-\u28ff]/)
    expect(stdout).toMatch(/fault.*fix/)
    expect(stdout).toContain('in rotation (servers, right axis)')
    expect(stdout).not.toContain('\u001b[') // no colour without a TTY
  })

  it('--json gives the documented shape, and the seed\'s verdicts hold in it', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026', '--compare', '--json'])
    expect(code, stderr).toBe(0)
    const json = JSON.parse(stdout)
    expect(json.scenario).toBe('outlook-2026')
    const byName = Object.fromEntries(json.setups.map((s: {name: string}) => [s.name, s]))
    for (const s of json.setups) {
      expect(Object.keys(s)).toEqual(expect.arrayContaining(['name', 'meanServedDuringFault', 'lostPercent', 'recoveredSecondsAfterFix', 'minInRotation', 'series']))
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

  it('is deterministic: the same scenario and seed give byte-identical JSON across processes', async () => {
    const args = ['simulate', '--scenario', 'outlook-2026', '--compare', '--seed', '7', '--json']
    const [a, b] = await Promise.all([sluice(args), sluice(args)])
    expect(a.code).toBe(0)
    expect(a.stdout.length).toBeGreaterThan(1000)
    expect(a.stdout).toBe(b.stdout)
  })

  it('--svg saves the chart', async () => {
    const file = join(dir, 'chart.svg')
    const {code, stderr} = await sluice(['simulate', '--setup', 'panic-50', '--svg', file])
    expect(code, stderr).toBe(0)
    expect(stderr).toContain(`chart saved to ${file}`)
    const svg = readFileSync(file, 'utf8')
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    expect(svg).toContain('panic-50')
  })

  it('applies overrides and a custom --policy', async () => {
    const {code, stdout} = await sluice(['simulate', '--broken', '8', '--demand', '1000', '--policy', 'panicThreshold=50', '--json'])
    expect(code).toBe(0)
    const json = JSON.parse(stdout)
    expect(json.setups.map((s: {name: string}) => s.name)).toEqual(['custom'])
    expect(json.setups[0].policy.panicThreshold).toBe(50)
    expect(json.setups[0].minInRotation).toBe(12)
  })
})

describe('sluice simulate: bad input exits 2 with one clear line', () => {
  it('an unknown scenario', () => expectBadInput(['simulate', '--scenario', 'nope'], /^Error: --scenario: unknown scenario "nope"; built-in scenarios are .*outlook-2026/))
  it('an unknown setup', () => expectBadInput(['simulate', '--setup', 'nope'], /^Error: --setup: unknown setup "nope" in scenario outlook-2026; its setups are no-guard, /))
  it('a negative capacity', () => expectBadInput(['simulate', '--capacity=-100'], '--capacity: pools[0].capacity: expected a number > 0'))
  it('a fix before the fault', () => expectBadInput(['simulate', '--fault-at', '100', '--fix-at', '50'], '--fix-at/--fault-at: faults[0].to: expected the fix (to: 50) after the fault starts (from: 100)'))
  it('an unknown policy key', () => expectBadInput(['simulate', '--policy', 'ejectCap=3'], /^Error: --policy: unknown key "ejectCap"; expected one of maxEjectionPercent, /))
  it('a number flag that is not a number', () => expectBadInput(['simulate', '--servers', 'ten'], '--servers: expected an integer but received: ten'))

  it('malformed YAML, at file:line:column', async () => {
    const file = join(dir, 'broken.yaml')
    writeFileSync(file, 'name: x\npools:\n  - name: a\n   servers: 3\n')
    await expectBadInput(['simulate', '--scenario', file], new RegExp(`^Error: ${file}:\\d+:\\d+: malformed YAML: `))
  })

  it('a negative capacity in a file, at file:line:column', async () => {
    const file = join(dir, 'neg.yaml')
    writeFileSync(file, readFileSync(new URL('../../scenarios/outlook-2026.yaml', import.meta.url), 'utf8').replace('capacity: 100', 'capacity: -100'))
    await expectBadInput(['simulate', '--scenario', file], /^Error: .*neg\.yaml:\d+:15: pools\[0\]\.capacity: expected a number > 0$/)
  })

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
