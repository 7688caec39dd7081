import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

// Issue 48: at 80 columns the `simulate --compare` table was 110 wide and wrapped; its long column
// names now break over lines of their own, and no figure or setup name is cut.
describe('simulate --compare at 80 columns (in process)', () => {
  it('fits its table, every figure and name whole, the names of the columns over two or three lines', async () => {
    const narrow = await sluiceInProcess(['simulate', '--scenario', 'outlook-2026', '--compare'], {env: {COLUMNS: '80'}})
    const wide = await sluiceInProcess(['simulate', '--scenario', 'outlook-2026', '--compare'], {env: {COLUMNS: '200'}})
    expect(narrow.exit, narrow.stderr).toBe(0)
    const tableOf = (stdout: string) => {
      const lines = stdout.split('\n')
      const rule = lines.findIndex((l) => l.startsWith('───'))
      const start = lines.indexOf('') + 1
      return {header: lines.slice(start, rule), rows: lines.slice(rule + 1, lines.indexOf('', rule))}
    }
    const n = tableOf(narrow.stdout)
    const w = tableOf(wide.stdout)
    for (const line of [...n.header, ...n.rows]) expect([...line].length, line).toBeLessThanOrEqual(80)
    // The scenario's line above it too, broken between clauses.
    const above = narrow.stdout.split('\n').slice(0, narrow.stdout.split('\n').indexOf(''))
    expect(above.join(' ').replace(/;\s+/g, '; ')).toBe(wide.stdout.split('\n')[0])
    for (const line of above) expect([...line].length, line).toBeLessThanOrEqual(80)
    // The same cells, only closer together.
    expect(n.rows.map((r) => r.split(/\s{2,}/))).toEqual(w.rows.map((r) => r.split(/\s{2,}/)))
    expect(n.rows.map((r) => r.split(/\s{2,}/)[0])).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
    // Wide, one line of names; narrow, the names broken at spaces, every word whole.
    expect(w.header).toEqual(['setup                served during fault  lost   full service after fix  fewest in rotation  load during fault'])
    expect(n.header.length).toBeGreaterThan(1)
    const words = n.header.flatMap((l) => l.trim().split(/\s+/))
    expect(words.sort()).toEqual('setup served during fault lost full service after fix fewest in rotation load during fault'.split(' ').sort())
  })
})
