import type {Undo} from '../actions/action.js'
import {describeWeights} from '../actions/weights-ramp.js'
import {watchGate} from '../engine/gate.js'
import {holdFor} from '../engine/hold.js'
import type {RunControls} from '../ports/controls.js'
import {verdictMeasure, verdictText} from '../format.js'
import type {Runbook} from '../loader/runbook.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import type {EngineIO, GateVerdict, RecordedMutation} from '../ports/io.js'
import {describeGate, type Gate} from '../runbook/gate.js'
import {backendOf} from '../runbook/targets.js'
import {applyRecorded, type ChangeRecorder} from './history.js'
import {firstStepNow} from '../pacing/pacer.js'
import {RampPacer} from '../pacing/ramp-pacer.js'
import type {PaceRule} from '../pacing/rule.js'
import {shareOf} from '../actions/weights-ramp.js'
import {receivingKey, wayBack, wayBackStepShare, weightsWith, type ReceivingCapacity, type WayBack} from './way-back.js'

/** A weights undo taken as a ramp: its steps, why those, and the gate and bake it is judged by. */
export interface SteppedUndo {
  undo: Undo
  way: WayBack
  /** The pool that gains traffic on the way back, when the weights' key names one. */
  receiving: string | null
  gate?: Gate
  /** Whose gate it is ("the gate of step 5"), or why there is none. */
  gateFrom: string
  bake: number
  /** Where the receiving pool failed a gate in this run, when it did: the plan says so. */
  receivingFailed?: string
  /**
   * Where the gate's baseline, the pool traffic leaves, failed a gate in this run: a verdict
   * against it says only that the receiving pool is no worse than a pool that failed, and the
   * plan says so (the counts game day's way back judged blue against a green erring 5%).
   */
  baselineFailed?: {pool: string; where: string}
  /** Set when a ramp that moved these weights was paced: the way back is paced on the receiving pool, its steps found as it goes. */
  paced?: PacedBack
}

/** A paced way back: the moving ramp's rule read on the receiving pool, and what it reads by. */
export interface PacedBack {
  rule: PaceRule & {perTarget: number}
  /** The gate's window (demand is read over it) and interval (a look for room every one). */
  window: number
  interval: number
  /** The weights' TTL: behind weighted DNS a step's handshakes spread over it. */
  ttl: number
}

/** What the run's journal tells a plan of the way back. */
export interface WayBackContext {
  /** Per pool, where it failed a gate in this run ("step 5 at mailbox 25%: …"). */
  failed: Map<string, string>
}

/** Per pool, the first place it failed a gate among a run's verdicts (those of the runbook's steps, not of a way back). */
export function failedPools(runbook: Runbook, verdicts: GateVerdict[]): Map<string, string> {
  const failed = new Map<string, string>()
  for (const v of verdicts) {
    if (v.outcome !== 'fail' || v.step < 0) continue
    const step = runbook.steps.find((s) => s.index === v.step)
    const pool = step && 'gate' in step ? step.gate?.pool : undefined
    if (pool !== undefined && !failed.has(pool)) failed.set(pool, `step ${v.step + 1} at ${v.context}: ${v.gate} measured ${verdictMeasure(v)}`)
  }
  return failed
}

/** The pool a weights key sends traffic to: a weighted set's pool as the family names it, or a pool split's pool. */
function poolOfKey(runbook: Runbook, undo: Undo, key: string): string | null {
  if (undo.kind === 'pool-weights') return key
  return backendOf(runbook.targets).weightedSets?.[key] ?? null
}

/**
 * What the receiving pool can take now: its healthy targets counted live, the capacity the runbook
 * states, today's demand from the metrics. Null, with the reason, when one of them is missing.
 */
async function receivingCapacity(runbook: Runbook, control: ControlPlane, pool: string | null, window: number): Promise<ReceivingCapacity | string> {
  if (pool === null) return 'the receiving side is not one pool'
  const perTarget = runbook.targets.capacityPerTarget?.[pool]
  if (perTarget === undefined) return `no capacity of ${pool} stated in targets.capacityPerTarget`
  const port = control.pools.get(pool)
  if (!port) return `the runbook has no target group or backend for ${pool} to count`
  if (!control.metrics) return 'the runbook has no metrics to read demand from'
  const [targets, demand] = await Promise.all([port.targets(), control.metrics.read('request-rate', window)])
  if (demand.value === null) return 'no request-rate data to size the steps by'
  return {pool, healthy: targets.filter((t) => t.health === 'healthy').length, perTarget, demand: demand.value}
}

/**
 * The steps back of a weights undo: sized by the receiving pool's capacity where the runbook states
 * it, else the weights the run passed. Judged by the newest gate among the steps that moved these
 * weights (a parking step has none; the ramp after it has), else the runbook's own gate on the
 * receiving pool, moved to the receiving pool (a baseline pool becomes the pool traffic leaves).
 */
export async function planStepBack(
  undo: Undo,
  changes: RecordedMutation[],
  runbook: Runbook,
  control: ControlPlane,
  context: WayBackContext,
): Promise<SteppedUndo> {
  const from = undo.before as WeightMap
  const to = undo.after as WeightMap
  const key = receivingKey(from, to)
  const receiving = key === null ? null : poolOfKey(runbook, undo, key)
  const leavingKey = receivingKey(to, from)
  const leaving = leavingKey === null ? null : poolOfKey(runbook, undo, leavingKey)
  const gateOf = (s: Runbook['steps'][number] | undefined): Gate | undefined => (s && 'gate' in s ? s.gate : undefined)
  const moved = [...changes].reverse().map((c) => runbook.steps.find((s) => s.index === c.step))
  const source = moved.find((s) => gateOf(s)) ?? runbook.steps.find((s) => receiving !== null && gateOf(s)?.pool === receiving)
  const own = gateOf(source)
  const gateFrom = source
    ? `the gate of step ${source.index + 1}${moved.includes(source) ? '' : ` (on ${receiving}; the steps that moved these weights have none)`}`
    : `no gate: neither the steps that moved these weights nor any step on ${receiving ?? 'the receiving side'} has one`
  // Demand over the gate's window: HAProxy's counters answer a first read only after one.
  const capacity = await receivingCapacity(runbook, control, receiving, own?.window ?? 60)
  const passed = changes.filter((c) => c.step >= 0).map((c) => c.after as WeightMap)
  const way = wayBack(from, to, passed, typeof capacity === 'string' ? null : capacity)
  // Why the steps were not sized by capacity, unless the way back already says it (a capacity not stated).
  if (typeof capacity === 'string' && way.steps.length > 1 && !capacity.startsWith('no capacity of')) way.why = `${way.why}; ${capacity}`
  const gate: Gate | undefined = own && {
    ...own,
    ...(receiving === null ? {} : {pool: receiving}),
    ...(own.baseline && own.baseline !== 'before' ? (leaving ? {baseline: {pool: leaving}} : {baseline: undefined, compare: undefined}) : {}),
  }
  const baking = source ?? runbook.steps.find((s) => s.index === changes[0].step)
  const bake = baking && 'bake' in baking && typeof baking.bake === 'number' ? baking.bake : (gate?.window ?? 60)
  const receivingFailed = receiving === null ? undefined : context.failed.get(receiving)
  const baselinePool = gate?.baseline && gate.baseline !== 'before' ? gate.baseline.pool : null
  const baselineWhere = baselinePool === null ? undefined : context.failed.get(baselinePool)
  const pace = moved.map(paceOf).find((p) => p !== undefined)
  const paced = pace && typeof capacity !== 'string' ? await pacedBack(pace, capacity, undo, control, gate) : undefined
  return {
    undo,
    way: paced ? {...way, steps: [to], why: paced.why} : way,
    receiving,
    ...(gate ? {gate} : {}),
    gateFrom,
    bake,
    ...(receivingFailed ? {receivingFailed} : {}),
    ...(baselinePool !== null && baselineWhere ? {baselineFailed: {pool: baselinePool, where: baselineWhere}} : {}),
    ...(paced ? {paced: paced.back} : {}),
  }
}

const paceOf = (s: Runbook['steps'][number] | undefined): PaceRule | undefined => (s && 'pace' in s ? s.pace : undefined)

/**
 * The way back of a paced ramp, paced the same way onto the pool traffic returns to: each step the
 * largest it can take now (targets in rotation, each at its warm-up, less the headroom), and never
 * more than the quarter of what it serves in rotation a written way back would take. A pool traffic
 * left is cold in ways no slow start shows (caches, connection pools), which the quarter allows
 * for and the room does not. `why` says so, with the step it would take now.
 */
async function pacedBack(
  pace: PaceRule,
  capacity: ReceivingCapacity,
  undo: Undo,
  control: ControlPlane,
  gate: Gate | undefined,
): Promise<{back: PacedBack; why: string}> {
  const from = undo.before as WeightMap
  const key = receivingKey(from, undo.after as WeightMap)!
  const quarter = Math.max(1, Math.floor(((wayBackStepShare * capacity.healthy * capacity.perTarget) / Math.max(capacity.demand, 1e-9)) * 100))
  const maxStep = Math.min(pace.maxStep, quarter)
  const rule = {
    ...pace,
    pool: capacity.pool,
    perTarget: capacity.perTarget,
    to: shareOf(undo.after as WeightMap, key),
    maxStep,
    minStep: Math.min(pace.minStep, maxStep),
  }
  const ttl = undo.kind === 'weights' && control.weights ? await control.weights.ttl() : 0
  const back: PacedBack = {rule, window: gate?.window ?? 60, interval: gate?.interval ?? 10, ttl}
  const now = await firstStepNow(rule, control, shareOf(from, key), back.window, ttl)
  const why = `paced as the ramp that moved them was, on ${capacity.pool}'s room: each step the largest it can take now with ${rule.headroom}% headroom, between ${rule.minStep} and ${maxStep} points (at most a quarter of what its ${capacity.healthy} healthy targets serve); ${now}`
  return {back, why}
}

/** The plan line of a stepped undo: where it goes, onto which pool, in how many steps, behind what, and why. */
export function describeStepBack(s: SteppedUndo): string {
  const key = receivingKey(s.undo.before as WeightMap, s.undo.after as WeightMap)
  const steps = s.way.steps
  const shares = key === null ? '' : ` (${key} ${steps.map((w) => `${w[key]}%`).join(' → ')})`
  const behind = s.gate ? `, each baked ${s.bake} s behind ${s.gateFrom}: ${describeGate(s.gate)}` : `, each held ${s.bake} s ungated (${s.gateFrom})`
  const how = s.paced ? ` in paced steps${behind}` : steps.length === 1 ? ' in one step' : ` in ${steps.length} steps${shares}${behind}`
  const onto = s.receiving ? `; traffic goes onto ${s.receiving}${s.receivingFailed ? `, which failed a gate in this run (${s.receivingFailed})` : ''}` : ''
  const weak = s.baselineFailed
    ? `. Note: the gate measures ${s.receiving ?? 'the receiving pool'} against ${s.baselineFailed.pool}, the pool traffic leaves, which failed a gate in this run (${s.baselineFailed.where}): a pass says only that it is no worse than that`
    : ''
  return `${s.undo.describe}${how}${onto}: ${s.way.why}${s.way.shortfall ? `. Warning: ${s.way.shortfall}` : ''}${weak}`
}

export type StepBackResult = {outcome: 'done'} | {outcome: 'held' | 'interrupted'; at: WeightMap; message: string}

/**
 * Walks a stepped undo: one recorded change per step, then its bake behind the gate. A gate that
 * fails holds where it is and asks the person at the terminal (never --yes) whether to go on; with
 * nobody to answer it holds. It never sends the rest at once by itself. With a live rollback's
 * controls, a pause holds it between steps and in a bake, a promote ends a bake early (once the
 * gate has passed as it needs), and an abort stops it as Ctrl-C does.
 */
export async function walkStepBack(
  s: SteppedUndo,
  run: {control: ControlPlane; record: ChangeRecorder; io: EngineIO; signal: AbortSignal; controls?: RunControls},
): Promise<StepBackResult> {
  const {control, record: journal, io, signal, controls} = run
  const now = () => control.clock.now()
  const say = (message: string) => io.notify({type: 'progress', step: -1, message, at: now()})
  let current = s.undo.before as WeightMap
  const found = s.undo.after as WeightMap
  const key = receivingKey(current, found)
  const stopped = () => ({outcome: 'interrupted' as const, at: current, message: `stopped on the way back at ${describeWeights(current)}`})
  const hold = async (seconds: number, where: string): Promise<'done' | 'promoted' | 'interrupted'> =>
    controls
      ? holdFor(seconds, {
          clock: control.clock,
          signal,
          controls,
          paused: (left) => {
            say(`paused: holding ${where}, ${Math.ceil(left)} s left`)
            return controls.whilePaused(signal)
          },
          did: (left) => `ended the hold of the way back at ${where} early, ${Math.ceil(left)} s before its end`,
        })
      : control.clock.sleep(seconds, signal).then(() => (signal.aborted ? 'interrupted' : 'done'))
  const pacer =
    s.paced && key !== null && control.metrics
      ? new RampPacer(
          s.paced.rule,
          {control, metrics: () => control.metrics!, signal, hold, progress: say},
          s.paced.window,
          s.paced.interval,
          s.bake,
          s.paced.ttl,
        )
      : null
  /** The next step back from `current`: the planned one, or the paced one found now; a hold, with why. */
  const nextStep = async (i: number): Promise<{weights: WeightMap; last: boolean} | StepBackResult> => {
    if (pacer === null || key === null) return {weights: s.way.steps[i], last: i === s.way.steps.length - 1}
    const from = Math.round(shareOf(current, key))
    const end = Math.round(shareOf(found, key))
    const next = await pacer.next(from, end)
    if (next.kind === 'interrupted') return stopped()
    let to = next.kind === 'step' ? next.to : null
    if (to === null) {
      // As after a failed gate on the way back: the person at the terminal may take the smallest step anyway; nobody there, it holds.
      const message = (next as {message: string}).message
      const smallest = Math.min(end, from + s.paced!.rule.minStep)
      const go = io.ask
        ? await io.ask(`No room on ${s.paced!.rule.pool} for the next step back. Take the smallest step, to ${key} ${smallest}%, anyway?`, [message], signal)
        : null
      if (go !== true) return {outcome: 'held', at: current, message: `way back ${message}`}
      to = smallest
    }
    return to >= end ? {weights: found, last: true} : {weights: weightsWith(key, to, current, found), last: false}
  }
  for (let i = 0; ; i++) {
    if (signal.aborted) return stopped()
    if (controls?.pausedBy) {
      say(
        `paused by ${controls.pausedBy.operator} on ${controls.pausedBy.host}: holding at ${describeWeights(current)} (\`sluice promote ${controls.runId}\` continues)`,
      )
      await controls.whilePaused(signal)
      if (signal.aborted) return stopped()
    }
    const next = await nextStep(i)
    if ('outcome' in next) return next
    const {weights, last} = next
    await applyRecorded(journal, {
      ...s.undo,
      before: current,
      after: weights,
      apply: () => (last ? s.undo.apply() : s.undo.applyStep!(weights)),
    })
    current = weights
    const where = `way back: ${key === null ? describeWeights(weights) : `${key} ${weights[key]}%`}`
    say(`${where} (${describeWeights(weights)})${last ? '' : `, baking ${s.bake} s`}`)
    if (last) break
    io.notify({type: 'bake', step: -1, seconds: s.bake, at: now()})
    if (!s.gate || !control.metrics) {
      if ((await hold(s.bake, where)) === 'interrupted') return stopped()
      continue
    }
    const result = await watchGate({
      gate: s.gate,
      bake: s.bake,
      step: -1,
      context: where,
      signal,
      clock: control.clock,
      metrics: control.metrics,
      ...(controls ? {controls} : {}),
      onVerdict: (verdict) => io.notify({type: 'verdict', verdict}),
    })
    if (result.outcome === 'interrupted') return stopped()
    if (result.outcome === 'fail' || result.outcome === 'held') {
      const failing = result.failing
      const question = `The gate ${result.outcome === 'fail' ? 'failed' : 'could not tell'} on the way back at ${describeWeights(current)}. Go on to the next step back anyway?`
      const context = [result.reason ?? '', ...(failing ? [verdictText(failing)] : [])]
      const go = io.ask ? await io.ask(question, context, signal) : null
      if (go !== true)
        return {
          outcome: 'held',
          at: current,
          message: `${result.reason}; holding at ${describeWeights(current)}`,
        }
    }
  }
  return {outcome: 'done'}
}
