import type {ReportCard} from './report-card.js'
import type {DrillReport} from './report.js'
import {drillVerdict, finerTickVerdict, observedOf, verdictOf, type Bands, type Figure, type FinerTickVerdict, type Verdict, type Observed} from './verdict.js'

/**
 * A drill run several times (`--repeat N`): one real run is one sample of a random process
 * (arrivals, the order checks land in, the machine), so the report card is read from the median
 * of the runs, each figure's spread beside it, and each outcome by how often it came up. The
 * prediction, and its seeds, are the same every time.
 */
export interface RepeatSummary {
  runs: number
  /** Each figure over the conclusive runs: null where a run had none (no fault, not back). */
  figures: Record<Figure, {min: number | null; median: number | null; max: number | null}>
  /** The median card: each figure's median, each outcome the majority's (a tie counts as yes). */
  median: ReportCard
  predicted: ReportCard
  bands: Bands
  /** How often each outcome came up over the conclusive runs. */
  observed: Observed
  /** Each run's own verdict, in order. */
  verdicts: Verdict[]
  /** The median card judged against the prediction; inconclusive when most runs were machine-limited. */
  verdict: Verdict
  /** The run whose requests lost is nearest the median, for the chart. */
  representative: number
  /** The prediction at a finer tick against the median card (null without one); inconclusive with the verdict. */
  finerTick: FinerTickVerdict | null
}

const figures: Figure[] = ['servedDuringFault', 'lostPercent', 'secondsToFullServiceAfterFix', 'fewestInRotation']

/** The median of the numbers; a run without the figure counts as past every value (not back, no fault). */
function median(values: Array<number | null>): number | null {
  const sorted = [...values].sort((a, b) => (a === null ? 1 : b === null ? -1 : a - b))
  const middle = sorted[Math.floor((sorted.length - 1) / 2)]
  return middle === undefined ? null : middle
}

export function summarizeRepeats(reports: DrillReport[]): RepeatSummary {
  if (reports.length === 0) throw new Error('no drill runs to summarize')
  const judged = reports.map((r) => verdictOf(r))
  const verdicts = judged.map((j) => j.verdict)
  const conclusive = reports.filter((_, i) => verdicts[i].kind === 'agree' || verdicts[i].kind === 'disagree')
  const basis = conclusive.length > 0 ? conclusive : reports
  const cards = basis.map((r) => r.real.card)
  const spread = Object.fromEntries(
    figures.map((f) => {
      const values = cards.map((c) => c[f])
      const numbers = values.filter((v): v is number => v !== null)
      return [f, {min: numbers.length > 0 ? Math.min(...numbers) : null, median: median(values), max: numbers.length > 0 ? Math.max(...numbers) : null}]
    }),
  ) as RepeatSummary['figures']
  const majority = (o: 'cascaded' | 'recovered') => cards.filter((c) => c[o]).length * 2 >= cards.length
  const medianCard: ReportCard = {
    servedDuringFault: spread.servedDuringFault.median,
    lostPercent: spread.lostPercent.median ?? 0,
    secondsToFullServiceAfterFix: spread.secondsToFullServiceAfterFix.median,
    fewestInRotation: spread.fewestInRotation.median,
    cascaded: majority('cascaded'),
    recovered: majority('recovered'),
    before: median(cards.map((c) => c.before)) ?? 1,
  }
  const {predicted} = reports[0]
  const observed = observedOf(cards)
  const {bands} = judged[0]
  const limited = verdicts.filter((v) => v.kind === 'inconclusive')
  const interrupted = reports.some((r) => r.interrupted)
  const verdict =
    !interrupted && limited.length * 2 > reports.length
      ? ({kind: 'inconclusive', reason: `${limited.length} of ${reports.length} runs machine-limited`} as const)
      : drillVerdict(medianCard, predicted.card, bands, null, interrupted, reports[0].spread?.cards, observed)
  const lost = spread.lostPercent.median ?? 0
  let representative = 0
  reports.forEach((r, i) => {
    if (Math.abs(r.real.card.lostPercent - lost) < Math.abs(reports[representative].real.card.lostPercent - lost)) representative = i
  })
  const finer = finerTickVerdict(reports[0], medianCard, null)
  const finerTick = finer && (verdict.kind === 'inconclusive' || verdict.kind === 'interrupted') ? {...finer, verdict} : finer
  return {runs: reports.length, figures: spread, median: medianCard, predicted: predicted.card, bands, observed, verdicts, verdict, representative, finerTick}
}
