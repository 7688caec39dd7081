import {afterEach, describe, expect, it} from 'vitest'
import {faultSteps, playFaults} from '../../src/drill/faults.js'
import {startFleet, type FleetCommand, type RunningFleet} from '../../src/drill/fleet.js'
import {scenarioSchema} from '../../src/sim/scenario/schema.js'
import {get, sleep} from './http.js'
import {fleetPool} from './pools.js'

const scenario = scenarioSchema.parse({
  name: 'faults',
  duration: 100,
  pools: [{name: 'web', servers: 4, capacity: 50, serviceTime: 0.02}],
  demand: {rps: 10, types: {mail: 0.8, search: 0.2}},
  faults: [
    {kind: 'broken', servers: 2, from: 10, to: 30, mode: 'refuse'},
    {kind: 'thread-hold', type: 'search', holdSeconds: 20, release: 'at-timeout', from: 20, to: 40},
    {kind: 'metadata-outage', from: 5, to: 6},
  ],
  setups: {plain: {}},
})

let fleet: RunningFleet | null = null
afterEach(async () => {
  await fleet?.stop()
  fleet = null
})

describe("a scenario's faults on the drill's clock", () => {
  it('turns each fault into commands at its scaled times, and names the faults the fleet cannot play', () => {
    const {steps, unsupported} = faultSteps(scenario, {rateScale: 1, timeScale: 0.01})
    expect(steps.map((s) => [Number(s.at.toFixed(6)), s.command])).toEqual([
      [0.1, {op: 'fault', pool: 'web', servers: [0, 1], mode: 'refuse'}],
      [0.2, {op: 'hold', pool: 'web', type: 'search', holdSeconds: 0.2, release: 'at-timeout'}],
      [0.3, {op: 'fault', pool: 'web', servers: [0, 1], mode: 'none'}],
      [0.4, {op: 'hold', pool: 'web', type: null}],
    ])
    expect(unsupported).toEqual([2])
  })

  it('plays them on a real fleet: the broken servers refuse during the window only', async () => {
    fleet = await startFleet({
      pools: [fleetPool({servers: 4, capacity: 50, serviceTime: 0.02, threads: 10, queueLimit: 50})],
    })
    const [p0, , p2] = fleet.pools[0].ports
    const {steps} = faultSteps(scenario, {rateScale: 1, timeScale: 0.05})
    const started = performance.now()
    const played = playFaults(steps, (command) => fleet!.command(command))
    expect((await get(p0, '/t/mail', 1000)).status).toBe(200)
    await sleep(900 - (performance.now() - started))
    // 0.9 s: inside the broken window (0.5 to 1.5 s).
    expect((await get(p0, '/t/mail', 1000)).status).toBe('refused')
    expect((await get(p2, '/t/mail', 1000)).status).toBe(200)
    await played.done
    expect((await get(p0, '/t/mail', 1000)).status).toBe(200)
    expect(fleet.state().web.every((s) => s.hold === null && s.fault === 'none')).toBe(true)
  })

  it('stops at the first command the fleet refuses, and cancel ends the rest', async () => {
    const sent: FleetCommand[] = []
    const failing = playFaults(
      [
        {at: 0, command: {op: 'restart', pool: 'nope'}},
        {at: 0.2, command: {op: 'restart', pool: 'web'}},
      ],
      async (c) => {
        sent.push(c)
        if (c.pool === 'nope') throw new Error('no pool named "nope"')
      },
    )
    await expect(failing.done).rejects.toThrow('no pool named "nope"')
    await sleep(300)
    expect(sent).toHaveLength(1)

    const later = playFaults([{at: 5, command: {op: 'restart', pool: 'web'}}], async (c) => void sent.push(c))
    later.cancel()
    await later.done
    expect(sent).toHaveLength(1)
  })
})
