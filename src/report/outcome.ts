import type {RunResult} from '../engine/engine.js'
import type {SimulationRecord} from '../sim/record.js'
import type {RollbackAfterRun} from '../way-back/undo-run.js'

/**
 * A rehearsal's outcome in two sentences, the first and last lines of its report: what the
 * runbook did from its own start (not the outage before it), then whether it would be safe to
 * run. A tired reader on a short terminal sees these even when the rest scrolls off.
 */
export interface OutcomeFacts {
  run: RunResult
  record: SimulationRecord
  startAt: number
  endAt: number
  recovered: boolean
  /** Scenario second from which service was full to the end; null when it never was. */
  fullServiceFrom: number | null
  restrictedAtEnd: string[]
  /** Share of demand turned away by restrictions in the last tick. */
  restrictedPercentAtEnd: number
  /** How the rollback after the runbook ended (--rollback), when one was rehearsed. */
  rollbackOutcome?: RollbackAfterRun['outcome']
  /** Other seeds of the rehearsal were not safe (run --dry-run over seeds). */
  safeOnShownSeedOnly?: boolean
}

const oneDecimal = (x: number): string => (Math.round(x * 10) / 10).toString()
const seconds = (s: number): string => `${Math.round(s)} s`

/**
 * The share of the demand asked for (restricted traffic left out, as full service leaves it out)
 * that completed at the point nearest before `at`: how the service stood at that moment.
 */
export function servedShareAt(record: SimulationRecord, at: number): number {
  let i = 0
  while (i + 1 < record.ticks && record.t[i + 1] <= at) i++
  const asked = record.demand[i] - record.restrictedDemand[i]
  if (!(asked > 0)) return 100
  return Math.max(0, Math.min(100, (record.served[i] / asked) * 100))
}

/** The lowest share of the demand asked for that completed between two moments: the worst the service got meanwhile. */
function worstShareBetween(record: SimulationRecord, from: number, to: number): number {
  let worst = 100
  for (let i = 0; i < record.ticks; i++) {
    if (record.t[i] < from || record.t[i] > to) continue
    const asked = record.demand[i] - record.restrictedDemand[i]
    if (asked > 0) worst = Math.min(worst, (record.served[i] / asked) * 100)
  }
  return Math.max(0, worst)
}

/** What the runbook did, from its own start: how it ended, and where it left the service against where it found it. */
function didSentence(f: OutcomeFacts): string {
  const {run} = f
  const took = seconds(f.endAt - f.startAt)
  const before = oneDecimal(servedShareAt(f.record, f.startAt - 1e-9))
  const after = oneDecimal(servedShareAt(f.record, f.endAt))
  const service = `${after}% of demand completed at its end, ${before}% at its start`
  const restricted = f.restrictedAtEnd.length > 0 ? `; ${f.restrictedAtEnd.join(', ')} still restricted` : ''
  if (run.outcome === 'completed') {
    const steps = run.steps.length === 1 ? 'its step' : run.steps.length === 2 ? 'both its steps' : `all ${run.steps.length} steps`
    if (f.recovered) {
      const back =
        f.fullServiceFrom === null || f.fullServiceFrom <= f.startAt
          ? 'service stayed at full throughout'
          : `service back to full ${seconds(f.fullServiceFrom - f.startAt)} after its start`
      return `${run.runbook} did ${steps} in ${took}: ${back}${restricted}.`
    }
    return `${run.runbook} did ${steps} in ${took}, but service is not back to full: ${service}${restricted}.`
  }
  const at = run.stoppedAt ? ` at step ${run.stoppedAt.step + 1} (${run.stoppedAt.title})` : ''
  return `${run.runbook} ${stoppedWords[run.outcome]}${at} after ${took}: ${service}${restricted}.`
}

/** How a run that did not complete stopped, as a verb phrase. */
export const stoppedWords: Record<Exclude<RunResult['outcome'], 'completed'>, string> = {
  'gate-failed': 'stopped on a failed gate',
  held: 'held',
  failed: 'failed',
  refused: 'was refused',
  interrupted: 'was interrupted',
}

/** Whether the rehearsal shows it safe to run: it completed, no gate failed, service ended full and never fell below where it started. */
function safeSentence(f: OutcomeFacts): string {
  const {run} = f
  const verdicts = run.steps.flatMap((s) => s.verdicts)
  const failed = verdicts.filter((v) => v.outcome === 'fail').length
  const before = servedShareAt(f.record, f.startAt - 1e-9)
  const worst = worstShareBetween(f.record, f.startAt, f.endAt)
  // A dip of a point or two is noise in the simulated fleet's ticks, not harm done.
  const dipped = worst < before - 2 ? `, though service fell to ${oneDecimal(worst)}% on the way (from ${oneDecimal(before)}% at its start)` : ''
  if (run.outcome === 'interrupted') return 'Not judged safe or unsafe: the rehearsal was interrupted before it ended.'
  if (run.outcome !== 'completed') return `Not safe to run as written: ${run.stoppedAt?.message ?? run.message}.`
  // A rollback's outcome is the way back's own: done, held (a gate failed on the way) or interrupted.
  if (f.rollbackOutcome && f.rollbackOutcome !== 'done')
    return `Not safe to run as written: the rollback after it ${f.rollbackOutcome === 'interrupted' ? 'was interrupted' : f.rollbackOutcome}.`
  if (!f.recovered) return 'Not shown safe: it completed, but the service it leaves is not at full.'
  const gates =
    verdicts.length === 0
      ? 'no gate judged it, so live nothing would stop it if the fleet differs'
      : failed === 0
        ? `every gate passed (${verdicts.length} verdicts)`
        : `${failed} of ${verdicts.length} gate verdicts failed on the way and it went on`
  // Safe on the seed shown while another seed was not: said so, never "safe to run", and the verdict over seeds follows.
  return f.safeOnShownSeedOnly ? `Safe on the seed shown only: ${gates}${dipped}; not on every seed:` : `Safe to run as rehearsed: ${gates}${dipped}.`
}

export function rehearsalOutcome(f: OutcomeFacts): string[] {
  return [didSentence(f), safeSentence(f)]
}

/**
 * A single action rehearsed (`sluice freeze --dry-run`, `restrict`, `lift`, `ramp`, `cycle`): what
 * it does, as its step said, and what it did to the rehearsal fleet, not the scenario's whole story.
 */
export function singleActionOutcome(f: OutcomeFacts, action: {name: string; changesTraffic: boolean}): string[] {
  const step = f.run.steps[0]
  const did = step ? `${step.status}${step.message ? `: ${step.message}` : ''}` : `${f.run.outcome}: ${f.run.message}`
  const lines = [`sluice ${action.name} (rehearsed; nothing live changed) ${did}.`]
  if (!action.changesTraffic) {
    lines.push(`It changes no traffic; run it without --dry-run to do it.`)
    return lines
  }
  const verdicts = f.run.steps.flatMap((s) => s.verdicts)
  const failed = verdicts.filter((v) => v.outcome === 'fail').length
  const gates =
    verdicts.length === 0
      ? f.endAt - f.startAt < 1
        ? ''
        : '; no gate judged it'
      : failed === 0
        ? `; every gate passed (${verdicts.length} verdicts)`
        : `; ${failed} of ${verdicts.length} gate verdicts failed`
  const restricted =
    f.restrictedAtEnd.length > 0
      ? `${f.restrictedAtEnd.join(', ')} restricted at its end (${oneDecimal(f.restrictedPercentAtEnd)}% of demand turned away)`
      : 'nothing restricted at its end'
  // An action that takes effect at once has no before and after on the fleet worth a figure: the
  // scenario's own outage moves more in that instant than the action does.
  if (f.endAt - f.startAt < 1) lines.push(`On the rehearsal fleet it took effect at once: ${restricted}${gates}.`)
  else {
    const before = oneDecimal(servedShareAt(f.record, f.startAt - 1e-9))
    const after = oneDecimal(servedShareAt(f.record, f.endAt))
    lines.push(
      `On the rehearsal fleet, over ${seconds(f.endAt - f.startAt)}: ${before}% of demand completed before it, ${after}% after; ${restricted}${gates}.`,
    )
  }
  return lines
}
