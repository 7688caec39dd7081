import {metricUnits, type Clock, type MetricsPort, type Reading} from '../ports/control-plane.js'
import type {RunControls} from '../ports/controls.js'
import {beforeLooks, countsLooks, describeBaseline, describeGate, type Gate} from '../runbook/gate.js'
import type {GateResult, GateVerdict} from '../ports/io.js'
import {formatMetric, noDataWhy, stepName, verdictMeasure} from '../format.js'
import {countsSentence, judgeCounts, leastIntervals, type Counts} from '../judge/counts.js'

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
  /** A counts gate relative to `before`: the intervals watched before the step's change (watchBefore). */
  beforeCounts?: () => Promise<Counts[]>
}

/**
 * The counts judge's baseline for relativeTo: before: the pool watched for the gate's window
 * before the step's change, one look each interval, each reading the interval since the last, as
 * the bake's looks will; both sides are then measured alike. The first look reads the interval
 * just past (HAProxy, whose counters keep no past, waits it out), the rest wait for theirs, so
 * the change comes a window later than it would. Intervals without counts add nothing; fewer
 * than the judge needs to tell how much they vary is an error, before anything changes: a pool
 * that served nothing before the change (a ramp from 0%) has no before to compare with.
 */
export async function watchBefore(
  metrics: MetricsPort,
  gate: Gate,
  clock: Clock,
  signal: AbortSignal,
  onLook: (look: number, of: number) => void,
): Promise<Counts[]> {
  const looks = beforeLooks(gate)
  const intervals: Counts[] = []
  let without = ''
  for (let look = 1; look <= looks; look++) {
    if (look > 1) await clock.sleep(gate.interval, signal)
    if (signal.aborted) throw new Error('interrupted while watching the baseline before the change')
    const reading = await metrics.read(gate.metric, gate.interval, gate.pool, signal)
    const counts = countsOf(reading)
    if (counts && counts.requests > 0) intervals.push(counts)
    else without = reading.value !== null && reading.requests === null ? 'the source gives no request counts' : 'no requests'
    onLook(look, looks)
  }
  if (intervals.length < leastIntervals)
    throw new Error(
      `gate ${describeGate(gate)}: ${gate.pool ?? 'the pool'} had requests in ${intervals.length} of the ${looks} intervals of ${gate.interval} s before the change (${without}), and the counts judge needs ${leastIntervals}: ` +
        'nothing to compare the bake with, and nothing was changed (a pool that takes no traffic before the step, as in a ramp from 0%, is judged against another: relativeTo: stable or {pool: NAME})',
    )
  return intervals
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
  if (w.gate.judge === 'counts') return watchCounts(w)
  const {gate, clock} = w
  const verdicts: GateVerdict[] = []
  const span = Math.max(w.bake, gate.interval) + gate.successes * gate.interval
  let failures = 0
  let failingInARow = 0
  let inconclusive = 0
  let streak = 0
  let before: Reading | undefined
  const bake = bakeLooks(w, `it passes as soon as its gate has passed ${gate.successes} time${gate.successes === 1 ? '' : 's'} in a row`)
  try {
    return await judgeThrough()
  } finally {
    bake.release()
  }
  async function judgeThrough(): Promise<GateResult> {
    for (;;) {
      if (!(await bake.next())) return {outcome: 'interrupted', verdicts}
      const other = baselinePool(gate)
      const read = await readLook(w, verdicts, async () =>
        Promise.all([
          w.metrics.read(gate.metric, gate.window, gate.pool, w.signal),
          other === undefined ? (before ??= await w.before?.()) : w.metrics.read(gate.metric, gate.window, other, w.signal),
        ]),
      )
      if ('ended' in read) return read.ended
      const [reading, baseline] = read.readings
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
      failingInARow = verdict.outcome === 'fail' ? failingInARow + 1 : 0
      if (verdict.outcome === 'fail' && (++failures >= gate.failureLimit || failingInARow >= (gate.consecutiveFailures ?? Infinity))) {
        return {
          outcome: 'fail',
          verdicts,
          failing: verdict,
          reason: `gate ${verdict.gate} failed at ${w.context}${failingInARow > 1 && failingInARow >= (gate.consecutiveFailures ?? Infinity) ? ` (${failingInARow} failed verdicts in a row)` : ''}: measured ${verdictMeasure(verdict)}${verdict.baseline ? '' : `, threshold ${formatMetric(gate.threshold, verdict.unit)}`}`,
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
      if (bake.over() && streak >= gate.successes) return {outcome: 'pass', verdicts}
      if (bake.counted() >= span - 1e-9) {
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

/** The pool a relative gate's baseline is read from over the same window, if it is one. */
const baselinePool = (gate: Gate): string | undefined => (gate.baseline && gate.baseline !== 'before' ? gate.baseline.pool : undefined)

/**
 * A look's readings, or how the gate ends when they could not be had: interrupted, or failed at
 * once naming the source (the adapter has already retried within its deadline; not a measurement).
 */
async function readLook<T>(w: GateWatch, verdicts: GateVerdict[], read: () => Promise<T>): Promise<{readings: T} | {ended: GateResult}> {
  try {
    return {readings: await read()}
  } catch (error) {
    if (w.signal.aborted) return {ended: {outcome: 'interrupted', verdicts}}
    const sourceError = (error as Error).message
    return {ended: {outcome: 'fail', verdicts, sourceError, reason: `gate ${describeGate(w.gate)} could not read its metrics at ${w.context}: ${sourceError}`}}
  }
}

/** Errors and requests of a reading, for the counts judge: none where the source cannot count requests. */
function countsOf(reading: Reading): Counts | null {
  if (reading.value === null || reading.requests === null) return null
  // A source that reports rates times a window (Prometheus, the simulator) gives fractions of a request.
  const requests = Math.round(reading.requests)
  return {requests, errors: Math.min(requests, Math.round((reading.value / 100) * reading.requests))}
}

/**
 * A counts gate through a bake (src/judge/counts.ts): each look reads the interval since the
 * last, for the pool and its baseline pool, and judges every interval so far together. It fails
 * at its first fail; passes at its first pass once the bake is over; and with neither by the end
 * of the bake and `inconclusiveLimit` intervals more, holds: the step stops where it is, undoing
 * nothing, for a person to decide. The confidence asked is spent over all of those looks. A look
 * without counts (no data, a source that cannot count requests) adds nothing; the limit is the same.
 */
async function watchCounts(w: GateWatch): Promise<GateResult> {
  const {gate, clock} = w
  const basePool = baselinePool(gate)
  const looks = countsLooks(gate, w.bake)
  const verdicts: GateVerdict[] = []
  const receiving: Counts[] = []
  // Before the change: watched already, the same at every look. A baseline pool: an interval a look beside the receiving pool's.
  if (gate.baseline === 'before' && !w.beforeCounts)
    throw new Error(`gate ${describeGate(gate)} is relative to before, and nothing watched the pool before the change`)
  const before = gate.baseline === 'before' ? await w.beforeCounts!() : null
  const baseline: Counts[] = before ? [...before] : []
  const bake = bakeLooks(w, 'it passes as soon as its judge can rule out the margin')
  try {
    for (let look = 1; look <= looks; look++) {
      if (!(await bake.next())) return {outcome: 'interrupted', verdicts}
      const read = await readLook(w, verdicts, () =>
        Promise.all([
          w.metrics.read(gate.metric, gate.interval, gate.pool, w.signal),
          before ? null : w.metrics.read(gate.metric, gate.interval, basePool, w.signal),
        ]),
      )
      if ('ended' in read) return read.ended
      const [reading, other] = read.readings
      const r = countsOf(reading)
      const b = other ? countsOf(other) : null
      if (r && (b || before)) {
        receiving.push(r)
        if (b) baseline.push(b)
      }
      const judged = judgeCounts(receiving, baseline, {marginPoints: gate.threshold, confidence: gate.confidence / 100, looks})
      const names = {
        receiving: gate.pool ?? 'the pool',
        baseline: before ? `${gate.pool ?? 'the pool'} before the step` : describeBaseline(gate.baseline!).replace(/^pool /, ''),
      }
      const missing = r && (b || before) ? undefined : reading.requests === null || other?.requests === null ? 'the source gives no request counts' : noDataWhy
      const verdict: GateVerdict = {
        step: w.step,
        gate: describeGate(gate),
        metric: gate.metric,
        value: judged.receiving.requests > 0 ? judged.receiving.rate : null,
        threshold: gate.threshold,
        unit: metricUnits[gate.metric],
        outcome: judged.outcome,
        at: clock.now(),
        context: w.context,
        requests: judged.receiving.requests,
        bound: null,
        baseline: {of: describeBaseline(gate.baseline!), value: judged.baseline.requests > 0 ? judged.baseline.rate : null, requests: judged.baseline.requests},
        said: `${countsSentence(judged, names, gate.threshold)}${missing ? ` (this interval: ${missing})` : ''}`,
        counts: {sure: judged.sure, needs: judged.needs, dispersion: judged.dispersion, baselineDispersion: judged.baselineDispersion, margin: gate.threshold},
        ...(judged.why === undefined ? {} : {why: judged.why}),
      }
      verdicts.push(verdict)
      w.onVerdict(verdict)
      if (verdict.outcome === 'fail')
        return {outcome: 'fail', verdicts, failing: verdict, reason: `gate ${verdict.gate} failed at ${w.context}: ${verdict.said}`}
      if (verdict.outcome === 'pass' && bake.over()) return {outcome: 'pass', verdicts}
    }
    const final = verdicts.at(-1)!
    return {
      outcome: 'held',
      verdicts,
      failing: final,
      reason: `gate ${final.gate} could not tell in ${looks} looks at ${w.context} (last: ${final.said}); holding where it is for a person to decide`,
    }
  } finally {
    bake.release()
  }
}

/**
 * A bake's looks, one each interval, for both judges. The seconds counted towards the bake leave
 * out those spent paused (the gate is still measured then, and still fails on bad verdicts). A
 * promote is listened for from the first instant, so one sent as the bake begins is this bake's;
 * it ends the bake early, once the judge allows (`passesEarly` says when).
 */
function bakeLooks(w: GateWatch, passesEarly: string) {
  let counted = 0
  let last = w.clock.now()
  const promote = w.controls?.listenForPromote(
    () => `ended the bake of ${stepName(w.step)} at ${w.context} early, ${Math.max(0, Math.ceil(w.bake - counted))} s before its end: ${passesEarly}`,
    w.signal,
  )
  return {
    /** Waits an interval for the next look; false once the run is interrupted. */
    async next(): Promise<boolean> {
      await w.clock.sleep(w.gate.interval, w.signal)
      if (w.signal.aborted) return false
      const woke = w.clock.now()
      if (!w.controls?.pausedBy) counted += woke - last
      last = woke
      return true
    },
    counted: () => counted,
    /** The bake is over, or a promote ended it. */
    over: () => counted >= w.bake - 1e-9 || (promote?.taken() ?? false),
    release: () => promote?.release(),
  }
}
