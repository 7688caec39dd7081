import {
  baselineText,
  controlName,
  formatMetric,
  mutationText,
  placeText,
  shortenArns,
  statusWithMessage,
  statusWord,
  stepName,
  verdictMeasure,
  verdictText,
} from '../format.js'
import type {ControlIntent} from '../ports/controls.js'
import type {PoolPlace} from '../ports/pool-readings.js'
import type {BaselineTaken, GateVerdict, Mutation, PlannedStep, RecordedMutation, StepStatus} from '../ports/io.js'
import type {JournalEntry, JournalRead} from '../ports/state-store.js'
import {mutations, runStatus, type RunStatus} from './journal.js'

// `sluice journal RUN --markdown`: a run's journal as the timeline that goes into a postmortem,
// for an incident commander reading it afterwards. One run, its way back and every control, in
// journal order, in UTC. It says only what the journal says: the same journal gives the same
// Markdown, byte for byte (no "now" in it), whoever prints it and wherever.

/**
 * Journal text made inert in Markdown, inline or in a table cell: what could start emphasis, a
 * code span, a link or a strikethrough is backslash-escaped, a pipe cannot end a cell, HTML is
 * written as entities, and a line break is `<br>` (a raw newline would end the table row).
 */
export function markdownText(text: string): string {
  return text
    .replace(/[\\`*_[\]|~]/g, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r\n|\r|\n/g, '<br>')
}

const md = markdownText

/** A field the schema does not check, as text: strings as they are, anything else as JSON. */
function said(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? 'nothing')
}

/** An entry's time in UTC: the ISO time normalized (a hand-written offset is taken to UTC). */
function utc(at: string): string {
  const t = Date.parse(at)
  return Number.isNaN(t) ? at : new Date(t).toISOString()
}

/** `14 min 1 s`, `2 h 5 min`, `45 s`. */
function durationText(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`
  const m = Math.floor((s % 3600) / 60)
  return `${Math.floor(s / 3600)} h${m ? ` ${m} min` : ''}`
}

const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)
const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`
const whoOf = (e: Record<string, unknown> | ControlIntent): string => `${said(e.operator)}@${said(e.host)}`
const weightsText = (w: unknown): string =>
  typeof w === 'object' && w !== null
    ? Object.entries(w)
        .map(([k, v]) => `${k}=${said(v)}`)
        .join(' ')
    : said(w)

/** `: 5 by the steps, 3 on the way back`, or ` by the steps` when they all are. */
function madeText(steps: number, back: number, putBack: number): string {
  const parts = [
    ...(steps ? [[steps, 'by the steps'] as const] : []),
    ...(back ? [[back, 'on the way back'] as const] : []),
    ...(putBack ? [[putBack, 'putting back drift'] as const] : []),
  ]
  if (parts.length === 0) return ''
  return parts.length === 1 ? ` ${parts[0][1]}` : `: ${parts.map(([n, what]) => `${n} ${what}`).join(', ')}`
}

/** What each status means, for someone who did not run sluice. */
const statusGloss: Record<RunStatus, string> = {
  completed: 'every step done',
  'gate-failed': 'a gate failed and the run stopped',
  held: 'a step held and waits for a person',
  refused: 'it refused to go on',
  interrupted: 'stopped before its end (a signal, an abort, a lost terminal)',
  failed: 'an API or runtime error stopped it',
  'rolled-back': "the run's changes were taken back",
  'rollback-held': 'the way back stopped partway; `sluice rollback RUN` goes on from there',
  'rolling-back': 'a rollback started and has no end in the journal: it is still going, or it was killed (`sluice journal` says which)',
  unfinished: 'its last attempt has no end in the journal: it is still going, or it was killed (`sluice journal` says which)',
}

/** The part of a run an entry belongs to: forwards (run-start, resume) or its way back (rollback-start). */
type Phase = 'forward' | 'back'

/** Where a change or a verdict happened, as a person reads it: a step, the way back, or drift put back on a resume. */
function placeOf(step: number, phase: Phase): string {
  if (step >= 0) return capital(stepName(step))
  return phase === 'back' ? 'Way back' : 'Put back after drift'
}

/** One row of the timeline. `what` is Markdown; `attempt` rows open an attempt and are set in bold whole. */
interface Row {
  at: string
  who: string
  what: string
  attempt?: boolean
  /** A run of passes of one gate, folded into this row. */
  passes?: {key: string; place: string; first: GateVerdict; last: GateVerdict; count: number; low: number | null; high: number | null; until: string}
}

/** `**lead**: text`, each part escaped; the lead alone when there is no text. */
function led(lead: string, text = ''): string {
  return `**${md(lead.trim())}**${text ? `: ${md(text)}` : ''}`
}

/**
 * Who wrote an entry that a resume or a rollback writes before its own first entry (a change's
 * outcome settled from the live state, drift it found): the operator of that attempt, when the
 * journal goes on to open it; null when it stopped before (it refused over drift, or was not
 * confirmed), since the journal then does not say who.
 */
function preludeWho(entries: JournalEntry[], i: number): string | null {
  if (refusedOver(entries[i])) return null
  for (let j = i + 1; j < entries.length; j++) {
    const e = entries[j]
    if (e.type === 'resume' || e.type === 'rollback-start') return whoOf(e)
    const settled = e.type === 'mutation' && (e.mutation as Mutation).phase === 'outcome' && e.found !== undefined
    if (refusedOver(e) || (!settled && e.type !== 'drift' && e.type !== 'lock-broken')) return null
  }
  return null
}

/** Drift that stopped the resume or rollback that found it: that attempt never opened. */
const refusedOver = (e: JournalEntry): boolean => e.type === 'drift' && (e.by === 'rollback' || e.reapply !== true)

/** The plan steps of a plan entry (journals before plans kept details have none). */
function planSteps(e: JournalEntry): PlannedStep[] {
  return (Array.isArray(e.steps) ? (e.steps as PlannedStep[]) : []).map((s) => ({...s, details: Array.isArray(s.details) ? s.details : []}))
}

const sameStep = (a: PlannedStep, b: PlannedStep | undefined): boolean =>
  b !== undefined && a.title === b.title && a.action === b.action && JSON.stringify(a.details) === JSON.stringify(b.details)

/** A JSON text with its keys sorted, to tell two recorded states apart whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value === 'object' && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'undefined'
}

/** The run's timeline as Markdown: title, summary, plan, timeline, and the net change per resource. */
export function timelineMarkdown(runId: string, read: JournalRead): string {
  const {entries} = read
  const first = entries[0]
  const start = first?.type === 'run-start' ? first : undefined
  const day = first ? utc(first.at).slice(0, 10) : ''
  const time = (at: string): string => {
    const iso = utc(at)
    return iso.slice(0, 10) === day ? iso.slice(11, 19) : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
  }
  const changes = mutations(read)
  const changeAt = new Map<number, RecordedMutation>(changes.map((m) => [m.seq, m]))
  const phaseAt = new Map<number, Phase>()

  // The timeline, row by row.
  const rows: Row[] = []
  const firstPlan = entries.find((e) => e.type === 'plan')
  const plans: Array<{at: string; steps: PlannedStep[]; who: string}> = []
  let who = '?'
  let phase: Phase = 'forward'
  const add = (e: JournalEntry, what: string, by = who): void => void rows.push({at: e.at, who: by, what})
  entries.forEach((e, i) => {
    phaseAt.set(e.seq, e.type === 'rollback-start' ? 'back' : e.type === 'run-start' || e.type === 'resume' ? 'forward' : phase)
    switch (e.type) {
      case 'run-start': {
        who = whoOf(e)
        phase = 'forward'
        const from = typeof e.runbookFile === 'string' ? `from ${e.runbookFile}` : 'from command-line flags'
        const supersedes = e.supersedes ? `; it supersedes run ${said(e.supersedes)}` : ''
        rows.push({at: e.at, who, attempt: true, what: led('Run started', `${said(e.runbookName)} ${from}, pid ${said(e.pid)}${supersedes}`)})
        return
      }
      case 'resume': {
        who = whoOf(e)
        phase = 'forward'
        const reapply =
          Array.isArray(e.reapply) && e.reapply.length > 0 ? `\nputs back what drifted first: ${e.reapply.map((r) => shortenArns(said(r))).join('; ')}` : ''
        rows.push({
          at: e.at,
          who,
          attempt: true,
          what: led(`Resumed by ${said(e.operator)}`, `from ${stepName(e.fromStep as number)}, pid ${said(e.pid)}${reapply}`),
        })
        return
      }
      case 'rollback-start': {
        who = whoOf(e)
        phase = 'back'
        const how = [`pid ${said(e.pid)}`]
        if (e.continues) how.push('going on from where the way back stopped')
        if (e.now) how.push('the rest at once (--now)')
        if (Array.isArray(e.fromLive) && e.fromLive.length > 0) how.push(`planned from what is there now (--from-live): ${e.fromLive.map(said).join('; ')}`)
        const undo = Array.isArray(e.undo) ? e.undo.map((u) => shortenArns(said(u))) : []
        const alone = Array.isArray(e.leftAlone) ? e.leftAlone.map((l) => `left alone: ${shortenArns(said(l))}`) : []
        const lead = `${e.continues ? 'Rollback goes on' : 'Rollback started'} by ${said(e.operator)}`
        rows.push({at: e.at, who, attempt: true, what: led(lead, [how.join(', '), ...undo, ...alone].join('\n'))})
        return
      }
      case 'plan': {
        const steps = planSteps(e)
        plans.push({at: e.at, steps, who})
        const base = firstPlan ? planSteps(firstPlan) : []
        const again =
          e !== firstPlan &&
          steps.every((s) =>
            sameStep(
              s,
              base.find((b) => b.index === s.index),
            ),
          )
        const which =
          steps.length === 0
            ? 'no steps'
            : `${plural(steps.length, 'step')} (${stepName(steps[0].index)}${steps.length > 1 ? ` to ${stepName(steps.at(-1)!.index)}` : ''})`
        add(e, md(e === firstPlan ? `Plan shown: ${which}; see Plan` : again ? `Plan shown again: ${which}` : `A new plan shown: ${which}; see Plan`))
        return
      }
      case 'step-start':
        add(e, led(`${capital(stepName(e.step as number))} started`, said(e.title)))
        return
      case 'step-end': {
        const status = e.status as StepStatus
        const word = typeof statusWord(status) === 'string' ? statusWord(status) : said(e.status)
        const text = `${capital(stepName(e.step as number))} ${typeof statusWord(status) === 'string' ? statusWithMessage(word, status, said(e.message), ': ') : `${word}: ${said(e.message)}`}`
        add(e, status === 'done' || status === 'skipped' ? md(text) : `**${md(text)}**`)
        return
      }
      case 'progress': {
        // The way back says so itself (`way back: mailbox 50%`).
        const message = shortenArns(said(e.message))
        add(e, md(/^way back\b/i.test(message) ? capital(message) : `${placeOf(e.step as number, phase)}: ${message}`))
        return
      }
      case 'bake': {
        // Said already by the progress line before it (`mailbox at 5% …, baking 60 s`), mostly.
        const before = entries[i - 1]
        if (before?.type === 'progress' && before.step === e.step && said(before.message).includes(`baking ${said(e.seconds)} s`)) return
        add(e, md(`${placeOf(e.step as number, phase)}: bakes ${said(e.seconds)} s`))
        return
      }
      case 'placement':
        add(e, md(`${placeOf(e.step as number, phase)}: ${placeText(said(e.pool), e.place as PoolPlace)}`))
        return
      case 'baseline':
        add(e, md(`${placeOf(e.step as number, phase)}: baseline, ${baselineText(e.baseline as BaselineTaken)}`))
        return
      case 'warning':
        add(e, led('Warning', `${typeof e.step === 'number' ? `${placeOf(e.step, phase)}: ` : ''}${said(e.message)}`))
        return
      case 'mutation': {
        const m = e.mutation as Mutation
        const place = placeOf(m.step, phase)
        if (m.phase === 'intent') {
          const recorded = changeAt.get(e.seq)
          const never = recorded && !recorded.outcome ? ' (its outcome was never recorded)' : ''
          add(e, md(`${place}: ${shortenArns(mutationText(m) ?? '')}${never}`))
        } else if (m.ok === false) {
          add(e, `**${md(`${place}: ${shortenArns(mutationText(m) ?? '')}`)}**`)
        } else if (e.found !== undefined) {
          // Settled by a resume or a rollback from the live state, before its own first entry.
          const by = preludeWho(entries, i)
          const change = shortenArns(mutationText({...m, phase: 'intent'}) ?? '')
          add(
            e,
            md(
              `${place}: ${change}: its outcome was never recorded; settled from what is there: ${said(e.found)}${by ? '' : ' (the journal does not say by whom)'}`,
            ),
            by ?? '—',
          )
        }
        // A change that went through has its row already, at its intent.
        return
      }
      case 'verdict': {
        const v = e.verdict as GateVerdict
        const place = placeOf(v.step, phase)
        if (v.outcome === 'pass') {
          const key = `${who}\u0000${v.step}\u0000${v.gate}\u0000${v.context}`
          const last = rows.at(-1)
          if (last?.passes?.key === key) {
            const p = last.passes
            p.count++
            p.last = v
            p.until = e.at
            if (v.value !== null) {
              p.low = p.low === null ? v.value : Math.min(p.low, v.value)
              p.high = p.high === null ? v.value : Math.max(p.high, v.value)
            }
            return
          }
          rows.push({at: e.at, who, what: '', passes: {key, place, first: v, last: v, count: 1, low: v.value, high: v.value, until: e.at}})
          return
        }
        const text = `${place}: ${shortenArns(verdictText(v))}`
        add(e, v.outcome === 'fail' ? `**${md(text)}**` : md(text))
        return
      }
      case 'control': {
        const c = e.control as ControlIntent
        const sent = Date.parse(c.at)
        const late = Number.isNaN(sent) ? 0 : (Date.parse(e.at) - sent) / 1000
        const when = late >= 1 ? ` (sent at ${time(c.at)}, taken up ${durationText(late)} later)` : ''
        const effect = said(e.effect)
        const did = typeof e.did === 'string' ? (e.did.startsWith(effect) ? e.did : `${e.did} (${effect})`) : effect
        add(e, led(`sluice ${controlName(c)}`, `${did}${when}`), whoOf(c))
        return
      }
      case 'drift': {
        const found = Array.isArray(e.found) ? e.found.map((f) => shortenArns(said(f))) : [said(e.found)]
        const byRollback = e.by === 'rollback'
        const then = byRollback
          ? 'the rollback refused to plan over it; nothing was changed'
          : e.reapply === true
            ? 'the resume puts it back (--reapply)'
            : 'the resume stopped; nothing was changed'
        const by = e.operator !== undefined ? whoOf(e) : preludeWho(entries, i)
        const unsaid = by ? [] : ['(the journal does not say by whom)']
        add(e, led(byRollback ? 'Drift found by a rollback' : 'Drift found by a resume', [...found, then, ...unsaid].join('\n')), by ?? '—')
        return
      }
      case 'run-end':
        add(e, led(`Run ended: ${said(e.outcome)}`, shortenArns(said(e.message))))
        return
      case 'rollback-end': {
        const message = e.message !== undefined ? said(e.message) : ''
        const weights = e.weights !== undefined && !message.includes(weightsText(e.weights)) ? `; weights left at ${weightsText(e.weights)}` : ''
        add(e, led(`Rollback ended: ${e.outcome !== undefined ? said(e.outcome) : 'rolled-back'}`, `${shortenArns(message)}${weights}`))
        return
      }
      case 'lock-broken': {
        const forRun = e.byRun !== undefined && e.byRun !== runId ? ` for run ${said(e.byRun)}` : ''
        const text = `lock ${said(e.lockId)} on ${shortenArns(said(e.resource))}, held by run ${said(e.brokenRunId)}, broken by ${said(e.operator)} on ${said(e.host)} (pid ${said(e.pid)})${forRun}`
        add(e, led('Lock broken', text), whoOf(e))
        return
      }
      default: {
        // A kind this sluice does not know (a newer sluice wrote it): every field, never dropped.
        const {seq: _seq, at: _at, type, ...fields} = e
        const text = Object.entries(fields)
          .map(([k, v]) => `${k}: ${said(v)}`)
          .join('; ')
        add(e, led(`Entry of a kind this sluice does not know: ${type}`, text), e.operator !== undefined && e.host !== undefined ? whoOf(e) : who)
      }
    }
  })
  for (const row of rows) {
    const p = row.passes
    if (!p) continue
    if (p.count === 1) row.what = md(`${p.place}: ${shortenArns(verdictText(p.first))}`)
    else {
      const range =
        p.low !== null && p.high !== null && p.low !== p.high ? `, from ${formatMetric(p.low, p.last.unit)} to ${formatMetric(p.high, p.last.unit)}` : ''
      const context = p.last.context ? ` (${p.last.context})` : ''
      // A counts judge's verdict is its sentence: the last one says how sure, of what, on how much.
      const last = p.last.said ?? verdictMeasure(p.last)
      row.what = md(`${p.place}: gate ${p.last.gate}: ${p.count} passes in a row to ${time(p.until)}${range}, last ${last}${context}`)
    }
  }

  const out: string[] = []
  const runbook = start ? said(start.runbookName) : '?'
  out.push(`# Run ${md(runId)}: ${md(runbook)}`, '')
  if (!first) {
    out.push(read.torn ? `The journal holds no whole entry: its only line (${read.torn.line}) is a torn write.` : 'The journal holds no entry.')
    return `${out.join('\n')}\n`
  }
  out.push(`The incident timeline of this run, from its journal. All times are UTC, on ${day} unless a date is given.`, '')

  // Summary.
  const status = runStatus(read)
  const ends = entries.filter((e) => e.type === 'run-end')
  const backs = entries.filter((e) => e.type === 'rollback-end')
  const last = entries.at(-1)!
  const ended = status !== 'unfinished' && status !== 'rolling-back'
  const elapsed = (Date.parse(last.at) - Date.parse(first.at)) / 1000
  const summary: Array<[string, string]> = []
  summary.push(['Status', `**${md(status)}**: ${md(statusGloss[status].replace('RUN', runId))}`])
  if (start) {
    const file = typeof start.runbookFile === 'string' ? `runbook file ${start.runbookFile}` : 'runbook from command-line flags'
    summary.push(['Started', md(`${time(first.at)} by ${said(start.operator)} on ${said(start.host)} (pid ${said(start.pid)}), ${file}`)])
  }
  summary.push([
    'Ended',
    md(
      ended
        ? `${time(last.at)}, ${durationText(elapsed)} after it started`
        : `not yet; the last entry is at ${time(last.at)}, ${durationText(elapsed)} after it started`,
    ),
  ])
  const endText = (e: JournalEntry, outcome: unknown): string =>
    `${said(outcome)} at ${time(e.at)}${e.message !== undefined ? `: ${shortenArns(said(e.message))}` : ''}`
  summary.push([
    'Run',
    md(ends.length === 0 ? 'no end recorded (it was killed, or it is still going)' : ends.map((e) => endText(e, e.outcome)).join('; then ')),
  ])
  const rollbackStarts = entries.filter((e) => e.type === 'rollback-start')
  if (rollbackStarts.length > 0) {
    const backEnds = backs.map((e) => endText(e, e.outcome ?? 'rolled-back'))
    if (status === 'rolling-back') backEnds.push('the last rollback has no end recorded (it was killed, or it is still going)')
    summary.push(['Way back', md(`${plural(rollbackStarts.length, 'rollback')}: ${backEnds.join('; then ')}`)])
  } else summary.push(['Way back', 'none: the run was not rolled back'])
  const attempts = entries.filter((e) => e.type === 'run-start' || e.type === 'resume' || e.type === 'rollback-start')
  if (attempts.length > 1)
    summary.push([
      'Attempts',
      md(
        attempts
          .map(
            (e) =>
              `${e.type === 'run-start' ? 'started' : e.type === 'resume' ? 'resumed' : e.continues ? 'rollback went on' : 'rollback'} by ${whoOf(e)} at ${time(e.at)}`,
          )
          .join('; '),
      ),
    ])
  const intents = changes.filter((m) => m.phase === 'intent')
  const forwards = intents.filter((m) => m.step >= 0).length
  const back = intents.filter((m) => m.step < 0 && phaseAt.get(m.seq) === 'back').length
  const putBack = intents.filter((m) => m.step < 0 && phaseAt.get(m.seq) !== 'back').length
  const failed = intents.filter((m) => m.outcome && !m.outcome.ok).length
  const unknown = intents.filter((m) => !m.outcome).length
  const how = [...(failed ? [`**${failed} failed**`] : []), ...(unknown ? [`**${unknown} with no outcome recorded**`] : [])]
  summary.push(['Changes', `${md(`${plural(intents.length, 'change')}${madeText(forwards, back, putBack)}`)}${how.length ? `; ${how.join(', ')}` : ''}`])
  const verdicts = entries.filter((e) => e.type === 'verdict').map((e) => e.verdict as GateVerdict)
  const count = (outcome: GateVerdict['outcome']) => verdicts.filter((v) => v.outcome === outcome).length
  const firstFail = entries.find((e) => e.type === 'verdict' && (e.verdict as GateVerdict).outcome === 'fail')
  const failText = firstFail
    ? md(
        `, the first at ${time(firstFail.at)}: ${stepName((firstFail.verdict as GateVerdict).step)}, ${shortenArns(verdictText(firstFail.verdict as GateVerdict))}`,
      )
    : ''
  summary.push([
    'Gate verdicts',
    `${count('pass')} passed, ${count('fail') ? `**${count('fail')} failed**${failText}` : '0 failed'}${count('inconclusive') ? `, ${count('inconclusive')} inconclusive` : ''}`,
  ])
  const controls = entries.filter((e) => e.type === 'control')
  summary.push([
    'Controls',
    controls.length === 0
      ? 'none received'
      : md(
          `${controls.length} received: ${controls.map((e) => `${controlName(e.control as ControlIntent)} by ${whoOf(e.control as ControlIntent)} at ${time(e.at)} (${said(e.effect)})`).join('; ')}`,
        ),
  ])
  const drifts = entries.filter((e) => e.type === 'drift')
  if (drifts.length > 0) summary.push(['Drift', md(`found ${plural(drifts.length, 'time')}, at ${drifts.map((e) => time(e.at)).join(', ')}`)])
  const broken = entries.filter((e) => e.type === 'lock-broken')
  if (broken.length > 0) summary.push(['Locks broken', md(broken.map((e) => `${said(e.lockId)} by ${whoOf(e)} at ${time(e.at)}`).join('; '))])
  const warnings = entries.filter((e) => e.type === 'warning').length
  if (warnings > 0) summary.push(['Warnings', String(warnings)])
  if (start && typeof start.aws === 'object' && start.aws !== null) {
    const identity = start.identity as {account?: unknown; arn?: unknown} | undefined
    // The account first: a postmortem's first question is where the changes were made.
    const account = identity?.account ? [`account ${said(identity.account)} as ${said(identity.arn)}`] : []
    const aws = [...account, ...Object.entries(start.aws).map(([k, v]) => `${k} ${said(v)}`)]
    if (aws.length > 0) summary.push(['AWS', md(aws.join(', '))])
  }
  out.push('## Summary', '', ...summary.map(([k, v]) => `- **${k}:** ${v}`), '')
  if (read.torn)
    out.push(
      `> **Warning:** the journal's last line (${read.torn.line}, ${read.torn.bytes} bytes) is a torn write, cut off as it was written; this timeline ends before it.`,
      '',
    )

  // The plan, and any later one that differs from it.
  out.push('## Plan', '')
  if (plans.length === 0) out.push('No plan was recorded: the run stopped before it showed one.', '')
  plans.forEach((p, n) => {
    const base = plans[0].steps
    if (
      n > 0 &&
      p.steps.every((s) =>
        sameStep(
          s,
          base.find((b) => b.index === s.index),
        ),
      )
    )
      return
    if (n > 0) out.push(`A new plan, shown at ${time(p.at)} by ${md(p.who)}:`, '')
    else out.push(`As shown at ${time(p.at)} (runbook ${md(runbook)}):`, '')
    for (const s of p.steps) {
      const details = s.details.length > 0 ? `: ${md(shortenArns(s.details.map(said).join('; ')))}` : ''
      out.push(`${s.index + 1}. **${md(said(s.title))}** (${md(said(s.action))})${details}`)
      for (const d of Array.isArray(s.drift) ? s.drift : []) out.push(`   - not as the runbook expects: ${md(shortenArns(said(d)))}`)
    }
    out.push('')
  })

  // The timeline.
  out.push('## Timeline', '', '| Time (UTC) | Who | What |', '| --- | --- | --- |')
  for (const row of rows) {
    const t = md(time(row.at))
    const w = md(row.who)
    out.push(row.attempt ? `| **${t}** | **${w}** | ${row.what} |` : `| ${t} | ${w} | ${row.what} |`)
  }
  out.push('')

  // The net effect, per resource.
  out.push('## Changes', '')
  const nets = netChanges(changes, phaseAt)
  if (nets.length === 0) out.push('The run recorded no change.')
  else {
    out.push(
      'Each resource as the run found it (before its first change) → as its journal says it was left (after its last), the way back included; changes that failed are left out.',
      '',
      '| Resource | Found → left | Changes |',
      '| --- | --- | --- |',
      ...nets.map((n) => `| ${n.what} | ${n.net} | ${n.made} |`),
    )
  }
  return `${out.join('\n')}\n`
}

/** What a change is about, for netting: one weighted record, a group's targets, one restricted type, the freeze. */
function subjectOf(m: Mutation): string {
  switch (m.kind) {
    case 'register':
    case 'deregister':
      return `${m.resource}\u0000targets`
    case 'restrict':
    case 'lift':
    case 'restriction-share': {
      const r = (m.after ?? m.before) as {type?: unknown} | null | undefined
      return `${m.resource}\u0000restriction\u0000${said(r?.type)}`
    }
    case 'freeze':
    case 'unfreeze':
      return `${m.resource}\u0000freeze`
    default:
      return `${m.resource}\u0000${m.kind}`
  }
}

/**
 * A recorded state (weights, a restriction, a freeze record) as the run's vocabulary writes a
 * change's before and after (mutationText's), alone; none for null.
 */
function valueText(value: unknown): string {
  if (value === null || value === undefined) return 'none'
  const change = mutationText({step: 0, phase: 'intent', kind: 'weights', resource: '', after: value}) ?? ''
  return change.slice(change.indexOf(': ') + 2)
}

/** What a subject is called in the Changes table. */
function subjectName(m: Mutation): string {
  switch (m.kind) {
    case 'register':
    case 'deregister':
      return `targets of ${m.resource}`
    case 'restrict':
    case 'lift':
    case 'restriction-share':
      return `restriction on ${said(((m.after ?? m.before) as {type?: unknown} | null)?.type)} on ${m.resource}`
    case 'freeze':
    case 'unfreeze':
      return 'the change freeze'
    default:
      return `${m.kind} of ${m.resource}`
  }
}

/** Each subject's net change (first before → last after) as a row, in the order the run first changed them. */
function netChanges(all: RecordedMutation[], phaseAt: Map<number, Phase>): Array<{what: string; net: string; made: string}> {
  const bySubject = new Map<string, RecordedMutation[]>()
  for (const m of all.filter((x) => x.phase === 'intent')) bySubject.set(subjectOf(m), [...(bySubject.get(subjectOf(m)) ?? []), m])
  return [...bySubject.values()].map((list) => {
    const took = list.filter((m) => m.outcome?.ok !== false)
    const failed = list.length - took.length
    const unknown = list.filter((m) => !m.outcome).length
    const back = list.filter((m) => m.step < 0 && phaseAt.get(m.seq) === 'back').length
    const putBack = list.filter((m) => m.step < 0 && phaseAt.get(m.seq) !== 'back').length
    const made = `${md(`${list.length}${madeText(list.length - back - putBack, back, putBack)}`)}${failed ? md(`; ${failed} failed`) : ''}${unknown ? `; **${md(`${unknown} with no outcome recorded`)}**` : ''}`
    const what = md(shortenArns(subjectName(list[0])))
    if (took.length === 0) return {what, net: 'unchanged: every change failed', made}
    const head = took[0]
    const tail = took.at(-1)!
    let net: string
    if (head.kind === 'register' || head.kind === 'deregister') {
      // Targets are taken out and returned, not set: what is left is those still out.
      const out = new Set<string>()
      for (const m of took) {
        const ids = ((m.kind === 'deregister' ? m.before : m.after) ?? []) as unknown[]
        for (const id of ids.map(said)) {
          if (m.kind === 'deregister') out.add(id)
          else out.delete(id)
        }
      }
      net = out.size === 0 ? 'every target taken out is back in rotation' : `**left out of rotation**: ${md([...out].join(', '))}`
    } else if (canonical(head.before) === canonical(tail.after)) net = `**back as the run found it**: ${md(shortenArns(valueText(tail.after)))}`
    else net = md(shortenArns(`${valueText(head.before)} → ${valueText(tail.after)}`))
    if (tail.outcome === undefined) net += md(' (the last change has no outcome recorded: check what is there)')
    return {what, net, made}
  })
}
