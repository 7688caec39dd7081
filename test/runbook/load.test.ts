import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import type {RampStep} from '../../src/actions/ramp/schema.js'
import type {Runbook} from '../../src/loader/runbook.js'
import {gateDefaults} from '../../src/runbook/gate.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {at, cases, twoRegionsDns} from '../helpers/bad-runbooks.js'

const root = new URL('../../', import.meta.url)

/** The loader's error for a runbook it refuses, checked to be an InputError on one line. */
function refusal(file: string, text: string): string {
  try {
    parseRunbook(file, text)
  } catch (error) {
    expect(error).toBeInstanceOf(InputError)
    const message = (error as Error).message
    expect(message.split('\n'), message).toHaveLength(1)
    return message
  }
  throw new Error(`${file}: the loader accepted it`)
}

const ramp = (schedule: string, extra = '') =>
  `name: ramp\n${twoRegionsDns}steps:\n  - action: ramp\n    set: api-west\n    schedule: ${schedule}\n    bake: 60\n${extra}`

describe('the runbook loader (in process)', () => {
  it('loads a shipped runbook: its name, targets, steps in order, titles and resolved gates', () => {
    const file = 'runbooks/outlook-staged-return.yaml'
    const runbook = parseRunbook(file, readFileSync(new URL(file, root), 'utf8'))
    expect(runbook.name).toBe('outlook-staged-return')
    expect(runbook.file).toBe(file)
    expect(runbook.targets.dns).toMatchObject({zone: 'Z04517273E3NUXJ3CHVE9', record: 'outlook.example.com.', ttl: 30})
    expect(runbook.rehearsal).toEqual({scenario: 'outlook-recovery', setup: 'no-guard', startAt: 300})
    expect(runbook.steps.map((s) => s.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(runbook.steps.map((s) => s.action)).toEqual(['freeze', 'restrict', 'ramp', 'cycle', 'ramp', 'lift', 'check', 'ramp', 'check', 'unfreeze'])
    expect(runbook.steps[2].title).toBe('Park traffic on the maintenance page')
    expect(runbook.steps[3].title).toBe('Cycle mailbox in batches of 25%')
    // The first ramp's gate takes window, interval, successes and failureLimit from defaults.gate.
    const back = runbook.steps[4] as Extract<Runbook['steps'][number], {action: 'ramp'}>
    expect(back.gate).toEqual({
      metric: 'error-rate',
      threshold: 2,
      window: 30,
      interval: 10,
      successes: 3,
      failureLimit: 2,
      inconclusiveLimit: gateDefaults.inconclusiveLimit,
      pool: 'mailbox',
      judge: 'threshold',
      confidence: gateDefaults.confidence,
    })
    // The cycle has no gate of its own (each batch must come back healthy), only its bake.
    const cycle = runbook.steps[3] as Extract<Runbook['steps'][number], {action: 'cycle'}>
    expect(cycle.gate).toBeUndefined()
    expect(cycle.bake).toBe(30)
    // The last check sets its own window.
    expect((runbook.steps[8] as Extract<Runbook['steps'][number], {action: 'check'}>).gate.window).toBe(60)
    expect(runbook.source).toEqual({kind: 'file', text: readFileSync(new URL(file, root), 'utf8')})
    expect(runbook.locate(['steps', 3, 'pool'])).toMatch(/^runbooks\/outlook-staged-return\.yaml:\d+:\d+$/)
  })

  it('defaults: a title per action, onFailure per action (ramp rolls back, cycle holds, the rest abort), bake from the gate', () => {
    const runbook = parseRunbook(
      'defaults.yaml',
      `name: defaults
targets:
  dns: {zone: /hostedzone/Z1, record: a.example.com., ttl: 60, sets: {blue: blue, green: green}}
  targetGroups: {blue: arn:tg}
  listener: arn:listener
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
steps:
  - {action: freeze, reason: incident}
  - {action: restrict, type: sync, paths: [/sync/*]}
  - {action: cycle, pool: blue, batch: 2}
  - {action: ramp, set: green, schedule: [10, 100]}
  - {action: check, gate: {metric: error-rate, threshold: 1, window: 45}}
  - {action: wait, for: 5m}
  - {action: approve, message: Go on?}
  - {action: lift, type: sync}
  - {action: unfreeze}
  - {action: ramp, set: blue, schedule: [100], bake: 60, onFailure: hold, name: Everything back}
`,
    )
    expect(runbook.steps.map((s) => s.title)).toEqual([
      'Freeze changes: incident',
      'Restrict sync traffic',
      'Cycle blue in batches of 2',
      'Ramp green: 10% → 100%',
      'Check error-rate',
      'Wait 300 s',
      'Approval: Go on?',
      'Lift the restriction on sync traffic',
      'Lift the change freeze',
      'Everything back',
    ])
    expect(runbook.steps.map((s) => s.onFailure)).toEqual(['abort', 'abort', 'hold', 'rollback', 'abort', 'abort', 'abort', 'abort', 'abort', 'hold'])
    // A ramp with no bake anywhere bakes 300 s; a check with no bake watches for its window.
    expect((runbook.steps[3] as RampStep).bake).toBe(300)
    expect((runbook.steps[4] as Extract<Runbook['steps'][number], {action: 'check'}>).bake).toBe(45)
    expect((runbook.steps[4] as Extract<Runbook['steps'][number], {action: 'check'}>).gate).toMatchObject({
      window: 45,
      interval: gateDefaults.interval,
      successes: gateDefaults.successes,
    })
    // A zone id pasted as Route 53 prints it.
    expect(runbook.targets.dns!.zone).toBe('Z1')
  })

  it('expands linear and exponential schedules to whole percentages', () => {
    const linear = parseRunbook('linear.yaml', ramp('{linear: {from: 10, to: 100, steps: 4}}')).steps[0] as RampStep
    expect(linear.schedule).toEqual([10, 40, 70, 100])
    const exponential = parseRunbook('exp.yaml', ramp('{exponential: {from: 1, factor: 3, to: 100}}')).steps[0] as RampStep
    expect(exponential.schedule).toEqual([1, 3, 9, 27, 81, 100])
    const rounded = parseRunbook('round.yaml', ramp('{linear: {from: 1, to: 50, steps: 3}}')).steps[0] as RampStep
    expect(rounded.schedule).toEqual([1, 26, 50])
  })

  it('refuses a schedule that does not climb, or starts at 0, naming where', () => {
    const flat = ramp('[10, 10, 50]')
    expect(refusal('flat.yaml', flat)).toBe(
      `flat.yaml:${at(flat, '10, 50', '[10, 10, 50]')}: steps[0].schedule[1]: expected each step above the one before, got 10% after 10%`,
    )
    const zero = ramp('{exponential: {from: 0, factor: 2, to: 100}}')
    expect(refusal('zero.yaml', zero)).toMatch(/^zero\.yaml:\d+:\d+: steps\[0\]\.schedule\.exponential\.from: expected a start above 0 %, got 0$/)
  })

  it('refuses a gate naming a pool the targets do not have, at the pool', () => {
    const text = `name: unknown-pool\n${twoRegionsDns}steps:\n  - action: check\n    gate: {metric: error-rate, threshold: 1, pool: north}\n`
    expect(refusal('pool.yaml', text)).toBe(`pool.yaml:${at(text, 'north')}: steps[0].gate.pool: no pool named "north" in targets; pools are east, west`)
  })

  it('a bake shorter than the TTL is allowed with allowShortBake: true', () => {
    const step = parseRunbook(
      'short.yaml',
      `name: short\n${twoRegionsDns}steps:\n  - {action: ramp, set: api-west, schedule: [5, 50], bake: 30, allowShortBake: true}\n`,
    ).steps[0] as RampStep
    expect(step).toMatchObject({bake: 30, allowShortBake: true, schedule: [5, 50]})
  })
})

describe('a bad runbook: the loader names file:line:column and what was expected', () => {
  it.each(cases)('$name', ({name, text, where, message}) => {
    const file = `/tmp/${name.replace(/[^a-z0-9]+/gi, '-')}.yaml`
    const error = refusal(file, text)
    const prefix = `${file}:${where(text)}: `
    expect(error.startsWith(prefix), `${error}\nexpected it to start with ${prefix}`).toBe(true)
    expect(error.slice(prefix.length)).toMatch(message)
  })
})
