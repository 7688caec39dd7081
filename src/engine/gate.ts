import {metricUnits, type Clock, type MetricsPort} from '../ports/control-plane.js'
import type {RunControls} from '../ports/controls.js'
import {describeGate, type Gate} from '../runbook/gate.js'
import type {GateResult, GateVerdict} from '../ports/io.js'
import {formatMetric} from '../format.js'

function judge(gate: Gate, value: number | null): GateVerdict['outcome'] {
  if (value === null) return 'inconclusive'
  return gate.metric === 'healthy-targets' ? (value >= gate.threshold ? 'pass' : 'fail') : value <= gate.threshold ? 'pass' : 'fail'
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
  const promotions = w.controls?.promotions ?? 0
  // Seconds of bake counted so far: those spent paused are not.
  let counted = 0
  let last = clock.now()
  let failures = 0
  let inconclusive = 0
  let streak = 0
  for (;;) {
    await clock.sleep(gate.interval, w.signal)
    if (w.signal.aborted) return {outcome: 'interrupted', verdicts}
    const woke = clock.now()
    if (!w.controls?.pausedBy) counted += woke - last
    last = woke
    let value: number | null
    try {
      value = await w.metrics.read(gate.metric, gate.window, gate.pool, w.signal)
    } catch (error) {
      if (w.signal.aborted) return {outcome: 'interrupted', verdicts}
      const sourceError = (error as Error).message
      return {outcome: 'fail', verdicts, sourceError, reason: `gate ${describeGate(gate)} could not read its metrics at ${w.context}: ${sourceError}`}
    }
    const verdict: GateVerdict = {
      step: w.step,
      gate: describeGate(gate),
      metric: gate.metric,
      value,
      threshold: gate.threshold,
      unit: metricUnits[gate.metric],
      outcome: judge(gate, value),
      at: clock.now(),
      context: w.context,
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
        reason: `gate ${verdict.gate} failed at ${w.context}: measured ${formatMetric(value, verdict.unit)}, threshold ${formatMetric(gate.threshold, verdict.unit)}`,
      }
    }
    if (verdict.outcome === 'inconclusive' && ++inconclusive >= gate.inconclusiveLimit) {
      return {
        outcome: 'fail',
        verdicts,
        failing: verdict,
        reason: `gate ${verdict.gate} had no data ${inconclusive} times at ${w.context}; missing data is never a pass`,
      }
    }
    const promoted = (w.controls?.promotions ?? 0) > promotions
    if ((counted >= w.bake - 1e-9 || promoted) && streak >= gate.successes) return {outcome: 'pass', verdicts}
    if (counted >= span - 1e-9) {
      return {
        outcome: 'fail',
        verdicts,
        failing: verdict,
        reason: `gate ${verdict.gate} did not pass ${gate.successes} times in a row by the end of the bake at ${w.context} (last: ${formatMetric(value, verdict.unit)})`,
      }
    }
  }
}
