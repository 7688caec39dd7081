import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {twoRegionsTargets} from '../helpers/bad-runbooks.js'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('validate-problems')

const text = `name: Three-Problems
${twoRegionsTargets}steps:
  - action: ramp
    set: api-west
    schedul: [5, 25, 50]
    bake: 60
  - action: check
    gate: {metric: error-rate, threshold: 2, window: forever}
`

describe('sluice validate on a runbook with three problems', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-validate-problems-')), 'three.yaml')
  writeFileSync(file, text)
  const expected = [
    `${file}:1:7: name: expected a lower-case name of letters, digits and dashes`,
    `${file}:12:5: steps[0]: unknown key 'schedul' (did you mean 'schedule'?)`,
    `${file}:15:54: steps[1].gate.window: expected a duration such as 30, 30s, 5m or 1h`,
  ]

  it('exits 2 with one stderr line per problem, in file order, then the count; nothing on stdout', async () => {
    const {code, stdout, stderr} = await sluice(['validate', file])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(`${[...expected, '1 of 1 runbooks are invalid'].join('\n')}\n`)
  })

  it('run prints the same problems, each as its own "Error: " line', async () => {
    const {code, stdout, stderr} = await sluice(['run', file, '--dry-run'])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toBe(expected.map((line) => `Error: ${line}\n`).join(''))
  })

  it('--json lists the problems apart and keeps error as all of them', async () => {
    const {code, stdout, stderr} = await sluice(['validate', file, '--json'])
    expect(code, stderr).toBe(2)
    expect(stderr).toBe('')
    const [result] = (JSON.parse(stdout) as {runbooks: Array<{valid: boolean; error: string; problems: string[]}>}).runbooks
    expect(result.valid).toBe(false)
    expect(result.problems).toEqual(expected)
    expect(result.error).toBe(expected.join('\n'))
  })
})
