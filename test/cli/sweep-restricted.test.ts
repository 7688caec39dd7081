import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {notEnacted} from '../../src/wiring/drill.js'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('sweep-restricted')
const root = fileURLToPath(new URL('../../', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'sluice-sweep-restricted-'))

// drill-thread-hold (10 servers × 60 threads; 500 rps, a tenth of it lookups that hold a thread
// 20 s from 60 s to 600 s), with the lookups restricted from the start. Let through, the lookups
// hold 1,000 × (1 − share) threads and the rest of the traffic 45 (450 rps × 0.1 s): the pool
// holds while that is at most its 600, from a share of 44.5% turned away.
const scenario = join(dir, 'hold-lever.yaml')
writeFileSync(
  scenario,
  readFileSync(join(root, 'scenarios/drill-thread-hold.yaml'), 'utf8')
    .replace('duration: 420', 'duration: 1500')
    .replace('    to: 300', '    to: 600')
    .replace(/^faults:/m, 'restrictions:\n  - {type: lookup, share: 50}\nfaults:'),
)

describe('a restriction as a lever in a sweep', () => {
  it('--sweep restricted varies the share of the scenario\u2019s restriction and finds where the pool holds', async () => {
    // At the mean, where the arithmetic above is the model's to the thread.
    const r = await sluice(['simulate', '--scenario', scenario, '--randomness', 'none', '--sweep', 'restricted=40..50:11', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const json = JSON.parse(r.stdout) as {setups: Array<{cells: Array<{x: number; outcome: string}>; tipping: {transitions: unknown[]}}>}
    const outcome = (x: number) => json.setups[0].cells.find((c) => c.x === x)!.outcome
    for (let x = 40; x <= 44; x++) expect(outcome(x), `${x}%`).toBe('stuck')
    for (let x = 45; x <= 50; x++) expect(outcome(x), `${x}%`).not.toBe('stuck')
    expect(json.setups[0].tipping.transitions).toEqual([{direction: 'out-of-stuck', holds: 45, stuck: 44}])
    const text = await sluice(['simulate', '--scenario', scenario, '--randomness', 'none', '--sweep', 'restricted=40..50:11'])
    expect(text.stdout).toContain('is stuck up to 44% of lookup turned away and holds from 45% of lookup turned away')
  })

  it('drawn (the default), the pool needs more turned away than at the mean, never less: held threads vary around 1,000 × (1 − share) + 45', async () => {
    const r = await sluice(['simulate', '--scenario', scenario, '--sweep', 'restricted=40..60:21', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const json = JSON.parse(r.stdout) as {setups: Array<{tipping: {transitions: Array<{holds: number; stuck: number}>}}>}
    const [edge] = json.setups[0].tipping.transitions
    expect(edge.holds).toBeGreaterThanOrEqual(45)
    // Not far: at 55% turned away the mean is 495 threads of 600, four standard deviations below.
    expect(edge.holds).toBeLessThanOrEqual(55)
  })

  it('is refused on a scenario without a restriction, and a restriction of a type the scenario lacks is refused where it is written', async () => {
    const none = await sluice(['simulate', '--scenario', 'drill-thread-hold', '--sweep', 'restricted=0..100'])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('drill-thread-hold declares no restriction to vary: give it one (restrictions: [{type: NAME}])')
    const bad = join(dir, 'bad.yaml')
    writeFileSync(bad, readFileSync(scenario, 'utf8').replace('{type: lookup, share: 50}', '{type: lookups, share: 50}'))
    const refused = await sluice(['simulate', '--scenario', bad])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/bad\.yaml:\d+:\d+: restrictions\[0\]\.type: no traffic type named "lookups"; types are interactive, lookup/)
  })

  it('a drill refuses a scenario restriction by name: its HAProxy is restricted by a runbook step', () => {
    expect(notEnacted(loadScenario(scenario).scenario)).toContain(
      "drill-thread-hold: restrictions[0] turns lookup away from the scenario's own clock, which the drill does not enact; restrict it with a runbook's restrict step, which the drill runs on its HAProxy",
    )
  })
})
