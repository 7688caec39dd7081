import {PassThrough} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {chooseMode, TerminalIO, type TerminalIOOptions} from '../../src/cli/terminal/terminal-io.js'
import {RefusedError} from '../../src/errors.js'
import {type GateVerdict, type PlannedStep, type RunEvent} from '../../src/ports/io.js'

/** A stream that keeps everything written to it, as text. */
function capture() {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()))
  return {stream, text: () => text}
}

const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g')
const plain = (text: string) => text.replace(ansi, '')

const steps: PlannedStep[] = [
  {index: 0, action: 'freeze', title: 'Freeze changes', details: ['record a change freeze: INC-42']},
  {index: 1, action: 'ramp', title: 'Ramp to site b', details: ['b 5% → 50% of Z1 rec A', 'bake 60 s per step']},
]

const verdict: GateVerdict = {
  step: 1,
  gate: 'error-rate ≤ 1% over 60 s',
  metric: 'error-rate',
  value: 0.4,
  threshold: 1,
  unit: '%',
  outcome: 'pass',
  at: 120,
  context: 'ramp 5%',
}

/** A run where step 1 freezes and step 2 ramps, measures, and then fails. */
const script: RunEvent[] = [
  {type: 'plan', runbook: 'recover', steps},
  {type: 'step-start', step: 0, title: 'Freeze changes', at: 0},
  {type: 'progress', step: 0, message: 'writing the freeze record', at: 1},
  {type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 2},
  {type: 'step-start', step: 1, title: 'Ramp to site b', at: 3},
  {type: 'mutation', mutation: {step: 1, phase: 'intent', kind: 'weights', resource: 'Z1 rec A', before: {a: 100, b: 0}, after: {a: 95, b: 5}}, at: 4},
  {type: 'mutation', mutation: {step: 1, phase: 'outcome', kind: 'weights', resource: 'Z1 rec A', ok: true}, at: 5},
  {type: 'verdict', verdict},
  {
    type: 'verdict',
    verdict: {...verdict, metric: 'latency-p99', gate: 'latency-p99 ≤ 800 ms over 60 s', value: null, threshold: 800, unit: 'ms', outcome: 'inconclusive'},
  },
  {type: 'warning', step: 1, message: 'metrics lag 30 s'},
  {type: 'mutation', mutation: {step: 1, phase: 'outcome', kind: 'weights', resource: 'Z1 rec A', ok: false, error: 'throttled'}, at: 121},
  {type: 'step-end', step: 1, status: 'failed', message: 'gate failed at ramp 5%', at: 121},
  {type: 'run-end', outcome: 'gate-failed', message: 'stopped at step 2'},
]

function terminal(options: Partial<TerminalIOOptions> & {stream: NodeJS.WritableStream}): TerminalIO {
  return new TerminalIO({mode: 'lines', yes: false, interactive: false, clock: 'scenario', ...options})
}

describe('chooseMode', () => {
  it('is silent under --json, whatever the terminal', () => {
    expect(chooseMode({json: true, env: {}, isTTY: true})).toBe('silent')
    expect(chooseMode({json: true, env: {CI: 'true'}, isTTY: false})).toBe('silent')
  })

  it('prints lines under CI, even on a terminal', () => {
    expect(chooseMode({json: false, env: {CI: 'true'}, isTTY: true})).toBe('lines')
    expect(chooseMode({json: false, env: {CI: '1'}, isTTY: true})).toBe('lines')
  })

  it('prints lines when stderr is not a terminal', () => {
    expect(chooseMode({json: false, env: {}, isTTY: false})).toBe('lines')
  })

  it('draws live on a terminal, CI unset or false', () => {
    expect(chooseMode({json: false, env: {}, isTTY: true})).toBe('tty')
    expect(chooseMode({json: false, env: {CI: 'false'}, isTTY: true})).toBe('tty')
    expect(chooseMode({json: false, env: {CI: ''}, isTTY: true})).toBe('tty')
  })
})

describe("'lines' mode", () => {
  it('writes one greppable line per event worth one, each with its scenario time', async () => {
    const out = capture()
    const io = terminal({stream: out.stream})
    for (const event of script) io.notify(event)
    await io.close()
    expect(out.text().split('\n')).toEqual([
      'plan: 2 steps',
      '  1. Freeze changes: record a change freeze: INC-42',
      '  2. Ramp to site b: b 5% → 50% of Z1 rec A; bake 60 s per step',
      '[+00:00] [step 1] start Freeze changes',
      '[+00:01] [step 1] progress writing the freeze record',
      '[+00:02] [step 1] done frozen',
      '[+00:03] [step 2] start Ramp to site b',
      '[+00:04] [step 2] change weights Z1 rec A: {a:100,b:0} → {a:95,b:5}',
      '[+02:00] [step 2] gate error-rate ≤ 1% over 60 s: 1/1 passes, last 0.40%, 115 s (ramp 5%)',
      '[+02:00] [step 2] gate latency-p99 ≤ 800 ms over 60 s: no data inconclusive (ramp 5%)',
      '[+02:00] [step 2] warning metrics lag 30 s',
      '[+02:01] [step 2] change weights Z1 rec A failed: throttled',
      '[+02:01] [step 2] FAILED gate failed at ramp 5%',
      '[+02:01] run: gate-failed stopped at step 2',
      '',
    ])
  })

  it('formats latency in ms and a warning without a step, at the time of the last event', () => {
    const out = capture()
    const io = terminal({stream: out.stream})
    io.notify({type: 'verdict', verdict: {...verdict, step: 0, value: 412.6, unit: 'ms', outcome: 'fail', context: ''}})
    io.notify({type: 'warning', message: 'clock skew'})
    expect(out.text()).toBe('[+02:00] [step 1] gate error-rate ≤ 1% over 60 s: 413 ms fail\n[+02:00] warning: clock skew\n')
  })

  it('prints a gate window as one line, and a failure, a no-data and the pass after them as they come', async () => {
    const out = capture()
    const io = terminal({stream: out.stream})
    const pass = (at: number, value = 0): RunEvent => ({type: 'verdict', verdict: {...verdict, at, value}})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: 600})
    io.notify({
      type: 'mutation',
      mutation: {step: 1, phase: 'intent', kind: 'weights', resource: 'Z1 rec A', before: {a: 100, b: 0}, after: {a: 95, b: 5}},
      at: 600,
    })
    io.notify({type: 'progress', step: 1, message: 'b at 5%, baking 90 s', at: 600})
    for (let at = 610; at <= 630; at += 10) io.notify(pass(at))
    io.notify({type: 'verdict', verdict: {...verdict, at: 640, value: 1.5, outcome: 'fail'}})
    io.notify({type: 'verdict', verdict: {...verdict, at: 650, value: null, outcome: 'inconclusive'}})
    for (let at = 660; at <= 690; at += 10) io.notify(pass(at, 0.25))
    io.notify({
      type: 'mutation',
      mutation: {step: 1, phase: 'intent', kind: 'weights', resource: 'Z1 rec A', before: {a: 95, b: 5}, after: {a: 50, b: 50}},
      at: 690,
    })
    io.notify({type: 'progress', step: 1, message: 'b at 50%, baking 90 s', at: 690})
    for (let at = 700; at <= 780; at += 10) io.notify({type: 'verdict', verdict: {...verdict, at, context: 'ramp 50%'}})
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 50%', at: 780})
    await io.close()
    expect(out.text().split('\n')).toEqual([
      '[+10:00] [step 2] start Ramp to site b — change weights Z1 rec A: {a:100,b:0} → {a:95,b:5} — b at 5%, baking 90 s',
      '[+10:40] [step 2] gate error-rate ≤ 1% over 60 s: 1.50% fail (ramp 5%)',
      '[+10:50] [step 2] gate error-rate ≤ 1% over 60 s: no data inconclusive (ramp 5%)',
      '[+11:00] [step 2] gate error-rate ≤ 1% over 60 s: 0.25% pass (ramp 5%)',
      '[+11:30] [step 2] gate error-rate ≤ 1% over 60 s: 4/9 passes, last 0.25%, 90 s (ramp 5%)',
      '[+11:30] [step 2] change weights Z1 rec A: {a:95,b:5} → {a:50,b:50} — b at 50%, baking 90 s',
      '[+13:00] [step 2] done b at 50% — gate error-rate ≤ 1% over 60 s: 9/9 passes, last 0.40%, 90 s (ramp 50%)',
      '',
    ])
  })

  it('leaves out a status replaced within the same second, and keeps one that lasted', async () => {
    const out = capture()
    const io = terminal({stream: out.stream})
    io.notify({type: 'step-start', step: 0, title: 'Cycle mailbox', at: 360})
    io.notify({type: 'mutation', mutation: {step: 0, phase: 'intent', kind: 'failover', resource: 'tg', before: null, after: 50}, at: 360})
    io.notify({type: 'progress', step: 0, message: 'batch 1 of 2: draining', at: 360.2})
    io.notify({type: 'progress', step: 0, message: 'batch 1 of 2: restart', at: 360.5})
    io.notify({type: 'progress', step: 0, message: 'batch 1 of 2: remediate', at: 390})
    io.notify({type: 'progress', step: 0, message: 'batch 1 of 2: returning to service', at: 390})
    io.notify({type: 'mutation', mutation: {step: 0, phase: 'intent', kind: 'register', resource: 'tg', before: null, after: ['a']}, at: 390})
    await io.close()
    expect(out.text().split('\n')).toEqual([
      '[+06:00] [step 1] start Cycle mailbox — change failover tg: null → 50 — batch 1 of 2: draining',
      '[+06:00] [step 1] progress batch 1 of 2: restart',
      '[+06:30] [step 1] change register tg: null → [a]',
      '',
    ])
  })

  it('prints a line held back within a second when nothing follows it (a live step that waits)', async () => {
    const out = capture()
    const io = terminal({stream: out.stream, clock: 'wall'})
    io.notify({type: 'step-start', step: 0, title: 'Watch', at: Date.UTC(2026, 10, 30, 14, 3, 27) / 1000})
    expect(out.text()).toBe('')
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(out.text()).toBe('[14:03:27Z] [step 1] start Watch\n')
    await io.close()
  })
})

describe("'silent' mode", () => {
  it('writes nothing, not even an approval by --yes', async () => {
    const out = capture()
    const io = terminal({mode: 'silent', yes: true, stream: out.stream})
    for (const event of script) io.notify(event)
    await expect(io.confirm('Go on?', ['context'])).resolves.toBe(true)
    await io.close()
    expect(out.text()).toBe('')
  })
})

describe('confirm', () => {
  it('approves under --yes and says so, after showing what was asked about', async () => {
    const out = capture()
    const io = terminal({yes: true, stream: out.stream})
    await expect(io.confirm('Ramp to 50%?', ['Now: 0.40%'])).resolves.toBe(true)
    expect(out.text()).toBe('Now: 0.40%\napproved by --yes: Ramp to 50%?\n')
  })

  it('refuses when nobody can answer, pointing at --yes', async () => {
    const out = capture()
    const io = terminal({stream: out.stream})
    const answer = io.confirm('Ramp to 50%?', [])
    await expect(answer).rejects.toBeInstanceOf(RefusedError)
    await expect(answer).rejects.toThrow(/^Ramp to 50%\? needs an answer, but this run is not interactive; pass --yes to approve$/)
  })

  it('shows the context, then asks; no unless the person says yes', async () => {
    const out = capture()
    const input = new PassThrough()
    const io = terminal({interactive: true, stream: out.stream, input})
    const answer = io.confirm('Ramp to 50%?', ['Done so far:', '  ✓ Freeze changes'])
    setTimeout(() => input.write('y\r'), 50)
    await expect(answer).resolves.toBe(true)
    const text = plain(out.text())
    expect(text.indexOf('  ✓ Freeze changes')).toBeLessThan(text.indexOf('Ramp to 50%?'))
    expect(out.stream.writableEnded).toBe(false)

    const declined = io.confirm('Ramp to 100%?', [])
    setTimeout(() => input.write('\r'), 50)
    await expect(declined).resolves.toBe(false)
  })

  it('reads Ctrl-C at the prompt as no', async () => {
    const out = capture()
    const input = new PassThrough()
    const io = terminal({interactive: true, stream: out.stream, input})
    const answer = io.confirm('Ramp to 50%?', [])
    setTimeout(() => input.write('\x03'), 50)
    await expect(answer).resolves.toBe(false)
  })
})

describe("'tty' mode", () => {
  it('draws the steps with listr2 on the given stream and finishes on close()', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    const run: RunEvent[] = [
      {type: 'plan', runbook: 'recover', steps},
      {type: 'step-start', step: 0, title: 'Freeze changes', at: 0},
      {type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 1},
      {type: 'step-start', step: 1, title: 'Ramp to site b', at: 2},
      {type: 'verdict', verdict},
      {type: 'warning', step: 1, message: 'metrics lag 30 s'},
      {type: 'step-end', step: 1, status: 'failed', message: 'gate failed at ramp 5%', at: 3},
      {type: 'run-end', outcome: 'gate-failed', message: 'stopped at step 2'},
    ]
    for (const event of run) io.notify(event)
    await io.close()
    const text = plain(out.text())
    expect(text).toContain('Freeze changes')
    expect(text).toContain('Ramp to site b: failed, gate failed at ramp 5%')
    expect(text).toContain('gate error-rate ≤ 1% over 60 s: 0.40% pass (ramp 5%)')
    // Written while listr2 drew, so held back by it and printed below the final frame.
    expect(text.indexOf('[step 2] warning metrics lag 30 s')).toBeGreaterThan(text.lastIndexOf('Ramp to site b: failed'))
    expect(text.trimEnd().endsWith('run: gate-failed stopped at step 2')).toBe(true)
  })

  it('counts the bake down under the step on each verdict, and shows the time each step took', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: 60})
    io.notify({type: 'progress', step: 1, message: 'b at 5% (a=95 b=5), baking 60 s', at: 60})
    io.notify({type: 'bake', step: 1, seconds: 60, at: 60})
    io.notify({type: 'verdict', verdict: {...verdict, at: 80}})
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 5%', at: 120})
    io.notify({type: 'run-end', outcome: 'completed', message: ''})
    await io.close()
    const text = plain(out.text())
    expect(text).toContain('gate error-rate ≤ 1% over 60 s: 0.40% pass (ramp 5%), bake 20/60 s')
    // listr2's PRESET_TIMER: the step's line ends with how long it took, e.g. [0.1s] or [1m 2s].
    expect(text).toMatch(/Ramp to site b \[[\dm. ]+s\]/)
  })

  it('on the wall clock, counts the bake down every second between verdicts', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream, clock: 'wall'})
    const now = Date.now() / 1000
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: now - 31})
    io.notify({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: now - 31})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: now - 30})
    io.notify({type: 'progress', step: 1, message: 'b at 5% (a=95 b=5), baking 90 s', at: now - 30})
    // Began 30 s ago (as a watch that joins late reads it): counted from then, not from when it was read.
    io.notify({type: 'bake', step: 1, seconds: 90, at: now - 30})
    await new Promise((r) => setTimeout(r, 2_500))
    const drawn = plain(out.text())
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 5%', at: now})
    io.notify({type: 'run-end', outcome: 'completed', message: ''})
    await io.close()
    expect(drawn).toContain('baking 90 s, bake 30/90 s')
    // No verdict came in between: only the ticks moved it on.
    expect(drawn).toMatch(/baking 90 s, bake 3[1-9]\/90 s/)
  })

  it('keeps a pause under the step while its gate goes on being measured, and after the step ends', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    const pause: RunEvent = {
      type: 'control',
      control: {seq: 1, kind: 'pause', operator: 'bob', host: 'ops1', pid: 42, at: '2026-11-30T00:00:00Z'},
      effect: 'paused',
    }
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 59})
    io.notify({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 59})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: 60})
    io.notify({type: 'bake', step: 1, seconds: 60, at: 60})
    // The next verdict comes in the same moment (a watch reads both from the journal at once).
    io.notify(pause)
    io.notify({type: 'verdict', verdict: {...verdict, at: 61}})
    await new Promise((r) => setTimeout(r, 500))
    const drawn = plain(out.text())
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 5%', at: 120})
    io.notify({type: 'run-end', outcome: 'completed', message: ''})
    await io.close()
    const line = 'control: pause by bob on ops1 (pid 42): paused'
    // Drawn with the verdict that followed it, not overwritten by it.
    expect(drawn).toMatch(new RegExp(`› ${line.replace(/[()]/g, '\\$&')}\\n\\s*gate error-rate ≤ 1% over 60 s: 0\\.40% pass \\(ramp 5%\\), bake 1/60 s`))
    // Kept under the finished step, and printed on its own below the final frame.
    const text = plain(out.text())
    const frame = text.slice(text.lastIndexOf('Ramp to site b'))
    expect(frame.split('\n').filter((l) => l.includes(line))).toHaveLength(2)
  })

  it('folds a step done to one line once the next starts, so the frame stays a line a step; the last keeps its lines', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})
    io.notify({type: 'progress', step: 0, message: 'writing the freeze record', at: 1})
    io.notify({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 2})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: 3})
    io.notify({type: 'bake', step: 1, seconds: 60, at: 60})
    io.notify({type: 'verdict', verdict: {...verdict, at: 80}})
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 5%', at: 120})
    io.notify({type: 'run-end', outcome: 'completed', message: ''})
    await io.close()
    const text = plain(out.text())
    const frame = text.slice(text.lastIndexOf('Freeze changes: frozen'))
    // The first step: its title and what it ended with, on one line; nothing under it.
    expect(frame).toMatch(/^Freeze changes: frozen \[[\dm. ]+s\]\n\S+ Ramp to site b/)
    expect(frame).not.toContain('writing the freeze record')
    // The step the run ended on keeps its last status and verdict under it.
    expect(frame).toMatch(/Ramp to site b \[[\dm. ]+s\]\n\s+› b at 5%\n\s+gate error-rate ≤ 1% over 60 s: 0\.40% pass \(ramp 5%\), bake 20\/60 s/)
  })

  it('draws a burst of changes in a few frames, not a frame per change', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})
    io.notify({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 0})
    io.notify({type: 'step-start', step: 1, title: 'Ramp to site b', at: 1})
    io.notify({type: 'bake', step: 1, seconds: 600, at: 1})
    // Let listr2 start the step, then say 200 things at once, as a rehearsal in virtual time does.
    await new Promise((r) => setTimeout(r, 300))
    for (let i = 0; i < 200; i++) io.notify({type: 'verdict', verdict: {...verdict, at: 2 + i}})
    await new Promise((r) => setTimeout(r, 300))
    io.notify({type: 'step-end', step: 1, status: 'done', message: 'b at 5%', at: 300})
    io.notify({type: 'run-end', outcome: 'completed', message: ''})
    await io.close()
    const text = plain(out.text())
    // Each frame draws the running step's line once: every count drawn is a frame.
    const counts = text.match(/bake \d+\/600 s/g) ?? []
    expect(counts.length).toBeGreaterThan(0)
    expect(counts.length).toBeLessThan(20)
    expect(text).toContain('bake 200/600 s')
  })

  it('says the status once when the message begins with it: "interrupted at …", not "interrupted, interrupted at …" (issue 48)', async () => {
    const message = 'interrupted at ramp 5%; weights back to b 1% (a=99 b=1)'
    const events: RunEvent[] = [
      {type: 'plan', runbook: 'recover', steps},
      {type: 'step-start', step: 0, title: 'Freeze changes', at: 0},
      {type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 0},
      {type: 'step-start', step: 1, title: 'Ramp to site b', at: 1},
      {type: 'step-end', step: 1, status: 'interrupted', message, at: 2},
      {type: 'run-end', outcome: 'interrupted', message: `step 2 (Ramp to site b): ${message}`},
    ]
    const drawn = capture()
    const tty = terminal({mode: 'tty', stream: drawn.stream})
    for (const e of events) tty.notify(e)
    await tty.close()
    expect(plain(drawn.text())).toContain('Ramp to site b: interrupted at ramp 5%; weights back to b 1% (a=99 b=1)')
    expect(plain(drawn.text())).not.toMatch(/interrupted,? interrupted/i)
    const printed = capture()
    const lines = terminal({mode: 'lines', stream: printed.stream})
    for (const e of events) lines.notify(e)
    await lines.close()
    expect(printed.text()).toMatch(/^\[\+00:02\] \[step 2\] INTERRUPTED at ramp 5%; weights back to b 1% \(a=99 b=1\)$/m)
    expect(printed.text()).not.toMatch(/INTERRUPTED interrupted/)
  })

  it('marks steps that never started as not run', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})
    io.notify({type: 'step-end', step: 0, status: 'refused', message: 'a freeze is in place', at: 1})
    io.notify({type: 'run-end', outcome: 'refused', message: 'frozen by someone else'})
    await io.close()
    const text = plain(out.text())
    expect(text).toContain('Freeze changes: refused, a freeze is in place')
    expect(text).toContain('Ramp to site b: not run')
  })

  it('asks inside the running step, then carries on drawing', async () => {
    const out = capture()
    const input = new PassThrough()
    const io = terminal({mode: 'tty', interactive: true, stream: out.stream, input})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})
    const answer = io.confirm('Freeze now?', ['Nobody else holds a freeze'])
    setTimeout(() => input.write('y\r'), 200)
    await expect(answer).resolves.toBe(true)
    io.notify({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 1})
    io.notify({type: 'run-end', outcome: 'completed', message: 'done'})
    await io.close()
    const text = plain(out.text())
    expect(text).toContain('Freeze now?')
    expect(text).toContain('Nobody else holds a freeze')
    expect(text).toContain('Ramp to site b: not run')
    expect(out.stream.writableEnded).toBe(false)
  })

  // A pty with no size (`script`, some containers): listr2 would draw nothing until the end.
  it.each([{columns: 0}, {rows: 0}])('falls back to lines on a terminal that reports no size (%o)', async (size) => {
    const out = capture()
    Object.assign(out.stream, size)
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps: steps.slice(0, 1)})
    io.notify({type: 'run-end', outcome: 'completed', message: 'done'})
    await io.close()
    expect(out.text()).toBe('plan: 1 step\n  1. Freeze changes: record a change freeze: INC-42\nrun: completed done\n')
  })

  it('closes without a run-end, and with no plan at all', async () => {
    const out = capture()
    const io = terminal({mode: 'tty', stream: out.stream})
    io.notify({type: 'plan', runbook: 'recover', steps})
    io.notify({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})
    await io.close()
    expect(plain(out.text())).toContain('Freeze changes: not run')
    await terminal({mode: 'tty', stream: capture().stream}).close()
  })
})
