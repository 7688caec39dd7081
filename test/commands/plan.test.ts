import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'
import {root, sluiceInProcess} from '../helpers/command.js'

describe('sluice plan (in process)', () => {
  it('plan lists every step title, and --json has one entry per step', async () => {
    const file = 'runbooks/outlook-staged-return.yaml'
    const yamlSteps = (parse(readFileSync(`${root}${file}`, 'utf8')) as {steps: Array<Record<string, string> & {action: string}>}).steps
    // A step without a name gets the title load.ts gives its action.
    const defaultTitle = (s: Record<string, string>): string => {
      switch (s.action) {
        case 'freeze':
          return `Freeze changes: ${s.reason}`
        case 'cycle':
          return `Cycle ${s.pool} in batches of ${s.batch}`
        case 'lift':
          return `Lift the restriction on ${s.type} traffic`
        case 'unfreeze':
          return 'Lift the change freeze'
        default:
          throw new Error(`no default title for ${s.action} in this test`)
      }
    }
    const titles = yamlSteps.map((s) => s.name ?? defaultTitle(s))

    const text = await sluiceInProcess(['plan', `${root}${file}`])
    const json = await sluiceInProcess(['plan', `${root}${file}`, '--json'])
    expect(text.exit, text.stderr).toBe(0)
    const lines = text.stdout.split('\n')
    yamlSteps.forEach((s, i) => expect(lines, `step ${i + 1}`).toContain(`${i + 1}. ${titles[i]}  [${s.action}]`))
    expect(lines.filter((l) => /^\d+\. /.test(l))).toHaveLength(yamlSteps.length)

    expect(json.exit, json.stderr).toBe(0)
    const plan = JSON.parse(json.stdout) as {runbook: string; steps: Array<{index: number; action: string; title: string}>}
    expect(plan.runbook).toBe('outlook-staged-return')
    expect(plan.steps).toHaveLength(yamlSteps.length)
    expect(plan.steps.map((s) => s.title)).toEqual(titles)
    expect(plan.steps.map((s) => s.action)).toEqual(yamlSteps.map((s) => s.action))
  })
})
