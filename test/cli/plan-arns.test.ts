import {describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('plan-arns')

describe('sluice plan names resources by name (in process)', () => {
  it('shortens every ARN; --wide and --json give them whole', async () => {
    const [short, wide, json] = await Promise.all([
      sluice(['plan', 'outlook-staged-return']),
      sluice(['plan', 'outlook-staged-return', '--wide']),
      sluice(['plan', 'outlook-staged-return', '--json']),
    ])
    for (const r of [short, wide, json]) expect(r.code, r.stderr).toBe(0)
    expect(short.stdout).not.toContain('arn:aws')
    expect(short.stdout).toContain('mailbox (targetgroup/mailbox) in batches of 25%')
    expect(short.stdout).toContain('on listener/outlook-edge/f2f7dc8efc522ab2')
    expect(wide.stdout).toContain('mailbox (arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/mailbox/6d0ecf831eec9f09) in batches')
    expect(json.stdout).toContain('arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/outlook-edge/50dc6c495c0c9188/f2f7dc8efc522ab2')
    // Every line that names an ARN is shorter than its --wide self.
    const named = (text: string) => text.split('\n').filter((l) => /targetgroup\/|listener\//.test(l))
    expect(named(short.stdout).length).toBeGreaterThan(2)
    named(short.stdout).forEach((line, k) => expect(line.length).toBeLessThan(named(wide.stdout)[k].length))
  })
})
