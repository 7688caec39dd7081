import {metricUnits, type Clock, type MetricsPort, type Reading} from '../ports/control-plane.js'
import type {RunControls} from '../ports/controls.js'
import {describeBaseline, describeGate, type Gate} from '../runbook/gate.js'
import type {GateResult, GateVerdict} from '../ports/io.js'
import {formatMetric, noDataWhy, stepName, verdictMeasure} from '../format.js'

type Judged = Pick<GateVerdict, 'outcome' | 'bound' | 'why'>

/**
 * A verdict from a reading and, for a relative gate, its baseline's. Too few requests, in the
 * window or in the baseline's, is inconclusive rather than a pass or a fail: one failure in three
 * requests is not a 33% error rate of anything.
 */
export function judge(gate: Gate, reading: Reading, baseline?: Reading): Judged {
  const {value, requests} = reading
  if (value === null) return {outcome: 'inconclusive', bound: null, why: noDataWhy}
  const least = gate.minRequests
  if (least !== undefined && (requests ?? 0) < least)
    return {outcome: 'inconclusive', bound: null, why: `${Math.round(requests ?? 0)} requests in the window, fewer than minRequests ${least}`}
  if (gate.metric === 'healthy-targets') return {outcome: value >= gate.threshold ? 'pass' : 'fail', bound: gate.threshold}
  let bound = gate.threshold
  if (gate.baseline) {
    const of = describeBaseline(gate.baseline)
    if (!baseline || baseline.value === null) return {outcome: 'inconclusive', bound: null, why: `the baseline (${of}) had no data`}
    if (least !== undefined && (baseline.requests ?? 0) < least)
      return {
        outcome: 'inconclusive',
        bound: null,
        why: `the baseline (${of}) had ${Math.round(baseline.requests ?? 0)} requests, fewer than minRequests ${least}`,
      }
    bound = gate.compare === 'ratio' ? baseline.value * gate.threshold : baseline.value + gate.threshold
  }
  return {outcome: value <= bound ? 'pass' : 'fail', bound}
}

export interface GateWatch {
  gate: Gate
  metrics: MetricsPort
  clock: Clock
  signal: AbortSignal
  /** Seconds the gate watches at the least (the bake). */
  bake: number
  step: number
  context: string
  onVerdict: (verdict: GateVerdict) => void
  /** A live run's controls: a pause stops counting the bake; a promote ends it early. */
  controls?: RunControls
  /** A gate relative to `before`: the reading over the window before the step's change, read once. */
  before?: () => Promise<Reading>
}

/**
 * Watches a gate through a bake: a verdict every `interval`. It fails at `failureLimit` failed
 * verdicts or `inconclusiveLimit` verdicts without data, and passes once the bake is over and the
 * last `successes` verdicts passed in a row. A bake that ends without enough passes in a row gets
 * that many more intervals, then fails: missing data is never a pass. A source that cannot be read
 * (the adapter has already retried within its deadline) fails the gate at once, naming the source.
 *
 * With a live run's controls: time while the run is paused does not count towards the bake (the
 * gate is still measured, and still fails on bad verdicts), and a promote that arrives during the
 * bake ends it early: the gate passes as soon as it has its `successes` passes in a row, never
 * before.
 */
export async function watchGate(w: GateWatch): Promise<GateResult> {
  const {gate, clock} = w
  const verdicts: GateVerdict[] = []
  const span = Math.max(w.bake, gate.interval) + gate.successes * gate.interval
  // Seconds of bake counted so far: those spent paused are not.
  let counted = 0
  let last = clock.now()
  let failures = 0
  let inconclusive = 0
  let streak = 0
  let before: Reading | undefined
  // Listening from the first instant: a promote sent as the bake begins is this bake's.
  const promote = w.controls?.listenForPromote(
    () =>
      `ended the bake of ${stepName(w.step)} at ${w.context} early, ${Math.max(0, Math.ceil(w.bake - counted))} s before its end: ` +
      `it passes as soon as its gate has passed ${gate.successes} time${gate.successes === 1 ? '' : 's'} in a row`,
    w.signal,
  )
  try {
    return await judgeThrough()
  } finally {
    promote?.release()
  }
  async function judgeThrough(): Promise<GateResult> {
    for (;;) {
      await clock.sleep(gate.interval, w.signal)
      if (w.signal.aborted) return {outcome: 'interrupted', verdicts}
      const woke = clock.now()
      if (!w.controls?.pausedBy) counted += woke - last
      last = woke
      let reading: Reading
      let baseline: Reading | undefined
      try {
        const other = gate.baseline && gate.baseline !== 'before' ? gate.baseline.pool : undefined
        ;[reading, baseline] = await Promise.all([
          w.metrics.read(gate.metric, gate.window, gate.pool, w.signal),
          other === undefined ? (before ??= await w.before?.()) : w.metrics.read(gate.metric, gate.window, other, w.signal),
        ])
      } catch (error) {
        if (w.signal.aborted) return {outcome: 'interrupted', verdicts}
        const sourceError = (error as Error).message
        return {outcome: 'fail', verdicts, sourceError, reason: `gate ${describeGate(gate)} could not read its metrics at ${w.context}: ${sourceError}`}
      }
      const {value} = reading
      const judged = judge(gate, reading, baseline)
      const verdict: GateVerdict = {
        step: w.step,
        gate: describeGate(gate),
        metric: gate.metric,
        value,
        threshold: gate.threshold,
        unit: metricUnits[gate.metric],
        outcome: judged.outcome,
        at: clock.now(),
        context: w.context,
        requests: reading.requests,
        bound: judged.bound,
        ...(gate.baseline ? {baseline: {of: describeBaseline(gate.baseline), value: baseline?.value ?? null, requests: baseline?.requests ?? null}} : {}),
        ...(judged.why === undefined ? {} : {why: judged.why}),
      }
      verdicts.push(verdict)
      w.onVerdict(verdict)
      if (verdict.outcome === 'pass') streak++
      else streak = 0
      if (verdict.outcome === 'fail' && ++failures >= gate.failureLimit) {
        return {
          outcome: 'fail',
          verdicts,
          failing: verdict,
          reason: `gate ${verdict.gate} failed at ${w.context}: measured ${verdictMeasure(verdict)}${verdict.baseline ? '' : `, threshold ${formatMetric(gate.threshold, verdict.unit)}`}`,
        }
      }
      if (verdict.outcome === 'inconclusive' && ++inconclusive >= gate.inconclusiveLimit) {
        return {
          outcome: 'fail',
          verdicts,
          failing: verdict,
          reason:
            verdict.why === noDataWhy
              ? `gate ${verdict.gate} had no data ${inconclusive} times at ${w.context}; missing data is never a pass`
              : `gate ${verdict.gate} was inconclusive ${inconclusive} times at ${w.context} (last: ${verdict.why}); missing data is never a pass`,
        }
      }
      const promoted = promote?.taken() ?? false
      if ((counted >= w.bake - 1e-9 || promoted) && streak >= gate.successes) return {outcome: 'pass', verdicts}
      if (counted >= span - 1e-9) {
        return {
          outcome: 'fail',
          verdicts,
          failing: verdict,
          reason: `gate ${verdict.gate} did not pass ${gate.successes} times in a row by the end of the bake at ${w.context} (last: ${verdictMeasure(verdict)}${verdict.why && verdict.why !== noDataWhy ? `, ${verdict.why}` : ''})`,
        }
      }
    }
  }
}
