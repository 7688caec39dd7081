import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

interface SimulateJson {
  scenario: string
  faultWindow: {from: number; to: number}
  setups: Array<{name: string; lostPercent: number; minInRotation: number; meanServedDuringFault: number; series: {t: number[]; demand: number[]}}>
}

describe('sluice simulate --json (in process)', () => {
  it('a short run of one setup: the fault window and overrides as given, one setup, a series per second', async () => {
    const args = ['simulate', '--scenario', 'outlook-2026', '--setup', 'cap-third', '--duration', '120', '--fault-at', '20', '--fix-at', '60', '--json']
    const {exit, stdout, stderr} = await sluiceInProcess(args)
    expect(exit, stderr).toBe(0)
    const json = JSON.parse(stdout) as SimulateJson
    expect(json.scenario).toBe('outlook-2026')
    expect(json.faultWindow).toEqual({from: 20, to: 60})
    expect(json.setups.map((s) => s.name)).toEqual(['cap-third'])
    const [setup] = json.setups
    expect(setup.series.t).toHaveLength(120)
    expect(setup.series.demand.every((d) => d === 1500)).toBe(true)
    // cap-third keeps two thirds of the pool in rotation through the fault.
    expect(setup.minInRotation).toBe(14)
    expect(setup.lostPercent).toBeGreaterThan(0)
    expect(setup.lostPercent).toBeLessThan(100)
    // The same input gives the same output.
    expect((await sluiceInProcess(args)).stdout).toBe(stdout)
  })

  it('an unknown setup is bad input: exit 2, naming the setups the scenario has', async () => {
    const {exit, stdout, stderr} = await sluiceInProcess(['simulate', '--scenario', 'outlook-2026', '--setup', 'no-such-setup'])
    expect(exit).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^Error: .*"no-such-setup".*cap-third/)
  })
})
