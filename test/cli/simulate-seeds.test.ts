import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {expectBadInput} from '../helpers/expect-cli.js'

// A verdict over seeds (issue 47): one seed of drawn arrivals and service times is one sample, so
// simulate --seeds says on how many seeds each setup held and when the others tipped.
describe('sluice simulate --seeds', () => {
  it('near-capacity over 10 seeds: held on a few, tipped on the rest, each with its time; --json has every seed', async () => {
    const text = await sluice(['simulate', '--scenario', 'near-capacity', '--seeds', '10'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain('Over 10 seeds (1–10), arrivals and service times drawn')
    const line = text.stdout.split('\n').find((l) => l.startsWith('  no-guard: held on '))!
    const [, held] = /held on (\d+) of 10 seeds; tipped on (\d+): seed \d+ at \+\d\d:\d\d/.exec(line)!
    const json = await sluice(['simulate', '--scenario', 'near-capacity', '--seeds', '10', '--json'])
    const over = JSON.parse(json.stdout).overSeeds
    expect(over.randomness).toBe('drawn')
    expect(over.seeds).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(over.setups[0].held).toBe(Number(held))
    expect(over.setups[0].held).toBeGreaterThan(0)
    expect(over.setups[0].held).toBeLessThan(10)
    for (const o of over.setups[0].outcomes) expect(o.tipped ? o.tippedAt > 0 : o.tippedAt === null).toBe(true)
  })

  it('--randomness none: the same pool at the mean holds on every seed, and says a seed changes only which servers break', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'near-capacity', '--seeds', '4', '--randomness', 'none'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('with nothing drawn (randomness: none), so a seed changes only which servers a fault breaks')
    expect(stdout).toContain('  no-guard: held on 4 of 4 seeds\n')
  })

  it('by default a drawn scenario runs on 10 seeds; --seeds 1, or randomness none, prints no verdict over seeds and --json has none', async () => {
    const drawn = await sluice(['simulate', '--scenario', 'near-capacity', '--json'])
    expect(JSON.parse(drawn.stdout).overSeeds.seeds).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    const one = await sluice(['simulate', '--scenario', 'near-capacity', '--seeds', '1', '--json'])
    expect(JSON.parse(one.stdout).overSeeds).toBeNull()
    const mean = await sluice(['simulate', '--scenario', 'near-capacity', '--randomness', 'none', '--json'])
    expect(JSON.parse(mean.stdout).overSeeds).toBeNull()
  })

  it('refuses --randomness drawn on the seed model, and --seeds with --sweep, naming the flag', async () => {
    expectBadInput(await sluice(['simulate', '--scenario', 'outlook-2026', '--randomness', 'drawn']), /--randomness: outlook-2026 runs the seed model/)
    expectBadInput(await sluice(['simulate', '--scenario', 'near-capacity', '--seeds', '3', '--sweep', 'demand=900..1000:3']), /--seeds/)
  })
})
