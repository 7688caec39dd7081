import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {runRunbook} from '../../src/engine/engine.js'
import {control, FakeMetrics, RecordingIO, runbook} from '../helpers/fakes.js'

const noAbort = () => new AbortController().signal

describe('approve', () => {
  const approve = `  - action: approve\n    message: Bring traffic back?\n`

  it('an approval in a non-interactive run without --yes is refused with exit 4', async () => {
    const io = new RecordingIO('no-tty')
    const result = await runRunbook(runbook(approve), {control: control({}), io, signal: noAbort()})
    expect(result.outcome).toBe('refused')
    expect(exitCodeOf(result.outcome)).toBe(4)
    expect(result.message).toContain('pass --yes')
  })

  it('a declined approval stops the run with exit 4; an accepted one goes on', async () => {
    const declined = await runRunbook(runbook(approve), {control: control({}), io: new RecordingIO(false), signal: noAbort()})
    expect(exitCodeOf(declined.outcome)).toBe(4)
    const accepted = await runRunbook(runbook(approve), {control: control({}), io: new RecordingIO(true), signal: noAbort()})
    expect(exitCodeOf(accepted.outcome)).toBe(0)
  })

  it('asks the question with what has been done and what the metrics say now, and goes on when approved', async () => {
    const io = new RecordingIO(true)
    const metrics = new FakeMetrics((kind) => (kind === 'error-rate' ? 0.5 : 1200))
    const steps = `  - {action: freeze, reason: incident}\n${approve}`
    const result = await runRunbook(runbook(steps), {control: control({metrics}), io, signal: noAbort()})
    expect(result.outcome).toBe('completed')
    expect(io.questions).toEqual(['Bring traffic back?'])
    const [context] = io.contexts
    expect(context[0]).toBe('Done so far:')
    expect(context[1]).toBe('  ✓ Freeze changes: incident')
    expect(context.at(-1)).toMatch(/^Now: error rate 0\.50%, 1200(\.0+)? rps over the last 60 s$/)
    expect(result.steps[1]).toMatchObject({action: 'approve', status: 'done', message: 'approved: Bring traffic back?', title: 'Approval: Bring traffic back?'})
  })

  it('a declined approval is refused, names the question, and skips the steps after it', async () => {
    const steps = `${approve}  - {action: unfreeze}\n`
    const result = await runRunbook(runbook(steps), {control: control({}), io: new RecordingIO(false), signal: noAbort()})
    expect(result.steps.map((s) => s.status)).toEqual(['refused', 'skipped'])
    expect(result.steps[0].message).toBe('not approved: Bring traffic back?')
    expect(result.stoppedAt).toMatchObject({step: 0, title: 'Approval: Bring traffic back?'})
  })
})
