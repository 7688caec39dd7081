import {readFileSync, readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseRunbook} from '../../src/runbook/load.js'
import {editRamps} from '../../src/tune/yaml.js'

const file = 'runbooks/outlook-staged-return.yaml'
const text = readFileSync(file, 'utf8')

describe('tune: the tuned runbook as text', () => {
  it('leaves every shipped runbook byte for byte as it was when nothing is edited', () => {
    for (const name of readdirSync('runbooks').filter((f) => f.endsWith('.yaml'))) {
      const original = readFileSync(`runbooks/${name}`, 'utf8')
      expect(editRamps(original, []).text, name).toBe(original)
    }
  })

  it('changes only the edited ramps\' schedule and bake lines, keeping every comment', () => {
    const {text: tuned} = editRamps(text, [{index: 4, schedule: [10, 30], bake: 45}, {index: 7, schedule: [60, 80, 100], bake: 35}])
    const before = text.split('\n')
    const after = tuned.split('\n')
    expect(after).toHaveLength(before.length)
    const changed = before.flatMap((line, i) => (line === after[i] ? [] : [[line.trim(), after[i].trim()]]))
    expect(changed).toEqual([
      ['schedule: [1, 5, 25, 50]', 'schedule: [10, 30]'],
      ['bake: 90', 'bake: 45'],
      ['schedule: [75, 100]', 'schedule: [60, 80, 100]'],
      ['bake: 90', 'bake: 35'],
    ])
    const loaded = parseRunbook(file, tuned)
    expect(loaded.steps.flatMap((s) => (s.action === 'ramp' ? [[s.schedule, s.bake]] : []))).toEqual([[[100], 60], [[10, 30], 45], [[60, 80, 100], 35]])
  })

  it('adds a bake the step took from the defaults, and replaces a linear schedule with the list', () => {
    const source = text.replace('    schedule: [75, 100]\n    bake: 90\n', '    schedule: {linear: {from: 60, to: 100, steps: 5}}\n')
    expect(parseRunbook(file, source).steps[7]).toMatchObject({schedule: [60, 70, 80, 90, 100], bake: 60})
    const {text: tuned} = editRamps(source, [{index: 7, schedule: [70, 100], bake: 40}])
    expect(parseRunbook(file, tuned).steps[7]).toMatchObject({schedule: [70, 100], bake: 40})
  })

  it('gives the edited steps alone, at the file\'s indentation, each naming the step it replaces', () => {
    const {snippet} = editRamps(text, [{index: 4, schedule: [10, 30], bake: 45}])
    expect(snippet.split('\n')).toEqual([
      '  # steps[4]',
      '  - action: ramp',
      '    name: Bring half the traffic back to the mailbox pool',
      '    set: mailbox',
      '    schedule: [10, 30]',
      '    bake: 45',
      '    gate:',
      '      metric: error-rate',
      '      threshold: 2',
      '      pool: mailbox',
    ])
  })
})
