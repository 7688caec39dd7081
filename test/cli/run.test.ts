import {existsSync, mkdtempSync, readdirSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import type {RunJson} from '../../src/cli/run-runbook.js'
import {parse} from 'yaml'
import type {CliResult} from '../helpers/cli.js'
import {isolatedInProcess} from '../helpers/command.js'

/** Every command runs without AWS and with its own state directory, in this process. */
const sluice = isolatedInProcess('run')

/** The package root: runbooks are given relative to it, as a user in the repository would. */
const root = fileURLToPath(new URL('../../', import.meta.url))
const inRoot = {cwd: root}
const rampTooFast = 'test/fixtures/runbooks/ramp-too-fast.yaml'

const braille = /[\u2801-\u28ff]/

interface Verdict {
  step: number
  gate: string
  metric: string
  value: number | null
  threshold: number
  unit: string
  outcome: 'pass' | 'fail' | 'inconclusive'
  context: string
}

function parseJson(stdout: string): RunJson {
  return JSON.parse(stdout) as RunJson
}

/** `{mailbox:25,maintenance:75}` (as the progress lines print weights) → {mailbox: 25, maintenance: 75}. */
function parseWeights(text: string): Record<string, number> {
  const inner = /^\{(.*)\}$/.exec(text.trim())
  if (!inner) throw new Error(`not a weight map: ${text}`)
  return Object.fromEntries(
    inner[1].split(',').map((pair) => {
      const [k, v] = pair.split(':')
      return [k, Number(v)]
    }),
  )
}

describe('sluice run --dry-run: the shipped runbooks that recover', () => {
  it.each(['outlook-staged-return', 'regional-dns-ramp', 'thread-hold-recovery'])(
    '%s completes, reports recovery, charts it, and shows progress',
    async (name) => {
      const file = `runbooks/${name}.yaml`
      const [text, json] = await Promise.all([sluice(['run', file, '--dry-run'], inRoot), sluice(['run', file, '--dry-run', '--json'], inRoot)])

      // The text report on stdout.
      expect(text.code, text.stderr).toBe(0)
      const lines = text.stdout.split('\n')
      expect(lines.filter((l) => l.startsWith('Outcome: '))).toHaveLength(1)
      expect(text.stdout).toMatch(/^Outcome: completed\b/m)
      expect(lines.some((l) => l.startsWith('Recovered: yes'))).toBe(true)
      expect(text.stdout).not.toMatch(/^Recovered: no/m)
      expect(text.stdout).toContain('Gate verdicts:')
      expect(text.stdout).toMatch(braille)
      expect(text.stdout).not.toContain('\u001b[') // no colour without a TTY

      // --json: the same run, as data.
      expect(json.code, json.stderr).toBe(0)
      const run = parseJson(json.stdout)
      expect(run.runbook).toBe(name)
      expect(run.mode).toBe('rehearsal')
      expect(run.outcome).toBe('completed')
      expect(run.exitCode).toBe(0)
      expect(run.stoppedAt).toBeNull()
      const yamlSteps = (parse(readFileSync(`${root}${file}`, 'utf8')) as {steps: unknown[]}).steps
      expect(run.steps).toHaveLength(yamlSteps.length)
      for (const step of run.steps) expect(step.status, `${step.title}: ${step.message}`).toBe('done')
      // A gate that let its step through ended on a passing verdict.
      for (const step of run.steps) if (step.verdicts.length > 0) expect(step.verdicts.at(-1)!.outcome, step.title).toBe('pass')

      const report = run.report!
      expect(report).not.toBeNull()
      expect(report.recovered).toBe(true)
      for (const figure of ['lostPercent', 'peakErrorRatePercent', 'minInRotation'] as const) {
        expect(typeof report[figure], figure).toBe('number')
        expect(Number.isFinite(report[figure]), figure).toBe(true)
      }
      expect(report.lostPercent).toBeGreaterThanOrEqual(0)
      expect(report.lostPercent).toBeLessThanOrEqual(100)
      expect(report.peakErrorRatePercent).toBeGreaterThanOrEqual(0)
      expect(report.peakErrorRatePercent).toBeLessThanOrEqual(100)
      expect(typeof report.secondsFromFixToFull).toBe('number')
      expect(report.secondsFromFixToFull!).toBeGreaterThanOrEqual(0)
      expect(typeof report.fullServiceFrom).toBe('number')

      // The text report and the JSON tell the same story.
      const f = report.fromStart
      expect(text.stdout).toContain(
        `From the runbook's start at ${report.startAt} s: requests lost ${f.lostPercent.toFixed(1)}%   peak error rate ${f.peakErrorRatePercent.toFixed(1)}%   fewest in rotation ${f.minInRotation}`,
      )
      expect(text.stdout).toContain(
        `Whole scenario, the outage before it included: requests lost ${report.lostPercent.toFixed(1)}%   peak error rate ${report.peakErrorRatePercent.toFixed(1)}%   fewest in rotation ${report.minInRotation}`,
      )
      // From the start is part of the whole: never more lost than the whole loses from its own start on.
      expect(f.minInRotation).toBeGreaterThanOrEqual(report.minInRotation)
      expect(f.peakErrorRatePercent).toBeLessThanOrEqual(report.peakErrorRatePercent)

      // Progress on stderr, each line at its scenario time: every step starts (with what it does at
      // the same second) and ends done, a gate window is one line, then the run line.
      const progress = text.stderr.split('\n')
      expect(progress[0]).toBe(`plan: ${run.steps.length} steps`)
      const quoted = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      run.steps.forEach((step, i) => {
        const start = new RegExp(`^\\[\\+\\d\\d:\\d\\d\\] \\[step ${i + 1}\\] start ${quoted(step.title)}( — .*)?$`)
        expect(
          progress.some((l) => start.test(l)),
          `start of step ${i + 1}`,
        ).toBe(true)
        expect(
          progress.some((l) => new RegExp(`^\\[\\+\\d\\d:\\d\\d\\] \\[step ${i + 1}\\] done`).test(l)),
          `end of step ${i + 1}`,
        ).toBe(true)
      })
      expect(text.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step \d+\] (gate|done .* — gate) .*: \d+\/\d+ passes, last [\d.]+(%| ms), \d+ s/m)
      expect(progress.filter(Boolean).at(-1)).toMatch(new RegExp(`^\\[\\+\\d\\d:\\d\\d\\] run: completed ${name}: all ${run.steps.length} steps done$`))
      // --json keeps stdout for the JSON and draws no progress.
      expect(json.stderr).not.toMatch(/^\[\+\d\d:\d\d\] \[step /m)
    },
  )
})

let naiveText: Promise<CliResult & {warnings: Error[]}> | undefined
const naive = (): Promise<CliResult & {warnings: Error[]}> => (naiveText ??= sluice(['run', 'runbooks/naive-full-return.yaml', '--dry-run'], inRoot))

describe('sluice run --dry-run without a terminal: a log a person reads', () => {
  it('outlook-staged-return prints no line twice and at most 60 lines on stderr', async () => {
    const {code, stderr} = await sluice(['run', 'runbooks/outlook-staged-return.yaml', '--dry-run'], inRoot)
    expect(code, stderr).toBe(0)
    const lines = stderr.trimEnd().split('\n')
    expect(lines.length, stderr).toBeLessThanOrEqual(60)
    expect(
      lines.filter((l, i) => lines.indexOf(l) !== i),
      'lines printed twice',
    ).toEqual([])
  })
})

describe('sluice run --dry-run runbooks/naive-full-return.yaml', () => {
  it('relapses: exit 3, and the report names the gate, the measured value and the threshold', async () => {
    const [text, json] = await Promise.all([naive(), sluice(['run', 'runbooks/naive-full-return.yaml', '--dry-run', '--json'], inRoot)])
    expect(text.code, text.stderr).toBe(3)
    const outcome = text.stdout.split('\n').find((l) => l.startsWith('Outcome: '))
    expect(outcome).toBeDefined()
    expect(outcome).toMatch(/^Outcome: (held|gate-failed) — /)
    expect(outcome).toContain('gate ')
    expect(outcome).toMatch(/measured [\d.]+/)
    expect(outcome).toMatch(/threshold [\d.]+%/)
    expect(text.stdout).toMatch(/^Recovered: no/m)
    expect(text.stdout).toMatch(braille)
    expect(text.stderr).toMatch(/^\[\+\d\d:\d\d\] run: (held|gate-failed) /m)

    expect(json.code, json.stderr).toBe(3)
    const run = parseJson(json.stdout)
    expect(['held', 'gate-failed']).toContain(run.outcome)
    expect(run.exitCode).toBe(3)
    expect(run.stoppedAt).not.toBeNull()
    const failing = run.steps[run.stoppedAt!.step]
    expect(['held', 'failed']).toContain(failing.status)
    const failed = failing.verdicts.filter((v) => v.outcome === 'fail')
    expect(failed.length).toBeGreaterThanOrEqual(1)
    // The failing verdict is what the message quotes.
    expect(run.message).toContain(failed.at(-1)!.gate)
    expect(run.message).toMatch(/measured .*threshold/)
    expect(run.report!.recovered).toBe(false)
    // Steps after the failure never ran.
    for (const step of run.steps.slice(run.stoppedAt!.step + 1)) expect(step.status).toBe('skipped')
  })

  it("prints no Node.js runtime warnings on stderr (only sluice's own progress lines)", async () => {
    const {code, stderr, warnings} = await naive()
    expect(code).toBe(3)
    // A cycle of one 20-target batch adds one abort listener per target to the run's signal.
    // In this process a warning is an event rather than a line (test/smoke/exit-codes.test.ts reads the spawned CLI's stderr).
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([])
    expect(stderr).not.toContain('MaxListenersExceededWarning')
    expect(stderr).not.toMatch(/^\(node:\d+\)/m)
  })
})

describe('a gate failing mid-ramp (test/fixtures/runbooks/ramp-too-fast.yaml)', () => {
  it('puts the DNS weights back to the last good step and exits 3, naming gate, value and threshold', async () => {
    const [text, json] = await Promise.all([sluice(['run', rampTooFast, '--dry-run'], inRoot), sluice(['run', rampTooFast, '--dry-run', '--json'], inRoot)])

    expect(json.code, json.stderr).toBe(3)
    const run = parseJson(json.stdout)
    expect(run.outcome).toBe('gate-failed')
    expect(run.exitCode).toBe(3)
    expect(run.stoppedAt?.step).toBe(2)
    const [park, cycle, ramp] = run.steps
    expect(park.status).toBe('done')
    expect(cycle.status).toBe('done')
    expect(ramp.action).toBe('ramp')
    expect(ramp.status).toBe('failed')

    // The earlier percentages passed their gate; the jump to 100% failed it.
    const byPercent = new Map<string, Verdict[]>()
    for (const v of ramp.verdicts) byPercent.set(v.context, [...(byPercent.get(v.context) ?? []), v])
    expect([...byPercent.keys()]).toEqual(['mailbox 5%', 'mailbox 25%', 'mailbox 100%'])
    for (const context of ['mailbox 5%', 'mailbox 25%']) {
      const verdicts = byPercent.get(context)!
      expect(verdicts.length).toBeGreaterThanOrEqual(3)
      for (const v of verdicts) expect(v.outcome, context).toBe('pass')
    }
    const last = byPercent.get('mailbox 100%')!.at(-1)!
    expect(last.outcome).toBe('fail')
    expect(last.metric).toBe('error-rate')
    expect(last.threshold).toBe(2)
    expect(last.value!).toBeGreaterThan(2)

    // The message names the gate, the measured value and the threshold, and where the weights went.
    const measured = `${last.value!.toFixed(2)}%`
    expect(run.message).toContain('error-rate')
    expect(run.message).toContain(`measured ${measured}`)
    expect(run.message).toContain('threshold 2.00%')
    expect(run.message).toContain('weights back to mailbox 25%')

    expect(text.code, text.stderr).toBe(3)
    const outcome = text.stdout.split('\n').find((l) => l.startsWith('Outcome: '))!
    expect(outcome).toMatch(/^Outcome: gate-failed — step 3 /)
    expect(outcome).toContain('gate error-rate')
    expect(outcome).toContain(`measured ${measured}`)
    expect(outcome).toContain('threshold 2.00%')

    // The last DNS change on record puts back the 25% step's weights.
    // A change line carries the status that follows it at the same second, after ' — '.
    const changes = text.stderr
      .split('\n')
      .filter((l) => /^\[\+\d\d:\d\d\] \[step 3\] (start .* — )?change weights /.test(l))
      .map((l) => l.replace(/^(.*?change weights .*?\}) — .*$/, '$1'))
    expect(changes.length).toBe(4) // 5%, 25%, 100%, then back
    const [before, after] = changes
      .at(-1)!
      .replace(/^.*?: (?=\{)/, '')
      .split(' → ')
    expect(parseWeights(before)).toEqual({mailbox: 100, maintenance: 0})
    expect(parseWeights(after)).toEqual({mailbox: 25, maintenance: 75})
    // ...and those are the weights the 25% step set.
    const weightsAfter = (line: string) => parseWeights(line.split(' → ')[1])
    expect(weightsAfter(changes[1])).toEqual(weightsAfter(changes.at(-1)!))
    expect(weightsAfter(changes[2])).toEqual({mailbox: 100, maintenance: 0})
    expect(text.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 3\] FAILED gate error-rate .*weights back to mailbox 25%/m)
  })
})

describe('sluice run without --dry-run', () => {
  it.each([
    [['--pace', '60']],
    [['--svg', 'chart.svg']],
    [['--html', 'report.html']],
    [['--scenario', 'outlook-2026']],
    [['--setup', 'worst']],
    [['--pace', '60', '--html', 'report.html']],
  ])('a rehearsal-only flag (%j) is refused with exit 2, naming it, before any AWS call', async (flags) => {
    const {code, stdout, stderr} = await sluice(['run', 'runbooks/outlook-staged-return.yaml', ...flags], inRoot)
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    const named = flags.filter((f) => f.startsWith('--')).join(', ')
    expect(stderr.trimEnd()).toBe(
      `Error: ${named}: ${flags.length > 2 ? 'need' : 'needs'} --dry-run; only for a rehearsal: add --dry-run to rehearse, or leave the rehearsal flags out to run live`,
    )
  })

  it('with no AWS credentials: exits 1 on one line naming the AWS call that failed, before changing anything', async () => {
    const state = join(mkdtempSync(join(tmpdir(), 'sluice-nocreds-')), 'state')
    const {code, stdout, stderr} = await sluice(['run', 'runbooks/outlook-staged-return.yaml'], {...inRoot, env: {SLUICE_STATE: state}})
    expect(code, stderr).toBe(1)
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe(`using local state ${state} ($SLUICE_STATE)`)
    // The first call a live run makes is STS's, for the account it would act in.
    expect(lines[1]).toMatch(
      /^Error: cannot tell which AWS account the run would act in: STS GetCallerIdentity on the run's credentials failed: NoCredentials: /,
    )
    expect(lines[1]).toMatch(/nothing was read or changed$/)
    // Nothing journalled or locked either.
    expect(existsSync(state) ? readdirSync(state, {recursive: true}) : []).toEqual([])
  })
})
