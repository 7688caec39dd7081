import {describe, expect, it} from 'vitest'
import {inputErrorOf, scenarioWriter, tinyFleet} from '../helpers/scenario-files.js'
import {builtinScenarioNames, loadScenario, parsePolicy, pickSetups} from '../../src/sim/scenario/load-scenario.js'

const write = scenarioWriter('sluice-scenario-')
const errorOf = inputErrorOf

const valid = `name: tiny
${tinyFleet}faults:
  - kind: broken
    servers: 1
    from: 10
    to: 20
setups:
  plain: {}
`

describe('loading scenarios', () => {
  it('fills in defaults', () => {
    const {scenario} = loadScenario(write('ok.yaml', valid))
    expect(scenario.duration).toBe(600)
    expect(scenario.healthCheck).toEqual({interval: 10, baseEjection: 30, maxEjection: 300})
    expect(scenario.setups.plain).toEqual({maxEjectionPercent: 100, panicThreshold: 0, shed: false, slowStart: 0, slowStartMinWeightPercent: 10})
    expect(scenario.demand.types).toEqual({all: 1})
  })

  it('ships the built-in scenarios, and every one of them loads', () => {
    const names = builtinScenarioNames()
    expect(names).toEqual(expect.arrayContaining(['outlook-2026', 'relapse', 'retry-storm', 'cafe-2024', 'sql-2022']))
    for (const name of names) expect(loadScenario(name).scenario.name).toBe(name)
  })

  it('reports malformed YAML at its line and column', () => {
    const file = write('bad.yaml', 'name: x\npools:\n  - name: web\n    servers: [4\n')
    expect(errorOf(() => loadScenario(file)).message).toMatch(new RegExp(`^${file}:\\d+:\\d+: malformed YAML: `))
  })

  it('reports a negative capacity at the value, naming the field', () => {
    const file = write('neg.yaml', valid.replace('capacity: 50', 'capacity: -50'))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:5:15: pools[0].capacity: expected a number > 0`)
  })

  it("reads a pool's queue, and reports one that holds nothing at the value", () => {
    expect(loadScenario(write('queue.yaml', valid.replace('capacity: 50', 'capacity: 50\n    queueSeconds: 1.5'))).scenario.pools[0].queueSeconds).toBe(1.5)
    const file = write('no-queue.yaml', valid.replace('capacity: 50', 'capacity: 50\n    queueSeconds: 0'))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:6:19: pools[0].queueSeconds: expected a number > 0`)
  })

  it('reports a fix before the fault at the fix', () => {
    const file = write('fix.yaml', valid.replace('to: 20', 'to: 5'))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:12:9: faults[0].to: expected the fix (to: 5) after the fault starts (from: 10)`)
  })

  it('reports an unknown key at the key, in a policy too', () => {
    const file = write('key.yaml', valid.replace('plain: {}', 'plain:\n    shedd: true'))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:15:5: setups.plain.shedd: unknown key "shedd"`)
  })

  it('reports a wrong type with what it expected', () => {
    const file = write('type.yaml', valid.replace('servers: 4', 'servers: four'))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:4:14: pools[0].servers: expected number, received string`)
  })

  it('reports a fault that names a missing pool', () => {
    const file = write('pool.yaml', valid.replace('    servers: 1\n', '    servers: 1\n    pool: db\n'))
    expect(errorOf(() => loadScenario(file)).message).toMatch(/:11:11: faults\[0\]\.pool: no pool named "db"; pools are web$/)
  })

  it('names the flag when an override is wrong', () => {
    expect(errorOf(() => loadScenario('outlook-2026', {capacity: -100})).message).toBe('--capacity: pools[0].capacity: expected a number > 0')
    expect(errorOf(() => loadScenario('outlook-2026', {fixAt: 30})).message).toBe(
      '--fix-at: faults[0].to: expected the fix (to: 30) after the fault starts (from: 60)',
    )
    expect(errorOf(() => loadScenario('outlook-2026', {broken: 21})).message).toBe(
      "--broken: faults[0].servers: expected at most the pool's 20 servers, got 21",
    )
  })

  it('refuses an unknown scenario, listing the built-in ones', () => {
    expect(errorOf(() => loadScenario('outlook-2025')).message).toMatch(/^--scenario: unknown scenario "outlook-2025"; built-in scenarios are .*outlook-2026/)
  })

  it("refuses an unknown setup, listing the scenario's setups", () => {
    const {scenario} = loadScenario('outlook-2026')
    expect(errorOf(() => pickSetups(scenario, ['panic-40'])).message).toBe(
      '--setup: unknown setup "panic-40" in scenario outlook-2026; its setups are no-guard, cap-third, panic-50, cap-shed-slow-start',
    )
  })
})

describe('--policy', () => {
  it('parses key=value pairs with defaults for the rest', () => {
    expect(parsePolicy('maxEjectionPercent=33, shed=true,slowStart=30')).toEqual({
      maxEjectionPercent: 33,
      panicThreshold: 0,
      shed: true,
      slowStart: 30,
      slowStartMinWeightPercent: 10,
    })
  })

  it('refuses an unknown key and lists the known ones', () => {
    expect(errorOf(() => parsePolicy('panic=50')).message).toBe(
      '--policy: unknown key "panic"; expected one of maxEjectionPercent, panicThreshold, shed, slowStart, slowStartMinWeightPercent',
    )
  })

  it('refuses a bad value, naming the key', () => {
    expect(errorOf(() => parsePolicy('shed=yes')).message).toBe('--policy: shed: expected boolean, received string')
    expect(errorOf(() => parsePolicy('panicThreshold=150')).message).toMatch(/^--policy: panicThreshold: /)
  })
})
