import type {ControlIntent} from './ports/controls.js'
import type {BaselineTaken, GateVerdict, Mutation, PlannedStep, RunEvent, StepStatus} from './ports/io.js'
import type {PoolPlace} from './ports/pool-readings.js'

// The run's vocabulary as text, in one place, so that the terminal, the journal and the reports
// say the same thing the same way: a line grepped from CI output matches the journal's.
// Types only from the ports: the engine and every view may import this module.

/** A metric value with its unit; null is a window without data, which is never zero. */
export function formatMetric(value: number | null, unit: string): string {
  if (value === null) return 'no data'
  if (unit === '%') return `${value.toFixed(2)}%`
  if (unit === 'ms') return `${Math.round(value)} ms`
  return `${value.toFixed(1)} ${unit}`
}

/** A control as the command line that sent it: `promote --full`, `abort --rollback`, `pause`. */
export function controlName(c: Pick<ControlIntent, 'kind' | 'full' | 'rollback'>): string {
  return `${c.kind}${c.full ? ' --full' : ''}${c.rollback ? ' --rollback' : ''}`
}

/** Events and verdicts carry the runbook's 0-based step index; people count from 1. */
export function stepName(index: number): string {
  // Step -1 holds what is done outside the runbook's steps: a rollback's way back, a drift put back.
  return index < 0 ? 'rollback' : `step ${index + 1}`
}

const statusWords: Record<StepStatus, string> = {
  done: 'done',
  skipped: 'skipped',
  held: 'HELD',
  failed: 'FAILED',
  error: 'ERROR',
  refused: 'REFUSED',
  interrupted: 'INTERRUPTED',
}

/** Capitals for every way a step can stop the run, so a scan of the output finds them. */
export function statusWord(status: StepStatus): string {
  return statusWords[status]
}

/**
 * A step's status with its message, the status said once: a message that begins with it
 * (`interrupted at green 25%; …`) follows the word without repeating it (`INTERRUPTED at green
 * 25%; …`, not `INTERRUPTED interrupted at…` or `interrupted, interrupted at…`).
 */
export function statusWithMessage(word: string, status: StepStatus, message: string, separator = ' '): string {
  const repeated = new RegExp(`^${status}\\b\\s*`, 'i')
  if (repeated.test(message)) return `${word} ${message.replace(repeated, '')}`.trimEnd()
  return message ? `${word}${separator}${message}` : word
}

/** A baseline taken before a change, as the journal says it: `12 intervals before the change: 2.3% of 9,012 requests`. */
export function baselineText(b: BaselineTaken): string {
  if ('reading' in b)
    return `the window before the change: ${b.reading.value === null ? 'no data' : `${b.reading.value}`}${b.reading.requests == null ? '' : ` of ${Math.round(b.reading.requests).toLocaleString('en-US')} requests`}`
  const requests = b.intervals.reduce((a, c) => a + c.requests, 0)
  const errors = b.intervals.reduce((a, c) => a + c.errors, 0)
  return `${b.intervals.length} intervals before the change: ${requests > 0 ? ((100 * errors) / requests).toFixed(2) : '0'}% of ${requests.toLocaleString('en-US')} requests`
}

/** `gate error-rate ≤ 1% over 60 s: 0.40% pass (ramp 5%)`; a verdict taken outside any phase has no parentheses. */
export function verdictText(v: GateVerdict): string {
  if (v.said) return `gate ${v.gate}: ${v.said}${v.context ? ` (${v.context})` : ''}`
  const why = v.why && v.why !== noDataWhy ? `, ${v.why}` : ''
  return `gate ${v.gate}: ${verdictMeasure(v)} ${v.outcome}${why}${v.context ? ` (${v.context})` : ''}`
}

/** Why a verdict without a value is inconclusive: the plain case, which `no data` already says. */
export const noDataWhy = 'no data in the window'

/**
 * What a verdict measured, on how many requests, and a relative gate's bound and baseline:
 * `3.10% of 1,204 requests`, `31.00% of 5,000 requests, bound 32.00% from pool blue 30.00% of 90,000 requests`.
 */
export function verdictMeasure(v: GateVerdict): string {
  const of = (requests: number | null | undefined) =>
    requests === null || requests === undefined ? '' : ` of ${Math.round(requests).toLocaleString('en-US')} requests`
  const value = `${formatMetric(v.value, v.unit)}${of(v.requests)}`
  if (!v.baseline) return value
  const bound = v.bound === null || v.bound === undefined ? '' : `bound ${formatMetric(v.bound, v.unit)} `
  return `${value}, ${bound}from ${v.baseline.of} ${formatMetric(v.baseline.value, v.unit)}${of(v.baseline.requests)}`
}

const verdictMarks: Record<GateVerdict['outcome'], string> = {pass: '✓', fail: '✗', inconclusive: '?'}

/**
 * Verdicts grouped by step, what the step was doing and gate, one line per group with every value
 * in order, a run of the same value and verdict folded (`0.00% ✓ ×9`): an end-of-run summary where
 * a bake's dozens of verdicts stay readable.
 */
export function groupedVerdictLines(verdicts: GateVerdict[]): string[] {
  const groups = new Map<string, GateVerdict[]>()
  for (const v of verdicts) {
    const key = `${stepName(v.step)} · ${v.context} · ${v.gate}`
    groups.set(key, [...(groups.get(key) ?? []), v])
  }
  return [...groups].map(([key, vs]) => {
    const runs: Array<{text: string; times: number}> = []
    for (const v of vs) {
      const text = `${formatMetric(v.value, v.unit)} ${verdictMarks[v.outcome]}`
      const last = runs.at(-1)
      if (last?.text === text) last.times++
      else runs.push({text, times: 1})
    }
    // A counts verdict sums up every interval before it: its last one says the whole of it.
    const said = vs.at(-1)!.said
    return `${key}: ${runs.map((r) => (r.times > 1 ? `${r.text} ×${r.times}` : r.text)).join(', ')}${said ? `; last: ${said}` : ''}`
  })
}

/**
 * Whose seconds a run's events carry (their `at`): a rehearsal's are the scenario's virtual
 * seconds, a live run's are epoch seconds.
 */
export type ClockKind = 'scenario' | 'wall'

const two = (n: number): string => String(n).padStart(2, '0')

/**
 * The time a line happened, to lead it in a log: `[+05:00]` scenario time in a rehearsal (the
 * report's and the chart's timeline, where the fault and the fix are marked), `[14:03:27Z]` UTC
 * wall time live (an incident's timeline, and the journal's, is in UTC).
 */
export function clockStamp(at: number, clock: ClockKind): string {
  if (clock === 'wall') return `[${new Date(Math.floor(at) * 1000).toISOString().slice(11, 19)}Z]`
  const s = Math.max(0, Math.floor(at))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  return `[+${h > 0 ? `${h}:${two(m)}` : two(m)}:${two(s % 60)}]`
}

/**
 * One gate window (a ramp stage, a batch, a watch) in one line, from its last verdict:
 * `gate error-rate ≤ 2% over 30 s (mailbox): 9/9 passes, last 0.00%, 90 s (mailbox 1%)`. `passes` is
 * the run of passes the window ended on, `count` every verdict in it.
 */
export function gateWindowText(last: GateVerdict, passes: number, count: number, seconds: number): string {
  if (last.said) return `gate ${last.gate}: ${last.said}, ${Math.round(seconds)} s${last.context ? ` (${last.context})` : ''}`
  return `gate ${last.gate}: ${passes}/${count} passes, last ${formatMetric(last.value, last.unit)}, ${Math.round(seconds)} s${last.context ? ` (${last.context})` : ''}`
}

/** `{a:100,b:0}`: short enough for one greppable line, unlike JSON with its quotes. */
function compact(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `[${value.map(compact).join(',')}]`
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}:${compact(v)}`)
      .join(',')}}`
  // What is left is a string, number or boolean (or undefined).
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'undefined')
}

function changeText(before: unknown, after: unknown): string {
  if (before === undefined && after === undefined) return ''
  if (before === undefined) return `: ${compact(after)}`
  if (after === undefined) return `: was ${compact(before)}`
  return `: ${compact(before)} → ${compact(after)}`
}

/** The intent says what is about to change; a successful outcome adds nothing worth a line. */
/**
 * What a terminal draws of a change: each of a batch's hook runs is journalled (so a resume never
 * restarts a target twice), but the batch's own line already says it restarts them; on a terminal
 * only one that failed is drawn. The journal and its views keep every one.
 */
export function terminalMutationText(m: Mutation): string | undefined {
  if ((m.kind === 'restart' || m.kind === 'remediate' || m.kind === 'replace') && m.ok !== false) return undefined
  return mutationText(m)
}

export function mutationText(m: Mutation): string | undefined {
  const subject = `change ${m.kind} ${m.resource}`
  if (m.phase === 'intent') return `${subject}${changeText(m.before, m.after)}`
  if (m.ok === false) return `${subject} failed: ${m.error ?? 'no reason given'}`
  return m.note ? `${subject}: ${m.note}` : undefined
}

const arnPattern = /\barn:aws[a-z-]*:([a-z0-9-]+):[a-z0-9-]*:\d*:([^\s,;()]+)/g

/**
 * An ARN as the name a person knows it by: the resource part, without the region and account
 * (which a live run's confirmation names once) and without the load balancer's and target
 * group's generated ids, which nobody reads. A listener keeps its own id: one load balancer has
 * several listeners. The journal and --json keep every ARN whole.
 */
export function shortArn(service: string, resource: string): string {
  if (service !== 'elasticloadbalancing') return resource
  const parts = resource.split('/')
  if (parts[0] === 'targetgroup') return parts.slice(0, 2).join('/')
  if (parts[0] === 'loadbalancer') return `loadbalancer/${parts[2] ?? parts[1]}`
  if (parts[0] === 'listener' || parts[0] === 'listener-rule') return [parts[0], parts[2], ...parts.slice(4)].join('/')
  return resource
}

/** Every ARN in a line of text, shortened (shortArn). */
export function shortenArns(text: string): string {
  return text.replace(arnPattern, (_arn, service: string, resource: string) => shortArn(service, resource))
}

/**
 * The last line of a live plan: how many steps find the world other than they expect, and how
 * many it could not judge because it read nothing for them; "every step" only when it read every one.
 */
export function livePlanVerdict(steps: PlannedStep[]): string {
  const drifted = steps.filter((s) => s.drift).length
  const unread = steps.filter((s) => s.unread)
  const notRead = unread.length === 0 ? '' : `${unread.length === 1 ? `step ${unread[0].index + 1} was` : `${unread.length} steps were`} not read (marked ?)`
  if (drifted > 0) return `${drifted} of ${steps.length} steps find the world other than they expect (marked !)${notRead ? `; ${notRead}` : ''}.`
  if (unread.length === 0) return 'Every step finds what it expects.'
  if (unread.length === steps.length) return `No step was read: ${notRead}.`
  return `Every step read finds what it expects; ${notRead}.`
}

export function planLines(steps: PlannedStep[], runId?: string): string[] {
  const head = `plan: ${steps.length} step${steps.length === 1 ? '' : 's'}${runId ? `, live run ${runId}` : ''}`
  return [
    head,
    ...steps.flatMap((s) => [
      `  ${s.index + 1}. ${s.title}${s.details.length ? `: ${shortenArns(s.details.join('; '))}` : ''}`,
      ...(s.drift ?? []).map((d) => `     ! not as the runbook expects: ${shortenArns(d)}`),
      ...(s.unread ?? []).map((u) => `     ? ${u}`),
    ]),
  ]
}

const label = (step: number): string => `[${stepName(step)}]`

const rps = (value: number): string => `${Math.round(value).toLocaleString('en-US')} rps`

/** Where an assess step placed a pool, in numbers: `mailbox on the map of outlook-2026 (no-guard): 20 of 20 servers out of rotation at 1,500 rps, … placed at 6 broken: stuck; …`. */
export function placeText(pool: string, p: PoolPlace): string {
  const stretch = ([a, b]: [number, number]) => (a === b ? `${a}` : `${a}–${b}`)
  const edges = [
    p.stuckAboveDemand === null ? null : `stuck above ${rps(p.stuckAboveDemand)} with ${p.out} broken`,
    p.stuckOut.length === 0 ? `back with any number broken at this demand` : `stuck with ${p.stuckOut.map(stretch).join(' or ')} broken at this demand`,
  ].filter((e) => e !== null)
  return (
    `${pool} on the map of ${p.scenario} (${p.setup}): ${p.now.servers - p.now.healthy} of ${p.now.servers} servers out of rotation at ${rps(p.now.demand)}, ` +
    `${(p.now.errorRate * 100).toFixed(1)}% errors, those in rotation able to serve ${rps(p.capacity.inRotation)}; placed at ${p.out} broken: ${p.region}; ${edges.join('; ')}`
  )
}

/** One event as the lines a person or grep reads; none for events not worth a line. */
export function formatEvent(event: RunEvent): string[] {
  switch (event.type) {
    case 'plan':
      return planLines(event.steps, event.runId)
    case 'step-start':
      return [`${label(event.step)} start ${event.title}`]
    case 'progress':
      return [`${label(event.step)} progress ${event.message}`]
    case 'bake':
      // A countdown for the live views; the status line before it already says what bakes.
      return []
    case 'placement':
      // The numbers behind the step's sentences, for the page's map: the sentences say it in words.
      return []
    case 'baseline':
      // For a resume to judge against; the progress lines before it and the verdicts say it in words.
      return []
    case 'verdict':
      return [`${label(event.verdict.step)} ${verdictText(event.verdict)}`]
    case 'mutation': {
      const text = mutationText(event.mutation)
      return text ? [`${label(event.mutation.step)} ${text}`] : []
    }
    case 'warning':
      return [event.step === undefined ? `warning: ${event.message}` : `${label(event.step)} warning ${event.message}`]
    case 'step-end':
      return [`${label(event.step)} ${statusWithMessage(statusWord(event.status), event.status, event.message)}`]
    case 'run-end':
      return [`run: ${event.outcome} ${event.message}`.trimEnd()]
    case 'control':
      return [
        `control: ${controlName(event.control)} by ${event.control.operator} on ${event.control.host} (pid ${event.control.pid}): ${event.did ?? event.effect}`,
      ]
  }
}
