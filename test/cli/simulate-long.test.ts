import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-long-'))

/**
 * Past the record's bound of 40,000 points (and past 62,000 s, where spreading a series into
 * Math.max overflowed the stack): every output runs, from a bounded record. 200,000 s keeps the
 * test quick; the same path runs to the 3,600,000 s limit.
 */
const long = '200000'

describe('sluice simulate at any length', () => {
  it("prints the table and a chart that says each point's resolution", async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026', '--duration', long])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^no-guard\s+93 rps \(6%\)/m)
    expect(stdout).toContain('outlook-2026 · no-guard (each point the mean of 8 s, drawn with its lowest and highest tick)')
    expect(stdout).toMatch(/[\u2801-\u28ff]/)
  })

  it("--json: bounded series at their resolution, with each point's range, and the fault's figures exact; --svg draws the range", async () => {
    const svg = join(dir, 'long.svg')
    const [longRun, shortRun] = await Promise.all([
      sluice(['simulate', '--scenario', 'outlook-2026', '--duration', long, '--json', '--svg', svg]),
      sluice(['simulate', '--scenario', 'outlook-2026', '--json']),
    ])
    expect(longRun.code, longRun.stderr).toBe(0)
    const json = JSON.parse(longRun.stdout)
    const short = JSON.parse(shortRun.stdout)
    const {series} = json.setups[0]
    expect(series.resolutionSeconds).toBe(8)
    expect(series.t).toHaveLength(25_000)
    expect(series.t.slice(0, 3)).toEqual([0, 8, 16])
    for (const key of ['demand', 'offered', 'served', 'inRotation']) {
      expect(series[key]).toHaveLength(25_000)
      expect(series.low[key]).toHaveLength(25_000)
      expect(series.high[key]).toHaveLength(25_000)
    }
    // A stuck pool swings between nothing and everything within a point: the range keeps both.
    expect(Math.min(...series.low.served)).toBe(0)
    expect(Math.max(...series.high.served)).toBe(1500)
    // The fault is the same 180 s in both runs, and its figure is taken tick by tick, not from the points.
    expect(json.setups[0].meanServedDuringFault).toBe(short.setups[0].meanServedDuringFault)
    expect(short.setups[0].series.resolutionSeconds).toBe(1)
    expect(short.setups[0].series).not.toHaveProperty('low')
    const drawn = readFileSync(svg, 'utf8')
    expect(drawn).toContain('<polygon')
    expect(drawn.trimEnd().endsWith('</svg>')).toBe(true)
  })

  it('a rehearsal against a long scenario writes its --svg and --html', async () => {
    const scenario = join(dir, 'outlook-recovery-long.yaml')
    writeFileSync(scenario, readFileSync('scenarios/outlook-recovery.yaml', 'utf8').replace(/^duration: .*$/m, `duration: ${long}`))
    const html = join(dir, 'long.html')
    const svg = join(dir, 'rehearsal.svg')
    const {code, stderr} = await sluice([
      'run',
      'runbooks/outlook-staged-return.yaml',
      '--dry-run',
      '--json',
      '--scenario',
      scenario,
      '--html',
      html,
      '--svg',
      svg,
    ])
    expect(code, stderr).toBe(0)
    expect(readFileSync(html, 'utf8')).toContain('</html>')
    expect(readFileSync(svg, 'utf8')).toContain('</svg>')
  })

  it('refuses a --duration past 1,000 h, naming the flag and the limit', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'outlook-2026', '--duration', '3600001'])
    expect(code).toBe(2)
    expect(stdout).toBe('')
    expect(stderr.trim()).toBe('Error: --duration: expected at most 3600000 s but received: 3600001')
  })
})

describe('sluice simulate --scenario retry-storm --compare', () => {
  it('shows retries tripling the load without a budget and a 10% budget holding it near 1.1×', async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'retry-storm', '--compare'])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/load during fault/)
    expect(stdout).toMatch(/^no-budget .*\s2\.99×$/m)
    expect(stdout).toMatch(/^budget-10 .*\s1\.10×$/m)
  })

  it("--json: each setup's clients and its load amplification", async () => {
    const {code, stdout, stderr} = await sluice(['simulate', '--scenario', 'retry-storm', '--compare', '--json'])
    expect(code, stderr).toBe(0)
    const setups = JSON.parse(stdout).setups as Array<{name: string; policy: {clients?: unknown}; loadAmplificationDuringFault: number}>
    expect(setups.map((s) => [s.name, s.policy.clients, s.loadAmplificationDuringFault])).toEqual([
      ['no-budget', {retryBudget: null}, 2.994],
      ['budget-10', {retryBudget: 0.1}, 1.1],
    ])
  })
})
