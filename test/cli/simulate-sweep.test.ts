import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-sweep-'))
const seedMap = ['simulate', '--scenario', 'outlook-2026', '--sweep', 'broken=0..20', '--sweep', 'demand=500..2000']

/** Bad input: exit 2, one line on stderr naming the flag, nothing on stdout. */
async function expectBadInput(args: string[], message: RegExp) {
  const result = await sluice(args)
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(message)
}

/** The stuck / not-stuck cells of one setup's map, from --json. */
function counts(setup: {cells: Array<{outcome: string}>}): {stuck: number; fine: number} {
  const stuck = setup.cells.filter((c) => c.outcome === 'stuck').length
  return {stuck, fine: setup.cells.length - stuck}
}

describe('sluice simulate --sweep (in process)', () => {
  it('broken × demand on outlook-2026 draws four maps: no-guard stuck in a region, cap-shed-slow-start fine over a larger one; the tipping points in words', async () => {
    const svg = join(dir, 'map.svg')
    const html = join(dir, 'map.html')
    const {code, stdout, stderr} = await sluice([...seedMap, '--svg', svg, '--html', html])
    expect(code, stderr).toBe(0)
    const maps = Object.fromEntries(
      [...stdout.matchAll(/(?:^|\s)([a-z0-9-]+): (\d+) stuck, (\d+) recovered, (\d+) unharmed of 441/gm)].map((m) => [
        m[1],
        {stuck: Number(m[2]), fine: Number(m[3]) + Number(m[4])},
      ]),
    )
    expect(Object.keys(maps)).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
    expect(maps['no-guard'].stuck).toBeGreaterThan(0)
    expect(maps['cap-shed-slow-start'].fine).toBeGreaterThan(maps['no-guard'].fine)
    expect(stdout.match(/demand \(rps\)/g)).toHaveLength(4)
    expect(stdout.match(/broken servers \(of 20\)/g)).toHaveLength(4)
    expect(stdout).toContain('█ stuck: not back at full service by the end of the run (600 s, 360 s after the fix)')
    expect(stdout).toMatch(/^ {2}no-guard tips into a stuck pool when more than \d+ of 20 servers break at 1,500 rps/m)
    expect(stdout).toMatch(/^ {2}cap-shed-slow-start never tips into a stuck pool within the sweep at 1,500 rps: it holds up to 20 of 20 broken\.$/m)
    // Progress on stderr, off a terminal as a line a quarter; the files' notes after it.
    expect(stderr).toMatch(/^sweep grid: [\d,]+ of [\d,]+ cells done, 0 left$/m)
    expect(stderr).toContain(`maps saved to ${svg}`)
    expect(readFileSync(svg, 'utf8')).toMatch(/^<svg [^]*cap-shed-slow-start[^]*<\/svg>\n$/)
    expect(readFileSync(html, 'utf8')).toContain('<li>no-guard tips into a stuck pool')
  })

  it('--json carries the grid and the figures behind the sentences; 1 and 2 workers give byte-identical output', async () => {
    const small = ['simulate', '--sweep', 'broken=0..20:11', '--sweep', 'demand=500..2000:4', '--json']
    const [one, two] = await Promise.all([sluice([...small, '--workers', '1']), sluice([...small, '--workers', '2'])])
    expect(one.code, one.stderr).toBe(0)
    expect(two.code, two.stderr).toBe(0)
    expect(one.stderr).toBe('') // no progress under --json
    expect(one.stdout.length).toBeGreaterThan(5_000)
    expect(two.stdout).toBe(one.stdout)
    const json = JSON.parse(one.stdout)
    const byName = Object.fromEntries(json.setups.map((s: {name: string}) => [s.name, s]))
    expect(Object.keys(byName)).toEqual(['no-guard', 'cap-third', 'panic-50', 'cap-shed-slow-start'])
    expect(byName['no-guard'].cells).toHaveLength(44)
    expect(counts(byName['no-guard']).stuck).toBeGreaterThan(0)
    expect(byName['no-guard'].cells[0]).toEqual({x: 0, y: 500, outcome: 'unharmed', recoveredSecondsAfterFix: 0, meanServedDuringFault: 500})
    const tip = byName['no-guard'].tipping
    expect(tip.at).toEqual({param: 'demand', value: 1500})
    expect(tip.sentence).toBe(json.tippingPoints[0])
    // The grid steps by 2 servers; bisection finds the edge to one.
    expect(tip.sentence).toContain(`more than ${tip.holdsUpTo} of 20 servers break`)
    expect(tip.stuckFrom).toBe(tip.holdsUpTo + 1)
  })

  it('bad input names the flag and exits 2', async () => {
    await Promise.all([
      expectBadInput(['simulate', '--sweep', 'demand=2000..500'], /^Error: --sweep demand=2000\.\.500: expected FROM below TO/),
      expectBadInput(['simulate', '--sweep', 'brokn=0..20'], /^Error: --sweep brokn=0\.\.20: unknown parameter "brokn"; did you mean broken\?/),
      expectBadInput(['simulate', '--sweep', 'broken=0..30'], /^Error: --sweep broken=0\.\.30: expected at most the pool's 20 servers, got 30$/),
      // Once a hang at 100% CPU: the tipping-point bisection overflowed to Infinity.
      expectBadInput(
        ['simulate', '--sweep', 'demand=0..1.7e308:5'],
        /^Error: --sweep demand=0\.\.1\.7e308:5: expected a demand of at most 1,000,000,000 rps, got 1\.7e\+308$/,
      ),
      expectBadInput(['simulate', '--broken', '3', '--sweep', 'broken=0..20'], /^Error: --broken: the sweep varies broken/),
    ])
  })

  it('--svg says "cannot write" only when the write fails', async () => {
    const {code, stderr} = await sluice(['simulate', '--sweep', 'broken=0..2', '--setup', 'no-guard', '--svg', join(dir, 'no-such-dir', 'map.svg')])
    expect(code).toBe(2)
    expect(stderr.trimEnd().split('\n').at(-1)).toBe(`Error: --svg: cannot write ${join(dir, 'no-such-dir', 'map.svg')}: ENOENT`)
  })
})
