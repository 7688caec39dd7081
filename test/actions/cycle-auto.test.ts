import {describe, expect, it} from 'vitest'
import {cycle} from '../../src/actions/cycle/cycle.js'
import type {CycleStep} from '../../src/actions/cycle/schema.js'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeClock, FakeGroup, FakeHooks, FakeMetrics, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal
const ids = (n: number) => Array.from({length: n}, (_, i) => `b${i}`)

const autoStep = (extra = '') => `  - action: cycle
    pool: blue
    batch: auto
    capacityPerTarget: 100
    restart: {command: [restart, '{id}']}
${extra}`

function setup(n: number, demand: (clock: FakeClock) => number | null) {
  const group = new FakeGroup('blue', ids(n))
  const clock = new FakeClock()
  const hooks = new FakeHooks()
  const metrics = new FakeMetrics((kind) => (kind === 'request-rate' ? demand(clock) : 0.1))
  const io = new RecordingIO()
  return {group, clock, hooks, io, plane: control({pools: new Map([['blue', group]]), hooks, metrics, clock})}
}

describe('cycle with batch: auto', () => {
  it('takes the largest batch the targets left can cover with 20% headroom, sized again before each batch', async () => {
    // 10 × 100 rps; 500 rps of demand needs 625 rps before headroom: 7 must stay, 3 may go.
    const s = setup(10, () => 500)
    const result = await runRunbook(runbook(autoStep()), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    expect(s.group.deregistrations.map((b) => b.length)).toEqual([3, 3, 3, 1])
    expect(result.steps[0].message).toContain('cycled 10 targets in 4 batches')
    expect(s.io.of('progress').map((e) => e.message)).toContain(
      'batch 1: 3 out leaves blue: 7 targets in rotation × 100 rps = 700 rps now, against 500 rps of demand: 560 rps with 20% headroom',
    )
  })

  it('counts targets still in slow start at their share, so a batch after a return is smaller', async () => {
    const s = setup(10, () => 500)
    // Whatever returns is in slow start, at a quarter of its weight, for 100 s.
    const back = new Map<string, number>()
    const register = s.group.register.bind(s.group)
    s.group.register = async (list) => {
      await register(list)
      for (const id of list) back.set(id, s.clock.t)
    }
    const list = s.group.targets.bind(s.group)
    s.group.targets = async () => {
      s.group.warmth.clear()
      for (const [id, at] of back) if (s.clock.t - at < 100) s.group.warmth.set(id, 0.25)
      return list()
    }
    const result = await runRunbook(runbook(autoStep()), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome, result.message).toBe('completed')
    // Batch 2: 7 warm + 3 at a quarter = 775 rps. One out leaves 675 (540 usable, ≥ 500); two leave 575 (460): one.
    expect(s.group.deregistrations[0]).toHaveLength(3)
    expect(s.group.deregistrations[1]).toHaveLength(1)
  })

  it('takes targets out of rotation first and free: restarting them costs no capacity', async () => {
    const s = setup(6, () => 450)
    s.group.sick.add('b4')
    s.group.sick.add('b5')
    // 4 in rotation × 100 = 400 against 450: none can go from rotation, but the two out can.
    const hooks = {
      async run(_kind: 'restart' | 'remediate', _hook: unknown, target: {id: string}) {
        s.group.sick.delete(target.id)
      },
    }
    const result = await runRunbook(runbook(autoStep('    healthyTimeout: 20\n')), {control: {...s.plane, hooks}, io: s.io, signal: noAbort()})
    expect(s.group.deregistrations[0]).toEqual(['b4', 'b5'])
    // Back to 6 × 100 = 600, 480 usable against 450: still none from rotation; it waits, then stops with the numbers.
    expect(result.outcome).toBe('held')
    expect(result.message).toContain(
      'batch 2: no target can be taken out within 20 s: one more out would leave blue: 5 targets in rotation × 100 rps = 500 rps now, against 450 rps of demand: 400 rps with 20% headroom',
    )
  })

  it('stays within the budget and the half-pool cap', async () => {
    const s = setup(10, () => 0)
    const result = await runRunbook(runbook(autoStep()), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(s.group.deregistrations.map((b) => b.length)).toEqual([5, 5])
    const t = setup(10, () => 0)
    await runRunbook(runbook(autoStep('    budget: 30%\n')), {control: t.plane, io: t.io, signal: noAbort()})
    expect(t.group.deregistrations.map((b) => b.length)).toEqual([3, 3, 3, 1])
  })

  it('never sizes a batch without demand data', async () => {
    const s = setup(10, () => null)
    const result = await runRunbook(runbook(autoStep()), {control: s.plane, io: s.io, signal: noAbort()})
    expect(result.outcome).toBe('held')
    expect(result.message).toContain('cannot size an auto batch: no request-rate data for blue (missing data is never room)')
    expect(s.group.deregistrations).toEqual([])
  })

  it('needs a capacity to size by, and plans its rule', () => {
    expect(() => runbook(autoStep().replace('    capacityPerTarget: 100\n', ''))).toThrow(
      /batch: auto sizes each batch by what the targets left can serve: give capacityPerTarget, or blue's in targets.capacityPerTarget/,
    )
    const step = runbook(autoStep()).steps[0] as CycleStep
    expect(cycle.title(step)).toBe('Cycle blue in batches sized by its room')
    expect(cycle.plan(step, {targets: runbook(autoStep()).targets})[0]).toContain(
      "in batches sized before each one: the most targets the ones left in rotation (100 rps each, at their warm-up) can spare with 20% headroom at the pool's demand over 60 s; at most half the pool at once (no budget given)",
    )
  })
})
