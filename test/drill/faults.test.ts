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

  it('sets a pool erring by the sum of its error faults active at each edge, as the simulator adds them', () => {
    const erring = scenarioSchema.parse({
      name: 'erring',
      duration: 100,
      pools: [
        {name: 'blue', servers: 2, capacity: 50},
        {name: 'green', servers: 2, capacity: 50},
      ],
      demand: {rps: 10},
      dns: {weights: {blue: 50, green: 50}},
      faults: [
        {kind: 'errors', pool: 'green', percent: 2, from: 10, to: 40},
        {kind: 'errors', pool: 'green', percent: 5, from: 20, to: 30},
        {kind: 'errors', pool: 'blue', percent: 6, from: 10, to: 40},
      ],
      setups: {plain: {}},
    })
    const {steps, unsupported} = faultSteps(erring, {rateScale: 1, timeScale: 0.1})
    const byPool = (pool: string) => steps.filter((s) => s.command.pool === pool).map((s) => [Number(s.at.toFixed(6)), s.command])
    expect(byPool('green')).toEqual([
      [1, {op: 'errors', pool: 'green', percent: 2}],
      [2, {op: 'errors', pool: 'green', percent: 7}],
      [3, {op: 'errors', pool: 'green', percent: 2}],
      [4, {op: 'errors', pool: 'green', percent: 0}],
    ])
    expect(byPool('blue')).toEqual([
      [1, {op: 'errors', pool: 'blue', percent: 6}],
      [4, {op: 'errors', pool: 'blue', percent: 0}],
    ])
    expect(unsupported).toEqual([])
  })

  it('an erring pool answers about its share of what it serves with a 500, each after its service time, and all again once it stops', async () => {
    fleet = await startFleet({pools: [fleetPool({servers: 2, capacity: 200, serviceTime: 0.02, seed: 3})]})
    const ports = fleet.pools[0].ports
    await fleet.command({op: 'errors', pool: 'web', percent: 25})
    expect(fleet.state().web.map((s) => s.erring)).toEqual([0.25, 0.25])
    const answers = await Promise.all(Array.from({length: 400}, (_, i) => get(ports[i % 2], '/t/mail', 5000)))
    const erred = answers.filter((a) => a.status === 500)
    expect(answers.filter((a) => a.status !== 200 && a.status !== 500)).toEqual([])
    // Binomial(400, 0.25): 100 ± 8.7; five standard deviations either side.
    expect(erred.length).toBeGreaterThan(56)
    expect(erred.length).toBeLessThan(144)
    // The work was done before the error: no 500 comes faster than a service time.
    expect(Math.min(...erred.map((a) => a.ms))).toBeGreaterThanOrEqual(19)
    await expect(fleet.command({op: 'errors', pool: 'web', percent: 101})).rejects.toThrow('expected "percent" from 0 to 100')
    await fleet.command({op: 'errors', pool: 'web', percent: 0})
    const after = await Promise.all(Array.from({length: 100}, (_, i) => get(ports[i % 2], '/t/mail', 5000)))
    expect(after.every((a) => a.status === 200)).toBe(true)
  })

  it("two pools erring on the same share draw their errors apart: each server's draws are its own, not its namesake's in the other pool", async () => {
    fleet = await startFleet({pools: [fleetPool({name: 'blue', seed: 1}), fleetPool({name: 'green', seed: 1})]})
    const [blue, green] = fleet.pools.map((p) => p.ports[0])
    await fleet.command({op: 'errors', pool: 'blue', percent: 50})
    await fleet.command({op: 'errors', pool: 'green', percent: 50})
    // One at a time, so each server serves them in the order sent.
    const statuses = async (port: number) => {
      const seen: Array<number | string> = []
      for (let i = 0; i < 60; i++) seen.push((await get(port, '/t/mail', 5000)).status)
      return seen.join(',')
    }
    expect(await statuses(blue)).not.toBe(await statuses(green))
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
