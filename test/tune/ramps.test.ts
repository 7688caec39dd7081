import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {choicesFor, costOf, lastReturnIndex, rampSites, scheduleOf, schedulesOf, shippedChoice, withRamps, type RampSite} from '../../src/tune/ramps.js'

const outlook = loadRunbookFile('runbooks/outlook-staged-return.yaml')
// Where each ramp starts in the shipped rehearsal: parking moves mailbox to 0.
const startWeights = new Map([
  [2, {mailbox: 100, maintenance: 0}],
  [4, {mailbox: 0, maintenance: 100}],
  [7, {mailbox: 50, maintenance: 50}],
])

const site = (over: Partial<RampSite> = {}): RampSite => ({
  index: 0,
  action: 'ramp',
  title: 'ramp',
  set: 'a',
  shipped: {schedule: [1, 5, 25, 50], bake: 90},
  interval: null,
  waypoint: false,
  previous: null,
  startWeight: 0,
  final: true,
  ...over,
})

describe('tune: the ramps it may change', () => {
  it('finds each ramp, which ones continue a climb, where each starts and which is last', () => {
    const sites = rampSites(outlook, startWeights)
    expect(sites.map((s) => ({index: s.index, set: s.set, waypoint: s.waypoint, previous: s.previous, startWeight: s.startWeight, final: s.final}))).toEqual([
      {index: 2, set: 'maintenance', waypoint: false, previous: null, startWeight: 0, final: false},
      {index: 4, set: 'mailbox', waypoint: true, previous: null, startWeight: 0, final: false},
      {index: 7, set: 'mailbox', waypoint: false, previous: 1, startWeight: 50, final: true},
    ])
    expect(sites[1].shipped).toEqual({schedule: [1, 5, 25, 50], bake: 90})
    expect(sites.map((s) => s.interval)).toEqual([null, 10, 10])
  })

  it('makes climbing whole-percent schedules from where the set stands to the end, or none when there is no room', () => {
    for (const gamma of [0.7, 1, 1.5, 2, 3])
      for (const steps of [1, 2, 4, 7, 10])
        for (const floor of [0, 40, 95]) {
          const schedule = scheduleOf(site(), {bake: 30, end: 100, shape: {kind: 'curve', steps, gamma}}, floor)
          if (steps > 100 - floor) {
            expect(schedule).toBeNull()
            continue
          }
          expect(schedule).toHaveLength(steps)
          expect(schedule![steps - 1]).toBe(100)
          expect(schedule![0]).toBeGreaterThan(floor)
          schedule!.forEach((p, i) => {
            expect(Number.isInteger(p)).toBe(true)
            if (i > 0) expect(p).toBeGreaterThan(schedule![i - 1])
          })
        }
    expect(scheduleOf(site(), {bake: 30, end: 50, shape: {kind: 'curve', steps: 4, gamma: 1}}, 10)).toEqual([20, 30, 40, 50])
    // Small steps first above 1: the cold pool gets the small ones.
    expect(scheduleOf(site(), {bake: 30, end: 100, shape: {kind: 'curve', steps: 4, gamma: 2}}, 0)).toEqual([6, 25, 56, 100])
  })

  it('keeps the shipped schedule above where the set stands, and none when it ends elsewhere', () => {
    const s = site()
    expect(scheduleOf(s, shippedChoice(s), 0)).toEqual([1, 5, 25, 50])
    expect(scheduleOf(s, shippedChoice(s), 10)).toEqual([25, 50])
    expect(scheduleOf(s, {...shippedChoice(s), end: 40}, 0)).toBeNull()
    expect(scheduleOf(s, shippedChoice(s), 50)).toBeNull()
  })

  it('starts a ramp where the one before it on its set ends', () => {
    const sites = rampSites(outlook, startWeights)
    const choices = sites.map(shippedChoice)
    choices[1] = {bake: 30, end: 40, shape: {kind: 'curve', steps: 2, gamma: 1}}
    choices[2] = {bake: 30, end: 100, shape: {kind: 'curve', steps: 3, gamma: 1}}
    expect(schedulesOf(sites, choices)).toEqual([[100], [20, 40], [60, 80, 100]])
  })

  it('tries bakes from the TTL to the shipped bake, moves only a waypoint, and offers the shipped schedule', () => {
    const [, half, rest] = rampSites(outlook, startWeights)
    for (const [s, ends] of [
      [half, new Set([25, 30, 35, 40, 45, 50, 55, 60])],
      [rest, new Set([100])],
    ] as const) {
      const choices = choicesFor(s, 30)
      expect(Math.min(...choices.map((c) => c.bake))).toBe(30)
      expect(Math.max(...choices.map((c) => c.bake))).toBe(90)
      expect(new Set(choices.map((c) => c.end))).toEqual(ends)
      expect(choices.some((c) => c.shape.kind === 'shipped' && c.bake === 90)).toBe(true)
    }
    // A gate judges every interval, so a gated ramp's bakes are whole intervals; one without a gate goes by 5 s.
    expect([...new Set(choicesFor(rest, 30).map((c) => c.bake))]).toEqual([30, 40, 50, 60, 70, 80, 90])
    expect([...new Set(choicesFor(site({interval: 10, shipped: {schedule: [100], bake: 60}}), 35).map((c) => c.bake))]).toEqual([40, 50, 60])
    expect([...new Set(choicesFor(site({shipped: {schedule: [100], bake: 50}}), 30).map((c) => c.bake))]).toEqual([30, 35, 40, 45, 50])
    // A shipped bake under the TTL (allowShortBake) is never tried: the TTL is the floor.
    expect(new Set(choicesFor(site({shipped: {schedule: [100], bake: 10}}), 30).map((c) => c.bake))).toEqual(new Set([30]))
  })

  it("counts every bake before full traffic except the final ramp's last one", () => {
    expect(costOf(site({final: false}), [1, 5, 25], 40)).toEqual({beforeFull: 120, total: 120})
    expect(costOf(site({final: true}), [1, 5, 25], 40)).toEqual({beforeFull: 80, total: 120})
  })

  it("replaces only the ramps' schedules and bakes", () => {
    const sites = rampSites(outlook, startWeights)
    const choices = sites.map((s) => ({...shippedChoice(s), bake: 45}))
    const tuned = withRamps(outlook, sites, schedulesOf(sites, choices)!, choices)
    expect(tuned.steps.filter((s) => s.action === 'ramp').map((s) => s.action === 'ramp' && s.bake)).toEqual([45, 45, 45])
    expect(tuned.steps.filter((s) => s.action !== 'ramp')).toEqual(outlook.steps.filter((s) => s.action !== 'ramp'))
  })

  it('takes a lift with a schedule as a climb of its type back to 100%, and leaves a lift at once as written', () => {
    // The HAProxy Outlook runbook with background sync let back by degrees instead of at once.
    const shipped = readFileSync('runbooks/outlook-staged-return-haproxy.yaml', 'utf8')
    const atOnce = '  - action: lift\n    type: background-sync\n'
    expect(shipped).toContain(atOnce)
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-tune-lift-')), 'lift-by-degrees.yaml')
    writeFileSync(
      file,
      shipped.replace(atOnce, `${atOnce}    schedule: [25, 50, 100]\n    bake: 60\n    gate: {metric: error-rate, threshold: 2, pool: mailbox}\n`),
    )
    const byDegrees = loadRunbookFile(file)
    const lift = byDegrees.steps.find((s) => s.action === 'lift')!
    const sites = rampSites(byDegrees, startWeights)
    expect(sites.map((s) => [s.index, s.action, s.set])).toEqual([
      [2, 'ramp', 'maintenance'],
      [4, 'ramp', 'mailbox'],
      [lift.index, 'lift', 'background-sync'],
      [7, 'ramp', 'mailbox'],
    ])
    const climb = sites[2]
    expect(climb).toMatchObject({shipped: {schedule: [25, 50, 100], bake: 60}, interval: 10, waypoint: false, previous: null, startWeight: 0, final: false})
    // A lift ends with its whole type back, and its bake is not held to the DNS TTL: whole gate intervals from the first.
    const choices = choicesFor(climb, 30)
    expect(new Set(choices.map((c) => c.end))).toEqual(new Set([100]))
    expect(Math.min(...choices.map((c) => c.bake))).toBe(10)
    expect(Math.min(...choicesFor(sites[3], 30).map((c) => c.bake))).toBe(30)
    // The last ramp still brings the last traffic back: the lift comes before it.
    expect(lastReturnIndex(byDegrees)).toBe(7)
    const tuned = withRamps(
      byDegrees,
      sites,
      schedulesOf(sites, sites.map(shippedChoice))!,
      sites.map((s) => ({...shippedChoice(s), bake: 20})),
    )
    expect(tuned.steps.find((s) => s.action === 'lift')).toMatchObject({schedule: [25, 50, 100], bake: 20})
    // As shipped, the lift is at once: not a climb tune reshapes.
    expect(rampSites(loadRunbookFile('runbooks/outlook-staged-return-haproxy.yaml'), startWeights).map((s) => s.action)).toEqual(['ramp', 'ramp', 'ramp'])
  })
})
