import {describe, expect, it} from 'vitest'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {twoRegionsTargets} from '../helpers/bad-runbooks.js'
import {inputErrorOf} from '../helpers/scenario-files.js'

describe('the runbook loader reports every problem in a file, in file order', () => {
  it('three schema problems, one a misspelt key: three lines, each at its own place', () => {
    const text = `name: Three-Problems
${twoRegionsTargets}steps:
  - action: freeze
    reason: moving west back
  - action: ramp
    set: api-west
    schedul: [5, 25, 50]
    bake: 60
  - action: check
    gate:
      metric: error-rate
      threshold: 2
      window: forever
`
    const error = inputErrorOf(() => parseRunbook('three.yaml', text))
    expect(error.problems).toEqual([
      'three.yaml:1:7: name: expected a lower-case name of letters, digits and dashes',
      // At the key itself; the missing `schedule` it stands for is not reported a second time.
      "three.yaml:14:5: steps[1]: unknown key 'schedul' (did you mean 'schedule'?)",
      'three.yaml:20:15: steps[2].gate.window: expected a duration such as 30, 30s, 5m or 1h',
    ])
    expect(error.message).toBe(error.problems.join('\n'))
  })

  it('a misspelt key in a step variant is matched against that variant only', () => {
    const text = `name: cycle-typo
targets:
  targetGroups: {west: arn:aws:elasticloadbalancing:us-east-1:1:targetgroup/west/1}
steps:
  - action: cycle
    pool: west
    batch: 2
    budgte: 4
`
    expect(inputErrorOf(() => parseRunbook('typo.yaml', text)).problems).toEqual(["typo.yaml:8:5: steps[0]: unknown key 'budgte' (did you mean 'budget'?)"])
  })

  it('an unknown key with no near match is named without a guess', () => {
    const text = `name: far
${twoRegionsTargets}steps:
  - action: unfreeze
    colour: blue
`
    expect(inputErrorOf(() => parseRunbook('far.yaml', text)).problems).toEqual(["far.yaml:11:5: steps[0]: unknown key 'colour'"])
  })

  it('once the schema passes, every check beyond it, in file order', () => {
    const text = `name: semantic
${twoRegionsTargets}steps:
  - action: restrict
    type: background-sync
    paths: [/sync/*]
  - action: ramp
    set: api-north
    schedule: [5, 150]
    bake: 60
  - action: check
    gate: {metric: error-rate, threshold: 300}
`
    expect(inputErrorOf(() => parseRunbook('semantic.yaml', text)).problems).toEqual([
      "semantic.yaml:10:5: steps[0]: a restrict step needs targets.listener (the load balancer listener its rules go on) or targets.haproxy.restrictMap (the map of HAProxy's restriction snippet)",
      'semantic.yaml:14:10: steps[1].set: no weighted set "api-north" in targets.dns.sets; it has api-east, api-west',
      'semantic.yaml:15:19: steps[1].schedule[1]: expected a weight of at most 100%, got 150%',
      'semantic.yaml:18:43: steps[2].gate.threshold: expected an error rate in % (0–100), got 300',
    ])
  })
})
