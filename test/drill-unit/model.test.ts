import {describe, expect, it} from 'vitest'
import {predictedFromModel} from '../../src/drill/model.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {inputErrorOf, scenarioWriter} from '../helpers/scenario-files.js'

const write = scenarioWriter('sluice-model-')

const truth = write(
  'truth.yaml',
  `name: truth
duration: 120
pools:
  - name: web
    servers: 10
    capacity: 20
    queueSeconds: 2
demand:
  rps: 150
healthCheck:
  kind: haproxy
  inter: 2
  fall: 3
  rise: 2
clients:
  attempts: 2
faults:
  - kind: broken
    servers: 4
    from: 30
    to: 80
setups:
  checks-only: {}
`,
)

const model = write(
  'model.yaml',
  `name: calibrated-web
duration: 300
pools:
  - name: web
    servers: 10
    capacity: 18.5
    serviceTime: 0.11
demand:
  rps: 99
healthCheck:
  kind: haproxy
  inter: 1
  fall: 2
  rise: 3
setups:
  as-configured: {healthCheck: {slowstart: 4}}
`,
)

const target = () => {
  const {scenario} = loadScenario(truth)
  return {kind: 'scenario' as const, scenario, setup: pickSetups(scenario, 'all')[0]}
}

describe('a drill predicted from a model', () => {
  it('takes the pool, checks, clients and setup from the model and demand, faults and timeline from the drilled scenario', () => {
    const m = loadScenario(model).scenario
    const predicted = predictedFromModel(target(), m, 'model.yaml')
    const s = predicted.scenario
    expect(s.pools[0].capacity).toBe(18.5)
    expect(s.pools[0].serviceTime).toBe(0.11)
    expect(s.pools[0].queueSeconds).toBeUndefined()
    expect(s.healthCheck.haproxy?.fall).toBe(2)
    expect(s.healthCheck.interval).toBe(1)
    expect(s.clients.attempts).toBe(1)
    expect(predicted.setup).toEqual({name: 'as-configured', policy: m.setups['as-configured']})
    expect(s.demand.rps).toBe(150)
    expect(s.duration).toBe(120)
    expect(s.faults).toEqual(target().scenario.faults)
  })

  it('refuses a model without the drilled pool, naming it', () => {
    const other = loadScenario(model).scenario
    const renamed = {...other, pools: other.pools.map((p) => ({...p, name: 'api'}))}
    expect(inputErrorOf(() => predictedFromModel(target(), renamed, 'model.yaml')).message).toMatch(/--model: model.yaml has no pool web \(it has api\)/)
  })
})
