import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {runRunbook} from '../../src/engine/engine.js'
import {haproxyPorts, type HaproxyPorts} from '../../src/haproxy/ports.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {serversState} from '../../src/haproxy/stats.js'
import {HaproxyWeights} from '../../src/haproxy/weights.js'
import {WallClock} from '../../src/local/wall-clock.js'
import type {ControlPlane, HookPort, Target} from '../../src/ports/control-plane.js'
import {control, RecordingIO, runbook} from '../helpers/fakes.js'
import {get, startBackend, stopBackend, until, type Backend, type RunningHaproxy, startBlueGreen, type BlueGreen} from './helpers/haproxy.js'

// The engine and the actions as they are, on HAProxy adapters: only the control plane differs.
let haproxy: RunningHaproxy
let port: number
let api: RuntimeApi
/** The ports as a live control plane would get them from `targets.haproxy`. */
let ports: HaproxyPorts
let servers: Map<string, Backend>
let fleet: BlueGreen | undefined
const clock = new WallClock()
const noAbort = () => new AbortController().signal
/** The test control plane (fake freeze, operator, run id) on wall time and the given HAProxy adapters. */
const onHaproxy = (parts: Partial<Omit<ControlPlane, 'clock'>>): ControlPlane => ({...control(parts), clock})

beforeAll(async () => {
  fleet = await startBlueGreen({blue: ['b1', 'b2', 'b3'], green: 'g1', slowstartSeconds: 30})
  ;({haproxy, port, servers} = fleet)
  ports = haproxyPorts(
    {
      socket: haproxy.socket,
      backends: {blue: 'blue', green: 'green'},
      slowStart: {blue: 30},
      restrictMap: join(haproxy.dir, 'restricted.map'),
      rampMap: join(haproxy.dir, 'ramp.map'),
      metrics: true,
    },
    clock,
  )
  api = new RuntimeApi(haproxy.socket)
  const blue = ports.pools.get('blue')!
  await until('blue servers up', async () => (await blue.targets()).every((t) => t.health === 'healthy'))
})

afterAll(async () => {
  await fleet?.stop()
})

/** A restart that really stops the server long enough for HAProxy's checks (fall 2 × 200 ms) to see it down. */
class RestartServers implements HookPort {
  restarted: string[] = []
  async run(_kind: 'restart' | 'remediate', _hook: unknown, target: Target): Promise<void> {
    const old = servers.get(target.id)!
    await stopBackend(old)
    await new Promise((resolve) => setTimeout(resolve, 700))
    servers.set(target.id, await startBackend(target.id, old.port))
    this.restarted.push(target.id)
  }
}

describe('the actions on HAProxy', () => {
  it('cycles a backend one server at a time, never more out of rotation than the budget', async () => {
    const blue = ports.pools.get('blue')!
    const hooks = new RestartServers()
    let watching = true
    let mostOut = 0
    const sawDown = new Set<string>()
    const watch = (async () => {
      while (watching) {
        const targets = await blue.targets()
        // Out of rotation by sluice's hand (drained): what the budget caps. A returned server that
        // misses a 200 ms check on a busy machine goes down by HAProxy's, which no budget governs.
        mostOut = Math.max(mostOut, targets.filter((t) => t.health === 'draining' || t.health === 'unused').length)
        for (const t of targets) if (t.health === 'unhealthy' || t.health === 'draining') sawDown.add(t.id)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()
    const steps = `  - action: cycle
    pool: blue
    batch: 1
    budget: 1
    slowStart: 30
    restart: {command: [restart, '{id}']}
`
    const result = await runRunbook(runbook(steps), {control: onHaproxy({pools: ports.pools, hooks}), io: new RecordingIO(), signal: noAbort()})
    watching = false
    await watch
    expect(result.outcome).toBe('completed')
    expect(hooks.restarted.sort()).toEqual(['b1', 'b2', 'b3'])
    expect(mostOut).toBe(1)
    expect([...sawDown].sort()).toEqual(['b1', 'b2', 'b3'])
    expect((await blue.targets()).map((t) => t.health)).toEqual(['healthy', 'healthy', 'healthy'])
    // Each came back through HAProxy's slow start (30 s in the config): starting, not yet running.
    expect((await serversState(api, 'blue')).map((r) => r.srv_op_state)).toEqual(['1', '1', '1'])
    // A paced ramp counts each at its share of the slow start so far (issue 49), and the share grows.
    const shares = async () => (await blue.targets()).map((t) => t.warmth ?? 1)
    const first = await shares()
    for (const w of first) expect(w).toBeGreaterThan(0)
    for (const w of first) expect(w).toBeLessThan(1)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const later = await shares()
    later.forEach((w, k) => expect(w).toBeGreaterThan(first[k]))
  })

  it('ramps onto a broken backend until its gate fails, then puts the split back to the last step that passed', async () => {
    const weights = new HaproxyWeights(api, join(haproxy.dir, 'ramp.map'))
    const metrics = ports.metrics!
    servers.get('g1')!.broken = true
    const commits: string[] = []
    const send = api.send.bind(api)
    api.send = (command, signal) => {
      if (command.startsWith('commit map')) commits.push(command)
      return send(command, signal)
    }
    // Steady traffic through HAProxy for the gate to judge.
    let loading = true
    const load = (async () => {
      while (loading) await get(port, '/')
    })()
    try {
      // The shared test runbook declares a DNS record with a 60 s TTL; HAProxy's split has none
      // (its port says 0), which only the runbook check cannot know yet.
      const steps = `  - action: ramp
    set: green
    schedule: [2, 50]
    bake: 2
    allowShortBake: true
    gate: {metric: error-rate, threshold: 20, window: 2, interval: 1, successes: 1}
`
      const result = await runRunbook(runbook(steps), {control: onHaproxy({weights: weights, metrics}), io: new RecordingIO(), signal: noAbort()})
      expect(result.outcome).toBe('gate-failed')
      // One commit per step (2%, 50%) and one to put it back.
      expect(commits).toHaveLength(3)
      expect(await weights.readWeights()).toEqual({blue: 98, green: 2})
    } finally {
      loading = false
      await load
      api.send = send
      servers.get('g1')!.broken = false
    }
  })

  it('restricts a traffic type with 503 and Retry-After, and lifts it', async () => {
    const rules = ports.restrictions!
    const restrict = await runRunbook(runbook('  - {action: restrict, type: sync, paths: [/sync/*], retryAfter: 30}\n'), {
      control: onHaproxy({restrictions: rules}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(restrict.outcome).toBe('completed')
    const turnedAway = await get(port, '/sync/x')
    expect([turnedAway.status, turnedAway.headers['retry-after']]).toEqual([503, '30'])
    expect((await get(port, '/mail')).status).toBe(200)
    const lift = await runRunbook(runbook('  - {action: lift, type: sync}\n'), {
      control: onHaproxy({restrictions: rules}),
      io: new RecordingIO(),
      signal: noAbort(),
    })
    expect(lift.outcome).toBe('completed')
    expect((await get(port, '/sync/x')).status).toBe(200)
  })
})
