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
import {receivingKey, wayBack, type ReceivingCapacity, type WayBack} from './way-back.js'

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
  return {undo, way, receiving, ...(gate ? {gate} : {}), gateFrom, bake, ...(receivingFailed ? {receivingFailed} : {})}
}

/** The plan line of a stepped undo: where it goes, onto which pool, in how many steps, behind what, and why. */
export function describeStepBack(s: SteppedUndo): string {
  const key = receivingKey(s.undo.before as WeightMap, s.undo.after as WeightMap)
  const steps = s.way.steps
  const shares = key === null ? '' : ` (${key} ${steps.map((w) => `${w[key]}%`).join(' → ')})`
  const behind = s.gate ? `, each baked ${s.bake} s behind ${s.gateFrom}: ${describeGate(s.gate)}` : `, each held ${s.bake} s ungated (${s.gateFrom})`
  const how = steps.length === 1 ? ' in one step' : ` in ${steps.length} steps${shares}${behind}`
  const onto = s.receiving ? `; traffic goes onto ${s.receiving}${s.receivingFailed ? `, which failed a gate in this run (${s.receivingFailed})` : ''}` : ''
  return `${s.undo.describe}${how}${onto}: ${s.way.why}${s.way.shortfall ? `. Warning: ${s.way.shortfall}` : ''}`
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
  let current = s.undo.before as WeightMap
  const key = receivingKey(current, s.undo.after as WeightMap)
  const stopped = () => ({outcome: 'interrupted' as const, at: current, message: `stopped on the way back at ${describeWeights(current)}`})
  for (const [i, weights] of s.way.steps.entries()) {
    if (signal.aborted) return stopped()
    if (controls?.pausedBy) {
      io.notify({
        type: 'progress',
        step: -1,
        message: `paused by ${controls.pausedBy.operator} on ${controls.pausedBy.host}: holding at ${describeWeights(current)} (\`sluice promote ${controls.runId}\` continues)`,
        at: now(),
      })
      await controls.whilePaused(signal)
      if (signal.aborted) return stopped()
    }
    const last = i === s.way.steps.length - 1
    await applyRecorded(journal, {
      ...s.undo,
      before: current,
      after: weights,
      apply: () => (last ? s.undo.apply() : s.undo.applyStep!(weights)),
    })
    current = weights
    const where = `way back: ${key === null ? describeWeights(weights) : `${key} ${weights[key]}%`}`
    io.notify({type: 'progress', step: -1, message: `${where} (${describeWeights(weights)})${last ? '' : `, baking ${s.bake} s`}`, at: now()})
    if (last) break
    io.notify({type: 'bake', step: -1, seconds: s.bake, at: now()})
    if (!s.gate || !control.metrics) {
      const held = controls
        ? await holdFor(s.bake, {
            clock: control.clock,
            signal,
            controls,
            paused: (left) => {
              io.notify({type: 'progress', step: -1, message: `paused: holding ${where}, ${Math.ceil(left)} s left`, at: now()})
              return controls.whilePaused(signal)
            },
            did: (left) => `ended the hold of the way back at ${where} early, ${Math.ceil(left)} s before its end`,
          })
        : await control.clock.sleep(s.bake, signal).then(() => (signal.aborted ? 'interrupted' : 'done'))
      if (held === 'interrupted') return stopped()
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
    if (result.outcome === 'fail') {
      const failing = result.failing
      const question = `The gate failed on the way back at ${describeWeights(current)}. Go on to the next step back anyway?`
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
