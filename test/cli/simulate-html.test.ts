import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-compare-html-'))

describe('sluice simulate --compare --html (in process)', () => {
  it('saves a page with every setup: its figures as --json reports them, and the charts inline', async () => {
    const page = join(dir, 'compare.html')
    const args = ['simulate', '--scenario', 'outlook-2026', '--compare', '--seed', '7']
    const [run, json] = await Promise.all([sluice([...args, '--html', page]), sluice([...args, '--json'])])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(`page saved to ${page}`)
    expect(existsSync(page)).toBe(true)
    const html = readFileSync(page, 'utf8')
    expect(html).toMatch(/^<!doctype html>/)
    expect(html.trimEnd().endsWith('</body></html>')).toBe(true)
    // One chart document with a panel per setup, inline.
    expect(html.match(/<svg /g)).toHaveLength(1)
    expect(html).toContain('<svg role="img" xmlns="http://www.w3.org/2000/svg"')
    const setups: Array<{name: string; lostPercent: number; minInRotation: number}> = JSON.parse(json.stdout).setups
    expect(setups.length).toBeGreaterThan(1)
    for (const s of setups) {
      const row = new RegExp(`<tr><td>${s.name}</td><td>[^<]*</td><td>${s.lostPercent.toFixed(1)}%</td><td>[^<]*</td><td>${s.minInRotation}</td>`)
      expect(html, s.name).toMatch(row)
      expect(html).toContain(`outlook-2026 · ${s.name}`)
    }
  })
})
