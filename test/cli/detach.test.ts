import {describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('detach')

// What `run --detach` refuses before it starts anything (the detached run itself, on HAProxy, is
// test/browser/detached-haproxy.test.ts).
describe('sluice run --detach, refused', () => {
  it('without --yes: a detached run has no terminal to confirm its plan on', async () => {
    const r = await sluice(['run', 'drill-cold-return', '--detach'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--detach: needs --yes; a detached run has no terminal to confirm its plan on/)
  })

  it('with --dry-run: a rehearsal is run here', async () => {
    const r = await sluice(['run', 'drill-cold-return', '--detach', '--yes', '--dry-run'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--detach: not with --dry-run; a rehearsal changes nothing and takes seconds: run it here/)
  })
})
