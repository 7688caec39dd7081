import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

// Issue 48: "no capacity of … stated" was printed twice on one line of a ramped way back's plan:
// once as why it goes back through the weights it passed, once more as why it is not sized by capacity.
describe('a ramped way back with no capacity stated (in process)', () => {
  it('says once, on its plan line, that no capacity is stated', async () => {
    const r = await sluiceInProcess(['run', 'regional-dns-ramp', '--dry-run', '--rollback', 'ramped'])
    expect(r.exit, r.stderr).toBe(0)
    const lines = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes('no capacity of'))
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line.match(/no capacity of/g), line).toHaveLength(1)
    expect(lines.join('\n')).toContain('back through the weights the run passed (no capacity of api-east stated in targets.capacityPerTarget to size steps by)')
  })
})
