import {formatMetric, stepName} from '../format.js'
import {formatTable} from '../report/table.js'
import type {TuneResult, VariantOutcome} from './tune.js'
import {loadText} from './overreach.js'

/**
 * What `sluice tune` prints: the times before and after, the ramps, each gate's margin, and the
 * YAML to paste; its tables fitted to `width` by cutting the ramps' titles and where a gate came
 * nearest its threshold.
 */
export function renderTune(result: TuneResult, width?: number): string {
  // The tables are indented by two.
  const fit = (free: number[]) => ({width: width === undefined ? undefined : width - 2, free})
  const {seeds, demandPercents, slowMinority} = result.robustness
  const variants = result.robustness.shipped.length
  const slow =
    slowMinority === null
      ? ''
      : `, and seed ${seeds[0]} at demand 100% with ${Math.round(slowMinority.share * 100)}% of the servers at ${Math.round(slowMinority.factor * 100)}% of their capacity`
  const lines = [
    `Tuned ${result.runbook} against ${result.scenario} (setup ${result.setup}): each candidate rehearsed ${variants === 1 ? 'once' : `${variants} times`}, seeds ${range(seeds)} × demand ${demandPercents.map((p) => `${p}%`).join(', ')}${slow}`,
    `Time to full traffic: ${seconds(result.secondsToFullTraffic.before)} → ${seconds(result.secondsToFullTraffic.after)}${result.soonerPercent === null ? '' : ` (${result.soonerPercent}% sooner)`}`,
    `  (${result.definition})`,
    '',
    shippedLine(result.climbs, result.robustness.shipped, result.secondsToFullTraffic.before),
  ]
  if (result.steps.length === 0) {
    lines.push(
      '',
      `No schedule tune tried passes every gate in ${variants === 1 ? 'the rehearsal' : `all ${variants} rehearsals`}; the ${result.climbs} are left as they are.`,
    )
    return lines.join('\n')
  }
  const tuned = result.robustness.tuned
  const one = ({ramps: 'ramp', lifts: 'lift', 'ramps and lifts': 'ramp and lift'} as const)[result.climbs]
  lines.push(
    `The tuned ${result.climbs} pass ${tuned.filter((t) => t.passed).length} of ${count(tuned.length, 'rehearsal')}.`,
    '',
    climbsHeading(result),
    indent(
      formatTable(
        ['step', one, 'set', 'shipped', 'tuned'],
        result.steps.map((s) => [
          stepName(s.index),
          s.title,
          s.action === 'lift' ? `${s.set} (lift)` : s.set,
          `[${s.before.schedule.join(', ')}] bake ${s.before.bake} s`,
          `[${s.schedule.join(', ')}] bake ${s.bake} s`,
        ]),
        fit([1]),
      ),
    ),
    ...tightestStepLines(result),
    '',
    `Gates: the value nearest the threshold in ${tuned.length === 1 ? 'the rehearsal' : `any of the ${tuned.length} rehearsals`} of the tuned runbook (and of the shipped one):`,
    indent(
      formatTable(
        ['step', 'gate', 'worst', 'margin', 'shipped', 'where'],
        result.gates.map((g) => {
          const before = result.shippedGates.find((s) => s.index === g.index)
          return [
            stepName(g.index),
            g.gate,
            formatMetric(g.worst, g.unit),
            g.margin === null ? 'no data' : margin(g.margin, g.unit),
            before?.margin == null ? '' : `${formatMetric(before.worst, before.unit)} (${margin(before.margin, before.unit)})`,
            g.at ? `seed ${g.at.seed}, demand ${g.at.demandPercent}%${g.at.slowMinority ? ', slow servers' : ''}, ${g.at.context}` : '',
          ]
        }),
        fit([5]),
      ),
    ),
    '',
    `Proposed ${one} steps (paste over the steps they name, or save the whole runbook with --write FILE):`,
    result.yaml ?? '',
    '',
    `Search: ${count(result.search.rehearsals, 'rehearsal')}, ${count(result.search.passes, 'pass', 'passes')}, ${result.search.seconds.toFixed(1)} s (a whole rehearsal takes ${result.search.millisecondsPerRehearsal} ms; the search stops one at its first verdict that does not pass).`,
  )
  return lines.join('\n')
}

function shippedLine(climbs: TuneResult['climbs'], shipped: VariantOutcome[], before: number | null): string {
  const failed = shipped.filter((t) => !t.passed)
  if (failed.length === 0) return `The shipped ${climbs} pass ${shipped.length === 1 ? 'the rehearsal' : `all ${shipped.length} rehearsals`}.`
  // Variants that fail the same way are one line: usually the same demand on every seed.
  const byReason = new Map<string, VariantOutcome[]>()
  for (const t of failed) {
    const key = `${t.slowMinority ? 'slow ' : ''}${t.reason ?? t.outcome}`
    byReason.set(key, [...(byReason.get(key) ?? []), t])
  }
  const first = before === null ? ' (and the nominal rehearsal does not complete, so there is no time to compare with)' : ''
  return [
    `The shipped ${climbs} pass ${shipped.length - failed.length} of ${count(shipped.length, 'rehearsal')}${first}:`,
    ...[...byReason.values()].map((ts) => `  fail at demand ${where(ts)}: ${ts[0].reason ?? ts[0].outcome}`),
  ].join('\n')
}

/** "90%, 110% (seeds 1–5)", or where the seeds differ by demand, "90% (seeds 2, 4); 100%, 110% (seeds 1–5)": never more than failed. */
function where(ts: VariantOutcome[]): string {
  const slow = ts[0].slowMinority ? ', slow servers' : ''
  const demands = [...new Set(ts.map((t) => t.demandPercent))].sort((a, b) => a - b)
  const bySeeds = new Map<string, number[]>()
  for (const d of demands) {
    const seeds = range(ts.filter((t) => t.demandPercent === d).map((t) => t.seed))
    bySeeds.set(seeds, [...(bySeeds.get(seeds) ?? []), d])
  }
  return [...bySeeds].map(([seeds, ds]) => `${ds.map((p) => `${p}%`).join(', ')} (seeds ${seeds}${slow})`).join('; ')
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}

function margin(value: number, unit: string): string {
  if (unit === '%') return `${value < 0 ? '−' : ''}${Math.abs(value).toFixed(2)} points`
  return formatMetric(value, unit)
}

function seconds(value: number | null): string {
  return value === null ? 'none' : `${value} s`
}

/** `1–5`, or the list when it has gaps. */
function range(values: number[]): string {
  const sorted = [...new Set(values)].sort((a, b) => a - b)
  const contiguous = sorted.every((v, i) => i === 0 || v === sorted[i - 1] + 1)
  return contiguous && sorted.length > 2 ? `${sorted[0]}–${sorted[sorted.length - 1]}` : sorted.join(', ')
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
}

/** What the table of tuned climbs holds, and what bounds their bakes: a ramp's by the TTL, a lift's by its gate's interval. */
function climbsHeading({steps, minBake}: TuneResult): string {
  const ramps = steps.some((s) => s.action === 'ramp')
  const lifts = steps.some((s) => s.action === 'lift')
  const lift = "a lift's schedule is the percent of its type let back"
  if (!lifts) return `Ramps (a bake is never under the TTL of ${minBake} s):`
  return ramps ? `Ramps and lifts by degrees (a ramp's bake is never under the TTL of ${minBake} s; ${lift}):` : `Lifts by degrees (${lift}):`
}

/**
 * Each tuned ramp's change that came nearest what its receiving pool served then, with where: no
 * candidate with a change past it is taken (src/tune/overreach.ts).
 */
function tightestStepLines(result: TuneResult): string[] {
  const lines = result.steps.flatMap((s) => {
    const l = s.tightestStep
    if (l === null) return []
    return [`  ${stepName(s.index)}: ${loadText(l)} [seed ${l.at.seed}, demand ${l.at.demandPercent}%${l.at.slowMinority ? ', slow servers' : ''}]`]
  })
  return lines.length === 0 ? [] : ['', `Each ramp's step nearest what its pool could take, in any rehearsal (a candidate asking more is not taken):`, ...lines]
}
