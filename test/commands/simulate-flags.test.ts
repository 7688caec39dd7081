import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {CliResult} from '../helpers/cli.js'
import {sluiceInProcess} from '../helpers/command.js'
import {expectBadInput as expectBadResult} from '../helpers/expect-cli.js'

/** simulate in this process, its exit code where a spawned one has its process's. */
async function sluice(args: string[]): Promise<CliResult> {
  const {exit, stdout, stderr} = await sluiceInProcess(args)
  return {code: exit, stdout, stderr}
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-simulate-'))

// Both simulate tiers refuse bad input as the single-action commands do.
const expectBadInput = async (args: string[], message: string | RegExp) => expectBadResult(await sluice(args), message)

describe('sluice simulate (in process)', () => {
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

describe('sluice simulate: bad input exits 2 with one clear line (in process)', () => {
  it('an unknown setup', () =>
    expectBadInput(['simulate', '--setup', 'nope'], /^Error: --setup: unknown setup "nope" in scenario outlook-2026; its setups are no-guard, /))
  it('a negative capacity', () => expectBadInput(['simulate', '--capacity=-100'], '--capacity: pools[0].capacity: expected a number > 0'))
  it('a fix before the fault', () =>
    expectBadInput(
      ['simulate', '--fault-at', '100', '--fix-at', '50'],
      '--fix-at/--fault-at: faults[0].to: expected the fix (to: 50) after the fault starts (from: 100)',
    ))
  it('an unknown policy key', () =>
    expectBadInput(['simulate', '--policy', 'ejectCap=3'], /^Error: --policy: unknown key "ejectCap"; expected one of maxEjectionPercent, /))
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
})
