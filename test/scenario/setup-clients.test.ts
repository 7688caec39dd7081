import {describe, expect, it} from 'vitest'
import {inputErrorOf, scenarioWriter, tinyFleet} from '../helpers/scenario-files.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {scenarioLimits} from '../../src/sim/scenario/schema.js'
import {simulateSetups, simulationJson} from '../../src/sim/simulate.js'

const write = scenarioWriter('sluice-setup-clients-')
const errorOf = inputErrorOf

const scenario = (setups: string, duration = 600) => `name: tiny
duration: ${duration}
${tinyFleet}clients:
  attempts: 3
  retryBudget: 0.2
faults:
  - kind: broken
    servers: 4
    from: 10
    to: 300
setups:
${setups}`

describe("a setup sets client policy over the scenario's", () => {
  it("key by key: what a setup leaves out stays the scenario's, and null turns a budget off", () => {
    const file = write(
      'ok.yaml',
      scenario(`  plain: {}
  no-budget:
    clients: {retryBudget: null}
  budget-10:
    maxEjectionPercent: 50
    clients: {retryBudget: 0.1, timeout: 2}
`),
    )
    const {scenario: s} = loadScenario(file)
    const clients = Object.fromEntries(pickSetups(s, 'all').map(({name, policy}) => [name, fleetConfig(s, policy).clients]))
    expect(clients.plain).toEqual(s.clients)
    expect(clients['no-budget']).toEqual({...s.clients, retryBudget: null})
    expect(clients['budget-10']).toEqual({...s.clients, retryBudget: 0.1, timeout: 2})
    // The load balancer's policy carries only its own guards.
    expect(fleetConfig(s, s.setups['budget-10']).policy).toEqual({
      maxEjectionPercent: 50,
      panicThreshold: 0,
      shed: false,
      slowStart: 0,
      slowStartMinWeightPercent: 10,
    })
  })

  it('and the setups then differ by their clients alone: amplification during the fault follows the budget', () => {
    const {scenario: s} = loadScenario(
      write(
        'compare.yaml',
        scenario(`  no-budget:
    clients: {retryBudget: null}
  budget-10:
    clients: {retryBudget: 0.1}
`),
      ),
    )
    const json = simulationJson(simulateSetups(s, pickSetups(s, 'all')))
    const [none, ten] = json.setups.map((x) => x.loadAmplificationDuringFault!)
    expect(none).toBeGreaterThan(2.8)
    expect(ten).toBeGreaterThan(1.05)
    expect(ten).toBeLessThan(1.15)
    expect(json.setups[0].policy).toMatchObject({clients: {retryBudget: null}})
  })

  it('an unknown client key is refused at its file:line:column', () => {
    const file = write(
      'unknown.yaml',
      scenario(`  odd:
    clients: {retryBudgt: 0.1}
`),
    )
    expect(errorOf(() => loadScenario(file)).message).toMatch(
      new RegExp(`^${file.replace(/[.]/g, '\\.')}:19:15: setups\\.odd\\.clients\\.retryBudgt: unknown key`),
    )
  })

  it('a client value out of range is refused at its file:line:column', () => {
    const file = write(
      'range.yaml',
      scenario(`  odd:
    clients:
      retryBudget: 2
`),
    )
    expect(errorOf(() => loadScenario(file)).message).toMatch(new RegExp(`^${file.replace(/[.]/g, '\\.')}:20:20: setups\\.odd\\.clients\\.retryBudget: .*1`))
  })
})

describe('duration is bounded', () => {
  it(`accepts ${scenarioLimits.maxSeconds} s and refuses a second more, naming the limit`, () => {
    expect(loadScenario(write('long.yaml', scenario('  plain: {}\n', scenarioLimits.maxSeconds))).scenario.duration).toBe(3_600_000)
    const file = write('too-long.yaml', scenario('  plain: {}\n', scenarioLimits.maxSeconds + 1))
    expect(errorOf(() => loadScenario(file)).message).toBe(`${file}:2:11: duration: expected at most 3600000 s (1,000 h)`)
  })

  it('the --duration override is checked by the same schema and named as the flag', () => {
    expect(errorOf(() => loadScenario(write('flag.yaml', scenario('  plain: {}\n')), {duration: 4_000_000})).message).toBe(
      '--duration: duration: expected at most 3600000 s (1,000 h)',
    )
  })
})
