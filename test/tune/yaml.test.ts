import {readFileSync, readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {aliasProblems, editRamps} from '../../src/tune/yaml.js'

const file = 'runbooks/outlook-staged-return.yaml'
const text = readFileSync(file, 'utf8')

describe('tune: the tuned runbook as text', () => {
  it('leaves every shipped runbook byte for byte as it was when nothing is edited', () => {
    for (const name of readdirSync('runbooks').filter((f) => f.endsWith('.yaml'))) {
      const original = readFileSync(`runbooks/${name}`, 'utf8')
      expect(editRamps(original, []).text, name).toBe(original)
    }
  })

  it("changes only the edited ramps' schedule and bake lines, keeping every comment", () => {
    const {text: tuned} = editRamps(text, [
      {index: 4, schedule: [10, 30], bake: 45},
      {index: 7, schedule: [60, 80, 100], bake: 35},
    ])
    const before = text.split('\n')
    const after = tuned.split('\n')
    expect(after).toHaveLength(before.length)
    const changed = before.flatMap((line, i) => (line === after[i] ? [] : [[line.trim(), after[i].trim()]]))
    expect(changed).toEqual([
      ['schedule: [1, 5, 25, 50]', 'schedule: [10, 30]'],
      ['bake: 90', 'bake: 45'],
      ['schedule: [60, 70, 80, 90, 100]', 'schedule: [60, 80, 100]'],
      ['bake: 90', 'bake: 35'],
    ])
    const loaded = parseRunbook(file, tuned)
    expect(loaded.steps.flatMap((s) => (s.action === 'ramp' ? [[s.schedule, s.bake]] : []))).toEqual([
      [[100], 60],
      [[10, 30], 45],
      [[60, 80, 100], 35],
    ])
  })

  it('adds a bake the step took from the defaults, and replaces a linear schedule with the list', () => {
    const source = text.replace('    schedule: [60, 70, 80, 90, 100]\n    bake: 90\n', '    schedule: {linear: {from: 60, to: 100, steps: 5}}\n')
    expect(parseRunbook(file, source).steps[7]).toMatchObject({schedule: [60, 70, 80, 90, 100], bake: 60})
    const {text: tuned} = editRamps(source, [{index: 7, schedule: [70, 100], bake: 40}])
    expect(parseRunbook(file, tuned).steps[7]).toMatchObject({schedule: [70, 100], bake: 40})
  })

  it("gives the edited steps alone, at the file's indentation, each naming the step it replaces", () => {
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

  it('edits through a gate shared by anchor and alias, and pastes the step with the alias written out', () => {
    const lines = text.split('\n')
    const gateAt = lines.findIndex((l, n) => n > 67 && /^ {4}gate:$/.test(l))
    const rest = lines.findIndex((l) => l.includes('name: Bring the rest'))
    const secondGate = lines.findIndex((l, n) => n > rest && /^ {4}gate:$/.test(l))
    expect(gateAt).toBeGreaterThan(0)
    expect(secondGate).toBeGreaterThan(gateAt)
    lines[gateAt] = '    gate: &errgate'
    // The second ramp's gate block becomes the alias.
    let end = secondGate + 1
    while (lines[end].startsWith('      ')) end++
    lines.splice(secondGate, end - secondGate, '    gate: *errgate')
    const aliased = lines.join('\n')
    expect(aliasProblems(aliased, [4, 7])).toEqual([])
    const edited = editRamps(aliased, [{index: 7, schedule: [80, 100], bake: 45}])
    expect(edited.text).toContain('    gate: *errgate')
    expect(parseRunbook(file, edited.text).steps[7]).toMatchObject({schedule: [80, 100], bake: 45, gate: {metric: 'error-rate', threshold: 2, pool: 'mailbox'}})
    expect(edited.snippet).not.toContain('*errgate')
    expect(edited.snippet).toMatch(/schedule: \[80,100\]|schedule: \[ 80, 100 \]|schedule: \[80, 100\]/)
    expect(edited.snippet).toContain('metric: error-rate')
  })

  it('names a ramp step, schedule or bake shared through an anchor, which it cannot edit in one place only', () => {
    const shared = `name: shared
steps:
  - &ramp {action: ramp, set: a, schedule: [10, 100], bake: &bake 60}
  - {action: ramp, set: a, schedule: [50, 100], bake: *bake}
  - *ramp
`
    expect(aliasProblems(shared, [0, 1, 2])).toEqual([
      {path: ['steps', 0], message: expect.stringMatching(/^steps\[0\] is anchored as &ramp, which \*ramp repeats elsewhere; tune edits each ramp in place/)},
      {path: ['steps', 1, 'bake'], message: expect.stringMatching(/^steps\[1\]\.bake is \*bake, an alias of a node defined elsewhere;/)},
      {path: ['steps', 2], message: expect.stringMatching(/^steps\[2\] is \*ramp, an alias of a node defined elsewhere;/)},
    ])
  })
})
