import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {isolatedEnv} from '../helpers/cli.js'
import {commands} from '../helpers/single-action-cases.js'
import {sluiceInProcess} from '../helpers/command.js'
import {ontoWestRunbook} from '../helpers/onto-west.js'
import {renderLiveRun} from '../../src/report/rehearsal.js'

// Issue 48: a rehearsal's outcome is its first and last lines, in one or two sentences: what the
// runbook did from its own start, then whether it would be safe to run. A single action rehearsed
// says what it does, not a whole scenario report.
const isolated = isolatedEnv('outcome')
const savedEnv = Object.fromEntries(Object.keys(isolated).map((k) => [k, process.env[k]]))
beforeAll(() => {
  Object.assign(process.env, isolated)
})
afterAll(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

const lines = (stdout: string): string[] => stdout.replace(/\n+$/, '').split('\n')

describe('a rehearsal report leads and ends with its outcome (in process)', () => {
  it('a recovering runbook: what it did from its own start, and safe to run; the same two lines last', async () => {
    const r = await sluiceInProcess(['run', 'outlook-staged-return', '--dry-run'])
    expect(r.exit, r.stderr).toBe(0)
    const out = lines(r.stdout)
    expect(out[0]).toBe('outlook-staged-return did all 10 steps in 1354 s: service back to full 1056 s after its start.')
    expect(out[1]).toMatch(/^Safe to run as rehearsed: every gate passed \(\d+ verdicts\)\.$/)
    // Drawn by default, on ten seeds: the verdict over them is the third line.
    expect(out[2]).toBe('Over 10 seeds (1–10), arrivals and service times drawn: safe on 10 of 10.')
    // The outage before the runbook is not the headline: its figures come later, labelled.
    expect(out.slice(0, 3).join('\n')).not.toMatch(/requests lost|peak error rate|fewest in rotation/)
    expect(out.slice(-3)).toEqual(out.slice(0, 3))
    // The chart is above the last lines, not below them.
    expect(out.at(-4)).toBe('')
    expect(out.at(-5)).toMatch(/completed \(rps\)/)
  })

  it('a runbook a gate stops: where it stopped, and not safe, naming the gate', async () => {
    const r = await sluiceInProcess(['run', 'naive-full-return', '--dry-run'])
    expect(r.exit).toBe(3)
    const out = lines(r.stdout)
    expect(out[0]).toMatch(
      /^naive-full-return held at step 1 \(Restart the whole pool at once\) after 150 s: 0% of demand completed at its end, 0% at its start\.$/,
    )
    expect(out[1]).toMatch(/^Not safe to run as written: gate returned targets healthy within 120 s failed .*threshold 100%\.$/)
    expect(out[2]).toMatch(/^Over 10 seeds \(1–10\), arrivals and service times drawn: safe on 0 of 10; seed 1 held at step 1 /)
    expect(out.slice(-3)).toEqual(out.slice(0, 3))
  })

  it('safe on the seed shown but not on another: the second line says so, and never "safe to run"', async () => {
    // A shift onto a cold pool behind a 0.6% gate: drawn, seed 2 fails it. (At 1% seed 6 failed,
    // until each bake began once the split was seen served, 10 s later and on warmer servers.)
    const file = ontoWestRunbook('onto-west', '{metric: error-rate, threshold: 0.6, window: 30, interval: 10, pool: west, minRequests: 300}')
    const page = join(mkdtempSync(join(tmpdir(), 'sluice-outcome-')), 'rehearsal.html')
    const r = await sluiceInProcess(['run', file, '--dry-run', '--html', page])
    expect(r.exit).toBe(3)
    const out = lines(r.stdout)
    expect(out[0]).toMatch(/^onto-west did its step in \d+ s/)
    expect(out[1]).toMatch(/^Safe on the seed shown only: every gate passed \(\d+ verdicts\).*; not on every seed:$/)
    expect(out[2]).toMatch(/^Over 10 seeds \(1–10\), arrivals and service times drawn: safe on 9 of 10; seed 2 stopped on a failed gate at step 1 /)
    expect(r.stdout).not.toContain('Safe to run')
    // The page leads with the same three lines (it once led with the shown seed's "Safe to run as rehearsed").
    const html = readFileSync(page, 'utf8')
    const outcome = [...html.matchAll(/<p class="outcome"><b>(.*?)<\/b><\/p>/g)].map((m) => m[1].replaceAll('&amp;', '&'))
    expect(outcome).toEqual(out.slice(0, 3).map((l) => l.replaceAll('&lt;', '<')))
    expect(html).not.toContain('Safe to run')
  })

  it('a live run ends with its outcome line too', () => {
    const text = renderLiveRun({
      runbook: 'rb',
      outcome: 'held',
      message: 'step 1 (x): held',
      stoppedAt: {step: 0, title: 'x', message: 'held'},
      steps: [{index: 0, action: 'wait', title: 'x', status: 'held', message: 'held', verdicts: [], startedAt: 0, endedAt: 1}],
    })
    expect(lines(text).at(-1)).toBe('Outcome: held — step 1 (x): held')
  })
})

describe('a single action rehearsed says what it does, not the scenario (in process)', () => {
  const byName = Object.fromEntries(commands.map((c) => [c.name, c.args]))

  it.each([
    ['freeze', /^sluice freeze \(rehearsed; nothing live changed\) done: frozen by .*: x\.\nIt changes no traffic; run it without --dry-run to do it\.$/],
    [
      'unfreeze',
      /^sluice unfreeze \(rehearsed; nothing live changed\) done: nothing to unfreeze: no freeze in place\.\nIt changes no traffic; run it without --dry-run to do it\.$/,
    ],
    [
      'restrict',
      /^sluice restrict \(rehearsed; nothing live changed\) done: background-sync traffic now gets 503 with Retry-After: \d+\.\nOn the rehearsal fleet it took effect at once: background-sync restricted at its end \([\d.]+% of demand turned away\)\.$/,
    ],
    [
      'lift',
      /^sluice lift \(rehearsed; nothing live changed\) done: nothing to lift: background-sync is not restricted\.\nOn the rehearsal fleet it took effect at once: nothing restricted at its end\.$/,
    ],
  ])('%s --dry-run: two lines, no scenario report', async (name, expected) => {
    const r = await sluiceInProcess([...byName[name], '--dry-run'])
    expect(r.exit, r.stderr).toBe(0)
    expect(r.stdout.trimEnd()).toMatch(expected)
    expect(r.stdout).not.toMatch(/Recovered:|requests lost|Whole scenario|completed \(rps\)/)
  })

  it('ramp --dry-run: what it did on the fleet and its gates, the outcome first and last', async () => {
    const r = await sluiceInProcess([...byName.ramp, '--dry-run'])
    expect(r.exit, r.stderr).toBe(0)
    const out = lines(r.stdout)
    expect(out[0]).toBe('sluice ramp (rehearsed; nothing live changed) done: west at 50%.')
    expect(out[1]).toMatch(
      /^On the rehearsal fleet, over \d+ s: [\d.]+% of demand completed before it, [\d.]+% after; nothing restricted at its end; every gate passed \(\d+ verdicts\)\.$/,
    )
    expect(out.filter((l) => l.startsWith('  step 1 · west '))).toHaveLength(4)
    expect(out.slice(-2)).toEqual(out.slice(0, 2))
    expect(r.stdout).not.toMatch(/Recovered:|requests lost|Whole scenario|completed \(rps\)/)
  })

  it('cycle --dry-run with no gate: what it did on the fleet, and that no gate judged it', async () => {
    const r = await sluiceInProcess([...byName.cycle, '--dry-run'])
    expect(r.exit, r.stderr).toBe(0)
    expect(lines(r.stdout)).toEqual([
      'sluice cycle (rehearsed; nothing live changed) done: cycled 20 targets in 10 batches.',
      expect.stringMatching(
        /^On the rehearsal fleet, over \d+ s: [\d.]+% of demand completed before it, [\d.]+% after; nothing restricted at its end; no gate judged it\.$/,
      ),
    ])
  })

  it('keeps the chart for --svg: the whole rehearsal drawn, completed requests against demand', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-outcome-')), 'ramp.svg')
    const r = await sluiceInProcess([...byName.ramp, '--dry-run', '--svg', file])
    expect(r.exit, r.stderr).toBe(0)
    const svg = readFileSync(file, 'utf8')
    expect(svg).toMatch(/<polyline/)
    expect(svg).toContain('completed')
    expect(svg).toContain('demand')
  })
})
