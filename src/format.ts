import type {GateVerdict, Mutation, PlannedStep, RunEvent, StepStatus} from './ports/io.js'

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

/** Events and verdicts carry the runbook's 0-based step index; people count from 1. */
export function stepName(index: number): string {
  return `step ${index + 1}`
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

/** `gate error-rate ≤ 1% over 60 s: 0.40% pass (ramp 5%)`; a verdict taken outside any phase has no parentheses. */
export function verdictText(v: GateVerdict): string {
  return `gate ${v.gate}: ${formatMetric(v.value, v.unit)} ${v.outcome}${v.context ? ` (${v.context})` : ''}`
}

const verdictMarks: Record<GateVerdict['outcome'], string> = {pass: '✓', fail: '✗', inconclusive: '?'}

/**
 * Verdicts grouped by step, what the step was doing and gate, one line per group with every value
 * in order: an end-of-run summary where a bake's dozens of verdicts stay readable.
 */
export function groupedVerdictLines(verdicts: GateVerdict[]): string[] {
  const groups = new Map<string, GateVerdict[]>()
  for (const v of verdicts) {
    const key = `${stepName(v.step)} · ${v.context} · ${v.gate}`
    groups.set(key, [...(groups.get(key) ?? []), v])
  }
  return [...groups].map(([key, vs]) => `${key}: ${vs.map((v) => `${formatMetric(v.value, v.unit)} ${verdictMarks[v.outcome]}`).join(', ')}`)
}

/** `{a:100,b:0}`: short enough for one greppable line, unlike JSON with its quotes. */
function compact(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `[${value.map(compact).join(',')}]`
  if (typeof value === 'object') return `{${Object.entries(value).map(([k, v]) => `${k}:${compact(v)}`).join(',')}}`
  return String(value)
}

function changeText(before: unknown, after: unknown): string {
  if (before === undefined && after === undefined) return ''
  if (before === undefined) return `: ${compact(after)}`
  if (after === undefined) return `: was ${compact(before)}`
  return `: ${compact(before)} → ${compact(after)}`
}

/** The intent says what is about to change; a successful outcome adds nothing worth a line. */
export function mutationText(m: Mutation): string | undefined {
  const subject = `change ${m.kind} ${m.resource}`
  if (m.phase === 'intent') return `${subject}${changeText(m.before, m.after)}`
  if (m.ok === false) return `${subject} failed: ${m.error ?? 'no reason given'}`
  return undefined
}

export function planLines(steps: PlannedStep[]): string[] {
  const head = `plan: ${steps.length} step${steps.length === 1 ? '' : 's'}`
  return [head, ...steps.map((s) => `  ${s.index + 1}. ${s.title}${s.details.length ? `: ${s.details.join('; ')}` : ''}`)]
}

const label = (step: number): string => `[${stepName(step)}]`

/** One event as the lines a person or grep reads; none for events not worth a line. */
export function formatEvent(event: RunEvent): string[] {
  switch (event.type) {
    case 'plan':
      return planLines(event.steps)
    case 'step-start':
      return [`${label(event.step)} start ${event.title}`]
    case 'progress':
      return [`${label(event.step)} progress ${event.message}`]
    case 'verdict':
      return [`${label(event.verdict.step)} ${verdictText(event.verdict)}`]
    case 'mutation': {
      const text = mutationText(event.mutation)
      return text ? [`${label(event.mutation.step)} ${text}`] : []
    }
    case 'warning':
      return [event.step === undefined ? `warning: ${event.message}` : `${label(event.step)} warning ${event.message}`]
    case 'step-end':
      return [`${label(event.step)} ${statusWord(event.status)} ${event.message}`.trimEnd()]
    case 'run-end':
      return [`run: ${event.outcome} ${event.message}`.trimEnd()]
  }
}
