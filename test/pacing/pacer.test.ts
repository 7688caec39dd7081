import {describe, expect, it} from 'vitest'
import {bandRise, moveCost, nextShare, ProbeStep, readBand} from '../../src/pacing/pacer.js'
import {largestShare, roomOf, stepWork} from '../../src/pacing/room.js'
import {paceSchema, type PaceRule} from '../../src/pacing/rule.js'

const rule = (over: Partial<PaceRule> = {}): PaceRule => ({pool: 'green', perTarget: 100, ...paceSchema.parse({}), ...over})

describe('the room rule', () => {
  it("a step's work is its new share plus the handshakes of what moved", () => {
    // 10% → 30% of 1,000 rps, handshakes at 4×: 300 + 3 × 200.
    expect(stepWork(0.1, 0.3, 1000, {handshakeCost: 4, spread: 1})).toBeCloseTo(900)
    // Spread over a TTL, a fifth of the moved clients reconnect in the worst second.
    expect(stepWork(0.1, 0.3, 1000, {handshakeCost: 4, spread: 0.2})).toBeCloseTo(420)
    // Moving traffic off a pool costs it no handshakes.
    expect(stepWork(0.3, 0.1, 1000, {handshakeCost: 4, spread: 1})).toBeCloseTo(100)
  })

  it('the largest share is the step whose work meets what the pool may take', () => {
    const room = {capacityRps: 1000}
    for (const [from, h] of [
      [0, 1],
      [0.1, 4],
      [0.35, 2.5],
    ]) {
      const s = largestShare(from, 2000, room, 0.2, {handshakeCost: h, spread: 1})
      expect(stepWork(from, s, 2000, {handshakeCost: h, spread: 1})).toBeCloseTo(800)
    }
    expect(largestShare(0.3, 0, room, 0.2, {handshakeCost: 4, spread: 1})).toBe(Infinity)
  })

  it('counts each target in rotation at its warm-up', () => {
    const room = roomOf('green', [1, 1, 0.5, 0.25], 200)
    expect(room).toMatchObject({inRotation: 4, warming: 2, capacityRps: 550, warmRps: 800})
  })
})

describe('nextShare', () => {
  const reading = (warmths: number[], demandRps: number, perTarget = 100) => ({room: roomOf('green', warmths, perTarget), demandRps})

  it('steps to the largest share the pool can take with its headroom, within maxStep', () => {
    // 10 targets × 100 = 1,000 rps, 800 with 20% headroom, against 2,000 rps: 40%.
    expect(nextShare(rule(), 0, 100, reading(Array(10).fill(1), 2000))).toMatchObject({kind: 'step', to: 40})
    // Room for everything: maxStep bounds it.
    expect(nextShare(rule(), 0, 100, reading(Array(10).fill(1), 100))).toMatchObject({kind: 'step', to: 50})
    expect(nextShare(rule(), 50, 100, reading(Array(10).fill(1), 100))).toMatchObject({kind: 'step', to: 100})
  })

  it('charges the handshakes of what a step moves, so a cold start takes a smaller first step', () => {
    const d = nextShare(rule({handshakeCost: 4}), 0, 100, reading(Array(10).fill(1), 2000))
    // (800 / 2000) / 4 = 10%.
    expect(d).toMatchObject({kind: 'step', to: 10})
    expect(d.why).toContain('800 rps')
  })

  it("behind weighted DNS, spreads a step's handshakes over the TTL for clients that ask every clientInterval s", () => {
    expect(moveCost(rule({handshakeCost: 4}), 30)).toEqual({handshakeCost: 4, spread: 1})
    expect(moveCost(rule({handshakeCost: 4, clientInterval: 3}), 30)).toEqual({handshakeCost: 4, spread: 0.1})
    // Behind a load balancer's split (no TTL) every moved client reconnects at once.
    expect(moveCost(rule({handshakeCost: 4, clientInterval: 3}), 0)).toEqual({handshakeCost: 4, spread: 1})
    // 800 usable of 2,000 rps: at once (800/2000)/4 = 10%; a tenth a second, 0.4 / 1.3 = 30%.
    const room = {room: roomOf('green', Array(10).fill(1), 100), demandRps: 2000}
    expect(nextShare(rule({handshakeCost: 4, clientInterval: 3}), 0, 100, room, 30)).toMatchObject({kind: 'step', to: 30})
  })

  it('counts targets in slow start at their share, and waits, in numbers, when even the smallest step is too much', () => {
    const d = nextShare(rule(), 0, 100, reading([0.1, 0.1, 0.1, 0.1], 2000))
    // 4 × 0.1 × 100 = 40 rps, 32 usable: 1.6% of 2,000, under the 5-point step.
    expect(d.kind).toBe('wait')
    expect(d.why).toBe(
      'green: 4 targets in rotation (4 warming) × 100 rps = 40 rps now, 400 rps warm; 5% of 2,000 rps of demand would ask it for 100 rps, more than the 32 rps with 20% headroom',
    )
  })

  it('never steps past the end, and stops short of it where the pool has no room for the rest', () => {
    expect(nextShare(rule({to: 50}), 30, 50, reading(Array(10).fill(1), 100))).toMatchObject({kind: 'step', to: 50})
    // 800 usable rps against 790: room for all of it.
    expect(nextShare(rule(), 60, 100, reading(Array(10).fill(1), 790))).toMatchObject({kind: 'step', to: 100})
    // Room for 97% only: it stops there, and the last 3 points wait for room (a smaller step than minStep is never taken short of the end).
    expect(nextShare(rule(), 60, 100, reading(Array(10).fill(1), 800 / 0.97))).toMatchObject({kind: 'step', to: 97})
    expect(nextShare(rule(), 97, 100, reading(Array(10).fill(1), 800 / 0.97))).toMatchObject({kind: 'wait'})
  })
})

describe('probing', () => {
  it('grows as TCP does: doubling within maxStep, halving within minStep', () => {
    const p = new ProbeStep(rule({minStep: 5, maxStep: 40}))
    expect(p.next(0, 100)).toBe(5)
    p.grow()
    p.grow()
    p.grow()
    p.grow()
    expect(p.points).toBe(40)
    p.halve()
    expect(p.next(30, 100)).toBe(50)
    for (let i = 0; i < 5; i++) p.halve()
    expect(p.points).toBe(5)
    // A last step under minStep is taken with this one.
    expect(p.next(93, 100)).toBe(100)
  })

  it('a rise is latency past its band or errors past theirs, against the window before the step', () => {
    const r = rule({latencyRise: 25, errorRise: 0.5})
    expect(bandRise(r, {latency: 100, errors: 0.1}, {latency: 124, errors: 0.5})).toBeNull()
    expect(bandRise(r, {latency: 100, errors: 0.1}, {latency: 130, errors: 0.1})).toContain('p99 latency rose from 100 to 130 ms')
    expect(bandRise(r, {latency: 100, errors: 0.1}, {latency: 100, errors: 0.7})).toContain('error rate rose from 0.10% to 0.70%')
    // Nothing to compare is no rise (the gate judges missing data).
    expect(bandRise(r, {latency: null, errors: null}, {latency: 900, errors: 9})).toBeNull()
  })
})

describe('the band', () => {
  it('a source with no latency percentiles bands on errors alone, rather than fail the step', async () => {
    const metrics = {
      label: 'haproxy-like',
      read: async (kind: string) => {
        if (kind === 'latency-p99') throw new Error('no latency percentiles')
        return {value: 0.4, requests: 100}
      },
    }
    expect(await readBand(metrics, 'green', 10)).toEqual({latency: null, errors: 0.4})
  })
})
