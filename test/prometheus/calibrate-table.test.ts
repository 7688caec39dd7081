import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

// Issue 48: piped (no terminal, no $COLUMNS: 80 wide), calibrate's table split names mid-word, a
// settings file's path broken across three lines on every row that cited it.
const sluice = isolatedInProcess('prometheus-table')
const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'

describe('sluice calibrate piped, against a fake Prometheus (in process)', () => {
  const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
  const fake = new FakePrometheus({end, truth})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-calibrate-table-with-a-long-folder-name-'))
  const mapping = join(dir, 'mailbox-prometheus.yaml')
  let url = ''
  beforeAll(async () => {
    url = await fake.listen()
    writeFileSync(mapping, mappingText('envoy', envoyChecks))
  })
  afterAll(() => fake.close())

  it('fits its table in 80 columns and never splits a name: every word of every source is printed whole', async () => {
    const args = ['calibrate', '--prometheus', url, '--mapping', mapping, '--window', '6h', '--until', new Date(end * 1000).toISOString()]
    const text = await sluice([...args, '--out', join(dir, 'mailbox.yaml')], {env: {COLUMNS: undefined}})
    expect(text.code, text.stderr).toBe(0)
    const json = await sluice([...args, '--json'])
    expect(json.code, json.stderr).toBe(0)
    const sources = Object.values((JSON.parse(json.stdout) as {figures: Record<string, {source: string} | null>}).figures).flatMap((f) => (f ? [f.source] : []))
    expect(sources.some((s) => s.includes(mapping))).toBe(true)
    const lines = text.stdout.split('\n')
    const table = lines.slice(1, lines.indexOf(''))
    expect(table.length).toBeGreaterThan(10)
    for (const line of table) expect([...line].length, line).toBeLessThanOrEqual(80)
    const printed = new Set(table.flatMap((l) => l.split(/\s+/)))
    // A path the line above the table names in full is cited by its file name in the table.
    expect(lines[0]).toContain(mapping)
    for (const word of sources.flatMap((s) => s.split(' '))) expect(printed.has(word) || printed.has(basename(word)), word).toBe(true)
  }, 120_000)
})
