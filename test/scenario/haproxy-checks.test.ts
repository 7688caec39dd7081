import {describe, expect, it} from 'vitest'
import {inputErrorOf, scenarioWriter, tinyFleet} from '../helpers/scenario-files.js'
import {fleetConfig, loadScenario, parsePolicy, pickSetups} from '../../src/sim/scenario/load-scenario.js'

const write = scenarioWriter('sluice-haproxy-scenario-')
let files = 0

function load(text: string) {
  const file = write(`s${files++}.yaml`, text)
  return {file, scenario: () => loadScenario(file).scenario}
}

const errorOf = (fn: () => unknown): string => inputErrorOf(fn).message

const base = (healthCheck: string, setups: string) => `name: tiny
${tinyFleet}healthCheck: ${healthCheck}
setups:
${setups}
`

describe('scenario healthCheck kind haproxy', () => {
  it("defaults to HAProxy's own: inter 2 s, fall 3, rise 2, no observe; fastinter and downinter follow inter; error-limit 10 and on-error fastinter; timeout server 50 s, its example configuration's", () => {
    const scenario = load(base('{kind: haproxy}', '  plain: {}')).scenario()
    expect(scenario.healthCheck.interval).toBe(2)
    const config = fleetConfig(scenario, pickSetups(scenario, ['plain'])[0].policy)
    expect(config.healthCheck.haproxy).toEqual({
      fastinter: 2,
      downinter: 2,
      fall: 3,
      rise: 2,
      observe: 'none',
      errorLimit: 10,
      onError: 'fastinter',
      timeoutServer: 50,
    })
    expect(config.policy.slowStart).toBe(0)
  })

  it("a setup's healthCheck is set over the scenario's, and fastinter follows the setup's inter", () => {
    const scenario = load(
      base(
        '{kind: haproxy, inter: 5, fall: 2, slowstart: 30}',
        '  plain: {}\n  l7:\n    healthCheck: {inter: 3, observe: layer7, errorLimit: 20, onError: sudden-death}',
      ),
    ).scenario()
    const [plain, l7] = pickSetups(scenario, ['plain', 'l7']).map((s) => fleetConfig(scenario, s.policy))
    expect(plain.healthCheck.interval).toBe(5)
    expect(plain.healthCheck.haproxy).toMatchObject({fastinter: 5, fall: 2, observe: 'none'})
    expect(l7.healthCheck.interval).toBe(3)
    expect(l7.healthCheck.haproxy).toMatchObject({fastinter: 3, downinter: 3, fall: 2, observe: 'layer7', errorLimit: 20, onError: 'sudden-death'})
    // HAProxy's slowstart drives the pool's slow start.
    expect(l7.policy.slowStart).toBe(30)
    expect(l7.policy).not.toHaveProperty('healthCheck')
  })

  it('an Envoy scenario comes out as before, with no haproxy settings', () => {
    const scenario = load(base('{interval: 7}', '  plain: {}')).scenario()
    expect(scenario.healthCheck).toEqual({interval: 7, baseEjection: 30, maxEjection: 300})
    expect(load(base('{kind: envoy, interval: 7}', '  plain: {}')).scenario().healthCheck).toEqual({interval: 7, baseEjection: 30, maxEjection: 300})
  })

  for (const [key, value, says] of [
    ['maxEjectionPercent', '33', 'HAProxy has none'],
    ['panicThreshold', '50', 'HAProxy has none'],
    ['slowStart', '30', 'set healthCheck.slowstart'],
    ['slowStartMinWeightPercent', '20', '1/16'],
  ] as const) {
    it(`refuses the Envoy guard ${key} in a setup, naming file:line:column`, () => {
      const {file, scenario} = load(base('{kind: haproxy}', `  plain: {}\n  guarded:\n    ${key}: ${value}`))
      const message = errorOf(scenario)
      // Line 12 of the file, at the value: four spaces, the key, a colon and a space.
      expect(message).toContain(`${file}:12:${4 + key.length + 3}: setups.guarded.${key}:`)
      expect(message).toContain(key)
      expect(message).toContain(says)
    })
  }

  it('accepts a guard at its do-nothing value', () => {
    expect(() => load(base('{kind: haproxy}', '  plain: {maxEjectionPercent: 100, panicThreshold: 0}')).scenario()).not.toThrow()
  })

  it('refuses the guards in a --policy run against a haproxy scenario', () => {
    const scenario = load(base('{kind: haproxy}', '  plain: {}')).scenario()
    expect(errorOf(() => fleetConfig(scenario, parsePolicy('panicThreshold=50')))).toMatch(/^--policy\/--sweep: panicThreshold: .*HAProxy has none/)
  })

  it('refuses HAProxy settings in a setup of an Envoy scenario', () => {
    const {file, scenario} = load(base('{interval: 10}', '  l7:\n    healthCheck: {observe: layer7}'))
    expect(errorOf(scenario)).toMatch(new RegExp(`^${file}:11:18: setups.l7.healthCheck: .*kind: haproxy`))
  })

  it('refuses error-limit and on-error where nothing observes the traffic', () => {
    const inSetup = load(base('{kind: haproxy}', '  plain:\n    healthCheck: {errorLimit: 5}'))
    expect(errorOf(inSetup.scenario)).toMatch(new RegExp(`^${inSetup.file}:11:31: setups.plain.healthCheck.errorLimit: .*observe: layer7`))
    const inScenario = load(base('{kind: haproxy, onError: mark-down}', '  plain: {}'))
    expect(errorOf(inScenario.scenario)).toMatch(new RegExp(`^${inScenario.file}:8:39: healthCheck.onError: .*observe: layer7`))
    // Fine on the scenario when a setup observes.
    expect(() => load(base('{kind: haproxy, onError: mark-down}', '  plain: {}\n  l7:\n    healthCheck: {observe: layer7}')).scenario()).not.toThrow()
  })

  it('refuses unknown modes, Envoy keys on a haproxy check, and an unknown kind', () => {
    expect(errorOf(load(base('{kind: haproxy, observe: layer7, onError: reboot}', '  plain: {}')).scenario)).toContain('onError')
    expect(errorOf(load(base('{kind: haproxy, baseEjection: 30}', '  plain: {}')).scenario)).toContain('baseEjection')
    expect(errorOf(load(base('{kind: nginx}', '  plain: {}')).scenario)).toMatch(/:8:\d+: .*kind/)
    expect(errorOf(load(base('{kind: haproxy, fall: 0}', '  plain: {}')).scenario)).toContain('fall')
  })
})
