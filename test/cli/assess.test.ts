import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'

const sluice = isolatedInProcess('assess')

interface AssessJson {
  region: string
  out: number
  backInSeconds: number | null
  stuckAboveDemand: number | null
  stuckOut: Array<[number, number]>
  levers: Array<{kind: string; what: string; command?: string; value: number | null; holds: boolean; backInSeconds: number | null}>
  map: unknown
  sentences: string[]
  watchedSeconds: number
}

/**
 * The question assess asks of outlook-2026 (20 × 100 rps, checks every 10 s, ejection 30–300 s),
 * written out by hand: 6 servers broken from 30 s and fixed at 90 s, at 1,500 rps, watched 620 s
 * after. `simulate` runs it, so a lever assess proposes is confirmed by another path than its own.
 */
function questionFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-assess-')), 'question.yaml')
  writeFileSync(
    file,
    `name: outlook-now
duration: 710
model: seed
pools: [{name: mailbox, servers: 20, capacity: 100}]
demand: {rps: 1500}
healthCheck: {interval: 10, baseEjection: 30, maxEjection: 300}
faults: [{kind: broken, servers: 6, from: 30, to: 90}]
setups: {no-guard: {}}
`,
  )
  return file
}

describe('sluice assess (in process): a pool placed on the map of its scenario, the trigger fixed now', () => {
  it('says STUCK for 6 of 20 out at 1,500 rps (the Outlook cascade), how far from the edge, and levers the simulator confirms; exit 3', async () => {
    const out = await sluice(['assess', '--scenario', 'outlook-2026', '--setup', 'no-guard', '--demand', '1500', '--in-rotation', '14', '--quick', '--json'])
    expect(out.code, out.stderr).toBe(3)
    const a = JSON.parse(out.stdout) as AssessJson
    expect(a.region).toBe('stuck')
    expect(a.out).toBe(6)
    expect(a.backInSeconds).toBeNull()
    expect(a.map).toBeNull()
    // The seed's map at 1,500 rps: stuck from 6 to 14 of 20 broken (docs/simulate.md).
    expect(a.stuckOut).toEqual([[6, 14]])
    expect(a.stuckAboveDemand!).toBeLessThan(1500)
    expect(a.stuckAboveDemand!).toBeGreaterThan(1300)
    const cap = a.levers.find((l) => l.kind === 'cap')!
    expect(cap.holds).toBe(true)
    const shed = a.levers.find((l) => l.kind === 'shed')!
    expect(shed.holds).toBe(true)
    expect(shed.value!).toBeGreaterThan(0)
    expect(shed.value!).toBeLessThan(20)

    // The simulator, through simulate, on the same question: stuck as it stands, back with the cap assess found.
    const file = questionFile()
    const run = async (policy?: string) => {
      const r = await sluice(['simulate', '--scenario', file, ...(policy ? ['--policy', policy] : []), '--json'])
      expect(r.code, r.stderr).toBe(0)
      return (JSON.parse(r.stdout) as {setups: Array<{recoveredSecondsAfterFix: number | null}>}).setups[0].recoveredSecondsAfterFix
    }
    expect(await run()).toBeNull()
    expect(await run(`maxEjectionPercent=${cap.value}`)).not.toBeNull()

    const text = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick'])
    expect(text.code).toBe(3)
    expect(text.stdout).toContain(
      'STUCK: with 6 of 20 servers out of rotation at 1,500 rps, fixing the trigger now would not bring it back on its own: the model of outlook-2026 is still short of full service 620 s after the fix.',
    )
    expect(text.stdout).toContain('At 1,500 rps it is stuck with 6–14 of 20 servers broken (now 6).')
    expect(text.stdout).toMatch(/The smallest lever that gets it out: .+, back at full service \d+ s after\./)
    expect(text.stdout).toContain('Levers, each checked by simulation from now, the trigger fixed now (setup no-guard):')
    expect(text.stdout).not.toContain('The map:')
  }, 60_000)

  it('says UNHARMED with every server in (exit 0); with all 20 out, places the pool where the fewest broken servers take it (stuck, exit 3) unless told the trigger broke all 20 (recovering: they come back together, exit 0)', async () => {
    const whole = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '20', '--quick'])
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.stdout).toContain('UNHARMED: every server in rotation at 1,500 rps, 0% errors.')
    expect(whole.stdout).toContain('At 1,500 rps it is stuck with 6–14 of 20 servers broken (now 0): 6 more broken and it tips.')
    // All 20 out at 1,500 rps: six broken servers are enough to take the whole pool out (the seed's cascade), so that is where it is.
    const all = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '0', '--quick', '--json'])
    expect(all.code, all.stderr).toBe(3)
    const a = JSON.parse(all.stdout) as AssessJson & {outNow: number}
    expect(a).toMatchObject({region: 'stuck', outNow: 20, out: 6})
    expect(a.sentences[0]).toContain('(a trigger that broke 6 takes the pool there; the rest went out in the cascade)')
    // Any count from 6 to 20 takes the pool down to none in rotation; which one it was decides it.
    expect(a.sentences[1]).toBe(
      'How many the trigger broke decides it: stuck if it broke 6–14, back on its own if 15–20; placed at 6, the worst (--broken N if you know).',
    )
    // Told the trigger broke all 20, they are fixed and come back together: recovering.
    const twenty = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '0', '--broken', '20', '--quick', '--json'])
    expect(twenty.code, twenty.stderr).toBe(0)
    const b = JSON.parse(twenty.stdout) as AssessJson
    expect(b.region).toBe('recovering')
    expect(b.backInSeconds).not.toBeNull()
    expect(b.levers).toEqual([])
  }, 60_000)

  it('draws the map, servers out × demand, with the pool marked on the row of its demand', async () => {
    const out = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14'], {env: {COLUMNS: '120'}})
    expect(out.code, out.stderr).toBe(3)
    expect(out.stdout).toContain('The map: servers broken × demand, the trigger fixed at the same moment in every cell, watched 620 s after')
    const rows = out.stdout.split('\n').filter((l) => /[│┤]/.test(l) && l.includes('●'))
    expect(rows).toHaveLength(1)
    // Six servers out: the seventh cell (two characters each) of the row, on the stuck side of its edge.
    const cells = rows[0].slice(rows[0].search(/[│┤]/) + 1)
    expect([...cells][12]).toBe('●')
    expect(out.stdout).toContain('● the pool now')
  }, 60_000)

  it('saves the map as SVG with the pool and an arrow to where the smallest shed moves it, and the whole assessment as a page', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-assess-files-'))
    const svg = join(dir, 'map.svg')
    const html = join(dir, 'assess.html')
    const out = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--svg', svg, '--html', html])
    expect(out.code, out.stderr).toBe(3)
    const drawn = readFileSync(svg, 'utf8')
    expect(drawn.match(/class="mark"/g)).toHaveLength(2)
    expect(drawn.match(/class="lever"/g)).toHaveLength(1)
    expect(drawn).toContain('>now</text>')
    expect(drawn).toMatch(/>shed \d+%<\/text>/)
    expect(drawn).toContain(
      '● the pool now (6 broken at 1,500 rps); the arrow: the smallest shed that gets it out; the other levers that get it out change the map',
    )
    const page = readFileSync(html, 'utf8')
    expect(page).toContain('<h1>mailbox as described: STUCK</h1>')
    expect(page).toContain('<svg role="img"')
    expect(page).toContain('<th scope="col">gets it out</th>')
    const quick = await sluice(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick', '--svg', svg])
    expect(quick.code).toBe(2)
    expect(quick.stderr).toContain('--svg: not with --quick; it saves the map, which --quick leaves out; drop one of them')
  }, 60_000)

  it('as a runbook step: stops a rehearsal at the assess step when the pool is stuck (exit 3), goes on when it is not', async () => {
    const fixture = new URL('../fixtures/runbooks/assess-before-return.yaml', import.meta.url).pathname
    const stuck = await sluice(['run', fixture, '--dry-run'])
    expect(stuck.code, stuck.stderr).toBe(3)
    expect(stuck.stderr).toMatch(/\[step 1\] FAILED STUCK: with 20 of 20 servers out of rotation at 1,500 rps \(a trigger that broke 6 takes the pool there/)
    expect(stuck.stdout).toContain('2. [skipped] Go on with the return')
    // Before the fault (from 20 s), the same step finds the pool unharmed and the run goes on.
    const early = join(mkdtempSync(join(tmpdir(), 'sluice-assess-step-')), 'early.yaml')
    writeFileSync(early, readFileSync(fixture, 'utf8').replace('startAt: 200', 'startAt: 20'))
    const whole = await sluice(['run', early, '--dry-run'])
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.stderr).toContain('[step 1] done UNHARMED: every server in rotation at 1,500 rps')
    // A pool the targets do not have is said at its line and column, before anything runs.
    const bad = join(mkdtempSync(join(tmpdir(), 'sluice-assess-step-')), 'bad.yaml')
    writeFileSync(bad, readFileSync(fixture, 'utf8').replace('    pool: mailbox\n    scenario', '    pool: mailbx\n    scenario'))
    const refused = await sluice(['validate', bad])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/bad\.yaml:\d+:11: steps\[0\]\.pool: no pool with servers named "mailbx" in targets; pools with servers are mailbox/)
  }, 60_000)

  it('rehearses a runbook from now as a lever, as `run --dry-run` rehearses it against the same question', async () => {
    const out = await sluice([
      'assess',
      '--scenario',
      'outlook-2026',
      '--setup',
      'no-guard',
      '--demand',
      '1500',
      '--in-rotation',
      '14',
      '--quick',
      '--runbook',
      'naive-full-return',
      '--runbook',
      'outlook-staged-return',
      '--json',
    ])
    expect(out.code, out.stderr).toBe(3)
    const a = JSON.parse(out.stdout) as AssessJson
    const [naive, staged] = ['naive-full-return', 'outlook-staged-return'].map((name) => a.levers.find((l) => l.kind === 'runbook' && l.what.includes(name))!)
    // A runbook for other pools is a lever that does not apply, said why; the assessment goes on.
    expect(staged.holds).toBe(false)
    expect(staged.what).toMatch(/outlook-staged-return does not fit this pool: .*no pool "maintenance"; its pools are mailbox/)
    expect(naive.command).toBe('sluice run naive-full-return')

    // The same runbook rehearsed by `run --dry-run` against the question written out by hand, from the fix.
    const dir = mkdtempSync(join(tmpdir(), 'sluice-assess-runbook-'))
    const question = questionFile()
    const runbook = join(dir, 'naive.yaml')
    writeFileSync(
      runbook,
      readFileSync(join(import.meta.dirname, '../../runbooks/naive-full-return.yaml'), 'utf8').replace(
        /rehearsal:\n( {2}.*\n)+/,
        `rehearsal:\n  scenario: ${question}\n  setup: no-guard\n  startAt: 90\n`,
      ),
    )
    const rehearsed = await sluice(['run', runbook, '--dry-run', '--json'])
    const r = JSON.parse(rehearsed.stdout) as {report: {recovered: boolean; secondsFromFixToFull: number | null; startAt: number}}
    expect(r.report.startAt).toBe(90)
    expect(naive.holds).toBe(r.report.recovered)
    expect(naive.backInSeconds).toBe(r.report.secondsFromFixToFull)
  }, 60_000)

  it('refuses what it cannot place, naming the flag', async () => {
    const cases: Array<[string[], string]> = [
      [['--demand', '1500'], '--demand: needs --in-rotation; a described pool needs both --demand and --in-rotation'],
      [['--demand', '1500', '--in-rotation', '25'], "--in-rotation: expected at most the pool's 20 servers but received: 25"],
      [
        [],
        'missing one of --target-group and --load-balancer, --haproxy and --backend, --prometheus and --mapping, or --demand and --in-rotation; assess places one pool',
      ],
      [['--haproxy', '/run/haproxy.sock'], '--haproxy: needs --backend; a HAProxy pool is named by both --haproxy and --backend'],
      [
        ['--haproxy', '/run/haproxy.sock', '--backend', 'web', '--target-group', 'arn:x'],
        '--target-group: not with --haproxy or --backend; read one live pool: an ALB target group, a HAProxy backend or Prometheus, not both',
      ],
      [
        ['--demand', '1500', '--in-rotation', '5', '--watch', '10'],
        '--watch: needs --target-group and --load-balancer, --haproxy and --backend, or --prometheus and --mapping; it re-assesses a live pool',
      ],
      [['--demand', '1500', '--in-rotation', '5', '--broken', '30'], "--broken: expected at most the pool's 20 servers but received: 30"],
      [['--target-group', 'arn:x'], '--target-group: needs --load-balancer; a live pool is named by both --target-group and --load-balancer'],
    ]
    for (const [flags, message] of cases) {
      const out = await sluice(['assess', '--scenario', 'outlook-2026', ...flags])
      expect(out.code, flags.join(' ')).toBe(2)
      expect(out.stderr, flags.join(' ')).toContain(message)
    }
  }, 60_000)

  it('refuses to place a pool read with an impossible demand (below zero, or past what the model sums): exit 1, naming the value, no verdict and no lever', async () => {
    // At 60eccf4 a demand read as -5 rps was "STUCK" with the lever "turn away all of all traffic", exit 3.
    const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
    const fake = new FakePrometheus({end, truth: {servers: 8, capacity: 100, low: 300, high: 900, latencyFloor: 0.04}})
    const url = await fake.listen()
    try {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-assess-reading-'))
      const mapping = join(dir, 'mailbox-prometheus.yaml')
      writeFileSync(
        mapping,
        mappingText('envoy', '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'),
      )
      const scenario = join(dir, 'mailbox.yaml')
      writeFileSync(
        scenario,
        'name: mailbox\nduration: 600\npools: [{name: mailbox, servers: 8, capacity: 100}]\ndemand: {rps: 500}\nhealthCheck: {interval: 10, baseEjection: 30, maxEjection: 300}\nsetups: {as-configured: {}}\n',
      )
      for (const rps of [-5, 1e12]) {
        fake.now = {rps, healthy: 8, servers: 8, errorRate: 0}
        const out = await sluice(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick'])
        expect(out.code, `${rps}: ${out.stdout}${out.stderr}`).toBe(1)
        expect(out.stdout).toBe('')
        expect(out.stderr).toContain(String(rps))
        expect(out.stderr).not.toMatch(/STUCK|UNHARMED|RECOVERING|turn away/)
      }
    } finally {
      await fake.close()
    }
  }, 60_000)
})
