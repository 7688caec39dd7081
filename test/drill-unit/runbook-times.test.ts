import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {drillRestrictions, onDrillHaproxy} from '../../src/drill/runbook-times.js'
import {actionOf} from '../../src/actions/registry.js'
import {lockedResources} from '../../src/wiring/live.js'
import {scaleRunbookRates, scaleRunbookTimes} from '../../src/loader/scale-times.js'
import {loadRunbookFile, parseRunbook} from '../../src/loader/load-runbook.js'
import type {Step} from '../../src/actions/registry.js'

const shipped = fileURLToPath(new URL('../../runbooks/outlook-staged-return-haproxy.yaml', import.meta.url))

// Every step kind, each with every duration it takes set to a number of its own.
const everyStep = parseRunbook(
  'every-step.yaml',
  `name: every-step
targets:
  dns: {zone: Z1, record: api.example.com, ttl: 30, sets: {blue: blue, green: green}}
  targetGroups: {blue: arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/blue/1, green: arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/green/2}
  listener: arn:aws:elasticloadbalancing:us-east-1:1:listener/app/x/1/2
  metrics: {source: cloudwatch, loadBalancer: app/x/1}
steps:
  - action: freeze
    reason: recovery
    expires: 600
    timeout: 700
  - action: restrict
    type: sync
    paths: [/sync/]
    retryAfter: 120
  - action: cycle
    pool: blue
    batch: 2
    budget: 3
    restart: {command: ['true'], timeout: 100}
    remediate: {command: ['true'], timeout: 40}
    slowStart: 60
    drainTimeout: 200
    healthyTimeout: 120
    bake: 30
    timeout: 900
    gate: {metric: error-rate, threshold: 2, window: 60, interval: 10, successes: 3, failureLimit: 2, inconclusiveLimit: 4}
  - action: ramp
    set: green
    schedule: [10, 50, 100]
    bake: 40
    gate: {metric: healthy-targets, threshold: 95, window: 20, interval: 5, successes: 2}
  - action: weighted-target-groups
    rule: arn:aws:elasticloadbalancing:us-east-1:1:listener/app/x/1/2
    pool: green
    schedule: [25, 100]
    bake: 48
    gate: {metric: error-rate, threshold: 3, window: 24, interval: 8, successes: 2}
  - action: wait
    for: 90
  - action: check
    bake: 20
    gate: {metric: latency-p99, threshold: 250, window: 80, interval: 16}
  - action: approve
    message: go on?
    timeout: 300
  - action: lift
    type: sync
  - action: unfreeze
`,
)

const stepOf = <A extends Step['action']>(steps: Step[], action: A) => steps.find((s) => s.action === action) as Extract<Step, {action: A}>

describe('scaleRunbookTimes', () => {
  it('multiplies every duration of every step kind by the time scale', () => {
    const scaled = scaleRunbookTimes(everyStep, 0.25).steps
    const freeze = stepOf(scaled, 'freeze')
    expect(freeze.expires).toBe(150)
    expect(freeze.timeout).toBe(175)
    expect(stepOf(scaled, 'restrict').retryAfter).toBe(30)
    const cycle = stepOf(scaled, 'cycle')
    expect(cycle.restart?.timeout).toBe(25)
    expect(cycle.remediate?.timeout).toBe(10)
    expect(cycle.slowStart).toBe(15)
    expect(cycle.drainTimeout).toBe(50)
    expect(cycle.healthyTimeout).toBe(30)
    expect(cycle.bake).toBe(7.5)
    expect(cycle.timeout).toBe(225)
    expect(cycle.gate).toMatchObject({window: 15, interval: 2.5})
    const ramp = stepOf(scaled, 'ramp')
    expect(ramp.bake).toBe(10)
    expect(ramp.gate).toMatchObject({window: 5, interval: 1.25})
    const shift = stepOf(scaled, 'weighted-target-groups')
    expect(shift.bake).toBe(12)
    expect(shift.gate).toMatchObject({window: 6, interval: 2})
    expect(stepOf(scaled, 'wait').for).toBe(22.5)
    const check = stepOf(scaled, 'check')
    expect(check.bake).toBe(5)
    expect(check.gate).toMatchObject({window: 20, interval: 4})
    expect(stepOf(scaled, 'approve').timeout).toBe(75)
  })

  it('keeps counts, thresholds, schedules and everything else as they are', () => {
    const scaled = scaleRunbookTimes(everyStep, 0.25)
    expect(scaled.name).toBe(everyStep.name)
    expect(scaled.targets).toEqual(everyStep.targets)
    expect(scaled.steps.map((s) => s.action)).toEqual(everyStep.steps.map((s) => s.action))
    const [cycle, original] = [stepOf(scaled.steps, 'cycle'), stepOf(everyStep.steps, 'cycle')]
    expect(cycle.batch).toEqual(original.batch)
    expect(cycle.budget).toEqual(original.budget)
    expect(cycle.restart?.command).toEqual(['true'])
    expect(cycle.gate).toEqual({...original.gate, window: 15, interval: 2.5})
    expect(cycle.gate).toMatchObject({threshold: 2, successes: 3, failureLimit: 2, inconclusiveLimit: 4})
    expect(stepOf(scaled.steps, 'ramp').schedule).toEqual([10, 50, 100])
    expect(stepOf(scaled.steps, 'ramp').gate?.threshold).toBe(95)
    expect(stepOf(scaled.steps, 'weighted-target-groups').schedule).toEqual([25, 100])
    expect(stepOf(scaled.steps, 'weighted-target-groups').gate).toMatchObject({threshold: 3, successes: 2})
    expect(stepOf(scaled.steps, 'check').gate.threshold).toBe(250)
    expect(stepOf(scaled.steps, 'restrict').paths).toEqual(['/sync/'])
    expect(stepOf(scaled.steps, 'lift')).toEqual(stepOf(everyStep.steps, 'lift'))
    expect(stepOf(scaled.steps, 'unfreeze')).toEqual(stepOf(everyStep.steps, 'unfreeze'))
    // The runbook it was given is left alone.
    expect(stepOf(everyStep.steps, 'cycle').bake).toBe(30)
  })

  it('leaves a step without a timeout without one', () => {
    const scaled = scaleRunbookTimes(everyStep, 0.5)
    expect('timeout' in stepOf(scaled.steps, 'wait')).toBe(false)
    expect('expires' in stepOf(scaled.steps, 'unfreeze')).toBe(false)
  })

  it('rounds Retry-After to whole seconds, never below 1', () => {
    const retryAfter = (scale: number) => stepOf(scaleRunbookTimes(everyStep, scale).steps, 'restrict').retryAfter
    expect(retryAfter(0.1)).toBe(12)
    // 120 × 0.0125 = 1.5, 120 × 0.006 = 0.72, 120 × 0.001 = 0.12
    expect(retryAfter(0.0125)).toBe(2)
    expect(retryAfter(0.006)).toBe(1)
    expect(retryAfter(0.001)).toBe(1)
  })

  it('scales the shipped HAProxy runbook, its defaults included', () => {
    const runbook = loadRunbookFile(shipped)
    const scaled = scaleRunbookTimes(runbook, 0.25).steps
    const freeze = stepOf(scaled, 'freeze')
    expect(freeze.expires).toBeUndefined()
    expect(stepOf(scaled, 'restrict').retryAfter).toBe(75)
    const park = scaled[2]
    expect(park.action === 'ramp' && park.bake).toBe(7.5)
    const cycle = stepOf(scaled, 'cycle')
    expect(cycle.restart?.timeout).toBe(75)
    expect(cycle.remediate?.timeout).toBe(30)
    // drainTimeout and healthyTimeout are the schema's 300 s defaults.
    expect(cycle.drainTimeout).toBe(75)
    expect(cycle.healthyTimeout).toBe(75)
    expect(cycle.bake).toBe(7.5)
    // The gate takes defaults.gate: window 30, interval 10, successes 3, failureLimit 2.
    expect(cycle.gate).toMatchObject({metric: 'healthy-targets', threshold: 95, window: 7.5, interval: 2.5, successes: 3, failureLimit: 2})
    const checks = scaled.filter((s) => s.action === 'check')
    expect(checks.map((c) => c.action === 'check' && [c.bake, c.gate.window, c.gate.threshold])).toEqual([
      [15, 7.5, 2],
      [15, 15, 1],
    ])
    const lastRamp = scaled.filter((s) => s.action === 'ramp').at(-1)!
    expect(lastRamp.action === 'ramp' && lastRamp.schedule).toHaveLength(10)
    expect(lastRamp.action === 'ramp' && lastRamp.schedule[0]).toBe(55)
  })
})

describe('drillRestrictions', () => {
  it("turns a restrict step's paths into the load generator's path for its type, and drops its headers", () => {
    const runbook = loadRunbookFile(shipped)
    const drilled = drillRestrictions(runbook)
    const restrict = stepOf(drilled.steps, 'restrict')
    expect(restrict.paths).toEqual(['/t/background-sync'])
    expect(restrict.headers).toEqual({})
    expect(restrict.type).toBe('background-sync')
    expect(restrict.retryAfter).toBe(300)
    // Every other step is the runbook's own.
    drilled.steps.forEach((step, i) => {
      if (step.action !== 'restrict') expect(step).toBe(runbook.steps[i])
    })
    expect(stepOf(runbook.steps, 'restrict').paths).toEqual(['/sync/', '/ews/sync/'])
  })

  it('points any restricted type at its own path', () => {
    const drilled = drillRestrictions(everyStep)
    expect(stepOf(drilled.steps, 'restrict').paths).toEqual(['/t/sync'])
  })
})

describe('onDrillHaproxy', () => {
  it("puts the drill's socket and maps in the runbook, so its plan and locks name what the drill changes, not production's paths", () => {
    const runbook = loadRunbookFile(shipped)
    const drill = {socket: '/tmp/sluice-drill/admin.sock', restrictMap: '/tmp/sluice-drill/restricted.map', rampMap: '/tmp/sluice-drill/ramp.map'}
    const onDrill = onDrillHaproxy(runbook, drill)
    const plan = (r: typeof runbook) => r.steps.flatMap((s) => actionOf(s).plan(s, {targets: r.targets})).join('\n')
    expect(plan(runbook)).toContain('/etc/haproxy/sluice-ramp.map')
    expect(plan(onDrill)).not.toContain('/etc/haproxy/')
    expect(plan(onDrill)).toContain('haproxy map /tmp/sluice-drill/ramp.map (/tmp/sluice-drill/admin.sock)')
    expect(plan(onDrill)).toContain('haproxy map /tmp/sluice-drill/restricted.map (/tmp/sluice-drill/admin.sock)')
    expect(lockedResources(onDrill).every((lock) => lock.startsWith('haproxy:/tmp/sluice-drill/admin.sock/'))).toBe(true)
    // A drill whose HAProxy has no ramp leaves none in the runbook either.
    expect(onDrillHaproxy(runbook, {socket: drill.socket, restrictMap: drill.restrictMap}).targets.haproxy?.rampMap).toBeUndefined()
    expect(runbook.targets.haproxy?.socket).toBe('/run/haproxy/admin.sock')
  })
})

describe('scaleRunbookTimes on a paced step', () => {
  it("scales the pace's wait for room and its clients' interval with the rest of the runbook's durations", () => {
    const runbook = parseRunbook(
      'paced-times.yaml',
      `name: paced-times
targets:
  haproxy: {socket: /run/haproxy/admin.sock, backends: {blue: blue, green: green}, rampMap: /etc/haproxy/ramp.map, restrictMap: /etc/haproxy/r.map}
  metrics: {source: haproxy}
  capacityPerTarget: {blue: 100}
steps:
  - {action: weighted-target-groups, name: paced, pool: blue, schedule: auto, pace: {wait: 200, clientInterval: 4}, bake: 60}
  - {action: lift, name: lift, type: sync, schedule: auto, bake: 60, gate: {metric: error-rate, threshold: 2, pool: blue}}
`,
    )
    const scaled = scaleRunbookTimes(runbook, 0.25)
    expect(scaled.steps.find((s) => s.name === 'paced')).toMatchObject({bake: 15, pace: {wait: 50, clientInterval: 1, perTarget: 100}})
    expect(scaled.steps.find((s) => s.name === 'lift')).toMatchObject({bake: 15, pace: {wait: 75, perTarget: null}})
    expect(runbook.steps.find((s) => s.name === 'paced')).toMatchObject({pace: {wait: 200, clientInterval: 4}})
  })
})

describe('scaleRunbookRates', () => {
  it('scales stated capacities by the rate scale and a gate minimum of requests by both scales, and nothing else', () => {
    const runbook = parseRunbook(
      'rates.yaml',
      `name: rates
targets:
  haproxy: {socket: /run/haproxy/admin.sock, backends: {blue: blue, green: green}, rampMap: /etc/haproxy/ramp.map}
  metrics: {source: haproxy}
  capacityPerTarget: {blue: 100}
steps:
  - {action: weighted-target-groups, pool: green, schedule: [100], bake: 60, gate: {metric: error-rate, threshold: 2, pool: green, minRequests: 1000}}
  - {action: cycle, pool: blue, batch: 1, headroom: 10, capacityPerTarget: 80, restart: {command: [x], timeout: 60}}
  - {action: weighted-target-groups, name: paced, pool: blue, schedule: auto, bake: 60}
`,
    )
    const scaled = scaleRunbookRates(runbook, {rateScale: 0.25, timeScale: 0.5})
    // A paced ramp sizes its steps by blue's capacity at the drill's scale, as its demand is read there
    // (the first paced drill stepped to 50% on a cold pool with the capacity of the incident's scale).
    expect(scaled.steps.find((s) => s.name === 'paced')).toMatchObject({pace: {pool: 'blue', perTarget: 25}})
    expect(runbook.steps.find((s) => s.name === 'paced')).toMatchObject({pace: {pool: 'blue', perTarget: 100}})
    expect(scaled.targets.capacityPerTarget).toEqual({blue: 25})
    const shift = stepOf(scaled.steps, 'weighted-target-groups')
    // 1,000 requests of the incident are a quarter of the rate over half the time.
    expect(shift.gate).toMatchObject({minRequests: 125, threshold: 2, window: 60})
    expect(stepOf(scaled.steps, 'cycle')).toMatchObject({capacityPerTarget: 20, headroom: 10, batch: {count: 1}})
    // The runbook it came from is untouched.
    expect(runbook.targets.capacityPerTarget).toEqual({blue: 100})
  })
})
