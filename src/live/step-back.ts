import type {Undo} from '../actions/action.js'
import {describeWeights} from '../actions/weights-ramp.js'
import {watchGate} from '../engine/gate.js'
import {verdictText} from '../format.js'
import type {Runbook} from '../loader/runbook.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import type {EngineIO, RecordedMutation} from '../ports/io.js'
import {describeGate, type Gate} from '../runbook/gate.js'
import {applyRecorded, type ChangeRecorder} from './history.js'
import {receivingKey, wayBack, type ReceivingCapacity, type WayBack} from './way-back.js'

/** A weights undo taken as a ramp: its steps, why those, and the gate and bake of the step that made the changes. */
export interface SteppedUndo {
  undo: Undo
  way: WayBack
  /** The pool that gains traffic on the way back, when the weights' key names one. */
  receiving: string | null
  gate?: Gate
  bake: number
}

/** The pool a weights key sends traffic to: a DNS set's pool, a HAProxy backend's pool, or a pool split's pool. */
function poolOfKey(runbook: Runbook, undo: Undo, key: string): string | null {
  const {targets} = runbook
  if (undo.kind === 'pool-weights') return key
  if (targets.dns) return targets.dns.sets[key] ?? null
  const backends = targets.haproxy?.backends ?? {}
  return Object.keys(backends).find((pool) => backends[pool] === key) ?? (key in backends ? key : null)
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
 * it, else the weights the run passed, judged by the gate of the step that made them, moved to the
 * receiving pool (a baseline pool becomes the pool traffic leaves).
 */
export async function planStepBack(undo: Undo, changes: RecordedMutation[], runbook: Runbook, control: ControlPlane): Promise<SteppedUndo> {
  const from = undo.before as WeightMap
  const to = undo.after as WeightMap
  const key = receivingKey(from, to)
  const receiving = key === null ? null : poolOfKey(runbook, undo, key)
  const leavingKey = receivingKey(to, from)
  const leaving = leavingKey === null ? null : poolOfKey(runbook, undo, leavingKey)
  const step = runbook.steps.find((s) => s.index === changes[0].step)
  const own = step && 'gate' in step ? step.gate : undefined
  // Demand over the gate's window: HAProxy's counters answer a first read only after one.
  const capacity = await receivingCapacity(runbook, control, receiving, own?.window ?? 60)
  const passed = changes.filter((c) => c.step >= 0).map((c) => c.after as WeightMap)
  const way = wayBack(from, to, passed, typeof capacity === 'string' ? null : capacity)
  if (typeof capacity === 'string' && way.steps.length > 1) way.why = `${way.why}; ${capacity}`
  const gate: Gate | undefined = own && {
    ...own,
    ...(receiving === null ? {} : {pool: receiving}),
    ...(own.baseline && own.baseline !== 'before' ? (leaving ? {baseline: {pool: leaving}} : {baseline: undefined, compare: undefined}) : {}),
  }
  const bake = step && 'bake' in step && typeof step.bake === 'number' ? step.bake : (gate?.window ?? 60)
  return {undo, way, receiving, ...(gate ? {gate} : {}), bake}
}

/** The plan line of a stepped undo: where it goes, in how many steps, behind what, and why. */
export function describeStepBack(s: SteppedUndo): string {
  const key = receivingKey(s.undo.before as WeightMap, s.undo.after as WeightMap)
  const steps = s.way.steps
  const shares = key === null ? '' : ` (${key} ${steps.map((w) => `${w[key]}%`).join(' → ')})`
  const behind = s.gate ? `, each baked ${s.bake} s behind gate ${describeGate(s.gate)}` : `, each held ${s.bake} s (the step had no gate)`
  const how = steps.length === 1 ? ' in one step' : ` in ${steps.length} steps${shares}${behind}`
  return `${s.undo.describe}${how}: ${s.way.why}${s.way.shortfall ? `. Warning: ${s.way.shortfall}` : ''}`
}

export type StepBackResult = {outcome: 'done'} | {outcome: 'held' | 'interrupted'; at: WeightMap; message: string}

/**
 * Walks a stepped undo: one recorded change per step, then its bake behind the gate. A gate that
 * fails holds where it is and asks the person at the terminal (never --yes) whether to go on; with
 * nobody to answer it holds. It never sends the rest at once by itself.
 */
export async function walkStepBack(
  s: SteppedUndo,
  run: {control: ControlPlane; record: ChangeRecorder; io: EngineIO; signal: AbortSignal},
): Promise<StepBackResult> {
  const {control, record: journal, io, signal} = run
  // Verdicts come as they are measured; their journal entries are written in order, before the next change.
  let verdicts = Promise.resolve()
  let current = s.undo.before as WeightMap
  const key = receivingKey(current, s.undo.after as WeightMap)
  for (const [i, weights] of s.way.steps.entries()) {
    if (signal.aborted) return {outcome: 'interrupted', at: current, message: `stopped on the way back at ${describeWeights(current)}`}
    const last = i === s.way.steps.length - 1
    await verdicts
    await applyRecorded(journal, {
      ...s.undo,
      before: current,
      after: weights,
      apply: () => (last ? s.undo.apply() : s.undo.applyStep!(weights)),
    })
    current = weights
    const where = `way back: ${key === null ? describeWeights(weights) : `${key} ${weights[key]}%`}`
    io.notify({type: 'progress', step: -1, message: `${where} (${describeWeights(weights)})${last ? '' : `, baking ${s.bake} s`}`, at: control.clock.now()})
    if (last) break
    if (!s.gate || !control.metrics) {
      await control.clock.sleep(s.bake, signal)
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
      onVerdict: (verdict) => {
        io.notify({type: 'verdict', verdict})
        verdicts = verdicts.then(() => journal.write('verdict', {verdict}))
      },
    })
    await verdicts
    if (result.outcome === 'interrupted') return {outcome: 'interrupted', at: current, message: `stopped on the way back at ${describeWeights(current)}`}
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
