import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {rehearsalFigures, rehearsalHtml, rehearsalSvg} from '../../src/report/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {RecordingIO} from '../helpers/fakes.js'

/** What `run --dry-run --json` prints of a rehearsal (src/cli/run-runbook.ts), and its SVG and HTML reports. */
async function outputs(file: string): Promise<{json: string; svg: string; html: string}> {
  const {run, rehearsal} = await rehearse(
    loadRunbookFile(file),
    {operator: 'test', io: new RecordingIO('no-tty'), signal: new AbortController().signal},
    {pace: null},
  )
  const json = JSON.stringify(
    {runbook: run.runbook, outcome: run.outcome, message: run.message, stoppedAt: run.stoppedAt, steps: run.steps, report: rehearsalFigures(rehearsal)},
    null,
    2,
  )
  return {json, svg: rehearsalSvg(rehearsal), html: rehearsalHtml(rehearsal)}
}

describe('a rehearsal is byte-reproducible: the same runbook, scenario and seed give the same output', () => {
  for (const file of readdirSync('runbooks')
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    it(file, async () => {
      const first = await outputs(join('runbooks', file))
      const second = await outputs(join('runbooks', file))
      expect(second.json).toBe(first.json)
      expect(second.svg).toBe(first.svg)
      expect(second.html).toBe(first.html)
    })
  }

  it('takes the freeze time from the virtual clock: the scenario second the freeze step ran', async () => {
    const {run} = await rehearse(
      loadRunbookFile('runbooks/outlook-staged-return.yaml'),
      {operator: 'test', io: new RecordingIO('no-tty'), signal: new AbortController().signal},
      {pace: null},
    )
    const freeze = run.steps.find((s) => s.action === 'freeze')!
    const unfreeze = run.steps.find((s) => s.action === 'unfreeze')!
    const since = new Date(freeze.startedAt! * 1000).toISOString()
    expect(since.startsWith('1970-01-01T')).toBe(true)
    expect(unfreeze.message).toContain(`frozen since ${since} by test in run rehearsal`)
  })
})
