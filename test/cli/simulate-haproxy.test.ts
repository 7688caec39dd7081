import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'

// The simulator's HAProxy checks as a user meets them: the shipped scenario, and a setup that asks
// HAProxy for a guard it does not have.
describe('sluice simulate with HAProxy checks', () => {
  it('--scenario outlook-2026-haproxy --compare: both setups cascade to none in rotation and recover', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026-haproxy', '--compare'])
    expect(code, stderr).toBe(0)
    const rows = stdout.split('\n').filter((l) => /^(no-guard|observe-layer7) /.test(l))
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual(['no-guard', 'observe-layer7'])
    // full service after fix (in seconds, to a tenth), fewest in rotation, load during the fault
    for (const row of rows) expect(row).toMatch(/\s\d+(\.\d)? s\s+0\s+1\.00×$/)
    expect(stdout.match(/^outlook-2026-haproxy · /gm)).toHaveLength(2)
  })

  it('a haproxy setup with panicThreshold: exit 2, one line naming file:line:column', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-haproxy-cli-')), 'panic.yaml')
    writeFileSync(
      file,
      'name: p\npools:\n  - name: web\n    servers: 4\n    capacity: 50\ndemand:\n  rps: 100\nhealthCheck: {kind: haproxy}\nsetups:\n  panic:\n    panicThreshold: 50\n',
    )
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', file])
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`^Error: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:11:21: setups\\.panic\\.panicThreshold: .*HAProxy has none`))
  })
})
