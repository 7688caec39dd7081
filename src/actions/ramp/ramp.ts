import type {WeightMap} from '../../ports/control-plane.js'
import type {GateVerdict} from '../../ports/io.js'
import type {Path} from '../../input/problems.js'
import {limits} from '../../runbook/limits.js'
import {rampSchema, type RampStep} from './schema.js'
import {defaultBake} from '../../runbook/step-common.js'
import type {ScheduleData} from './schema.js'
import {backendOf} from '../../runbook/targets.js'
import {gateFailure, gatePlan, sameState, type ActionContext, type ActionDefinition, type StepOutcome} from '../action.js'

/**
 * Weights for one ramp step: the ramped set gets `percent`, the other sets share the rest in
 * proportion to their weights before the ramp (equally if those were all 0).
 */
export function weightsAt(percent: number, set: string, start: WeightMap): WeightMap {
  const others = Object.keys(start)
    .filter((s) => s !== set)
    .sort()
  const rest = 100 - percent
  const total = others.reduce((sum, s) => sum + start[s], 0)
  const weights: WeightMap = {[set]: percent}
  let given = 0
  others.forEach((s, k) => {
    const w = k === others.length - 1 ? rest - given : Math.round(rest * (total > 0 ? start[s] / total : 1 / others.length))
    weights[s] = w
    given += w
  })
  return weights
}

export function describeWeights(weights: WeightMap): string {
  return Object.entries(weights)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, w]) => `${s}=${w}`)
    .join(' ')
}

const sameWeights = (a: WeightMap, b: WeightMap): boolean => Object.keys({...a, ...b}).every((k) => a[k] === b[k])

/**
 * Ramps traffic onto a weighted set step by step. Each step is one DNS change, baked for at least
 * a TTL and admitted only if its gate passes. A failed gate, a gate that cannot read its metrics,
 * a failed change, or an interruption puts the weights back to the last step that passed: a ramp
 * never stays on weights its gate did not pass.
 */
async function run(step: RampStep, ctx: ActionContext): Promise<StepOutcome> {
  const dns = ctx.weights()
  const ttl = await dns.ttl(ctx.signal)
  if (step.bake < ttl) {
    if (!step.allowShortBake)
      return {
        status: 'failed',
        message: `the bake of ${step.bake} s is shorter than the TTL of ${dns.label} (${ttl} s); not every client would see a step before it is judged`,
      }
    ctx.warn(`bake of ${step.bake} s is shorter than the TTL of ${ttl} s (allowShortBake is set)`)
  }
  const now = await dns.readWeights(ctx.signal)
  if (!(step.set in now)) return {status: 'error', message: `${dns.label} has no weighted set "${step.set}"; it has ${Object.keys(now).join(', ')}`}
  // A resumed ramp keeps the split it started from, and goes on from where the weights are now:
  // steps below the set's current share are done, and the current one is judged again.
  const first = ctx.resumed?.find((m) => m.kind === 'weights' && m.phase === 'intent')
  const start = (first?.before as WeightMap | undefined) ?? now
  let from = 0
  if (ctx.resumed) {
    const total = Object.values(now).reduce((a, b) => a + b, 0)
    const share = total > 0 ? (now[step.set] / total) * 100 : 0
    from = step.schedule.findIndex((p) => p >= share - 0.5)
    if (from < 0) from = step.schedule.length
    if (from > 0)
      ctx.progress(
        `resuming at ${step.set} ${Math.round(share)}%: ${step.schedule
          .slice(0, from)
          .map((p) => `${p}%`)
          .join(', ')} done before`,
      )
  }

  let current = now
  let lastGood = from > 0 ? weightsAt(step.schedule[from - 1], step.set, start) : start
  let lastGoodLabel = from > 0 ? `${step.set} ${step.schedule[from - 1]}% (${describeWeights(lastGood)})` : `the starting weights (${describeWeights(start)})`
  const verdicts: GateVerdict[] = []
  // Puts the weights back to the last step that passed, and says so (or why it could not). It
  // runs after an interruption too, so it gets a deadline of its own rather than the run's signal.
  const revert = async (): Promise<{ok: boolean; text: string}> => {
    if (sameWeights(current, lastGood)) return {ok: true, text: `weights back to ${lastGoodLabel}`}
    const deadline = AbortSignal.timeout(revertDeadline * 1000)
    try {
      await ctx.change('weights', dns.label, current, lastGood, () => dns.applyWeights(lastGood, deadline))
    } catch (error) {
      return {
        ok: false,
        text: `could not put the weights back to ${lastGoodLabel}${deadline.aborted ? ` within ${revertDeadline} s` : ''}: ${(error as Error).message}`,
      }
    }
    current = lastGood
    return {
      ok: true,
      text: `weights back to ${lastGoodLabel}${deadline.aborted ? ` (the change is made; it had not reached every name server within ${revertDeadline} s)` : ''}`,
    }
  }
  const interrupted = async (at: string): Promise<StepOutcome> => ({status: 'interrupted', message: `interrupted at ${at}; ${(await revert()).text}`, verdicts})

  for (const [k, percent] of step.schedule.slice(from).entries()) {
    // A pause (`sluice pause`) holds here, between steps, on weights whose gate passed.
    if (k > 0) await ctx.checkpoint(`before ${step.set} ${percent}%, at ${lastGoodLabel}`)
    if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${step.set} ${percent}%; holding at ${lastGoodLabel}`, verdicts}
    const weights = weightsAt(percent, step.set, start)
    const at = `${step.set} ${percent}%`
    if (!sameWeights(weights, current)) {
      const before = current
      // From here the weights may be the new ones, whether or not the change reports back.
      current = weights
      try {
        await ctx.change('weights', dns.label, before, weights, () => dns.applyWeights(weights, ctx.signal))
      } catch (error) {
        if (ctx.signal.aborted) return interrupted(at)
        // A change that failed or timed out may still have landed: go back to what passed.
        return {status: 'error', message: `${(error as Error).message}; ${(await revert()).text}`, verdicts}
      }
    }
    ctx.progress(`${step.set} at ${percent}% (${describeWeights(weights)}), baking ${step.bake} s`)
    if (step.gate) {
      const result = await ctx.watch(step.gate, step.bake, at)
      verdicts.push(...result.verdicts)
      if (result.outcome === 'interrupted') return interrupted(at)
      if (result.outcome === 'fail') {
        // A gate that failed, or whose source could not be read: either way not a pass.
        const back = await revert()
        const outcome = gateFailure(step, result, back.text)
        return {...outcome, status: back.ok ? outcome.status : 'error', verdicts}
      }
    } else {
      if ((await ctx.hold(step.bake, `in the bake at ${step.set} ${percent}%`)) === 'interrupted') return interrupted(at)
    }
    lastGood = weights
    lastGoodLabel = `${step.set} ${percent}% (${describeWeights(weights)})`
  }
  return {status: 'done', message: `${step.set} at ${step.schedule.at(-1)}%`, verdicts}
}

const weightsKind = 'weights'

/**
 * Seconds a ramp's step back may take. A step back is a read and one change, each answering in
 * well under a second: 20 s leaves room for one hung attempt (10 s) and its retry. It is not
 * the run's signal, because it has to run after an interruption.
 */
const revertDeadline = 20

/** Turns a schedule into the list of percentages the ramp steps through. */
function expandSchedule(schedule: ScheduleData, path: Path, fail: (p: Path, m: string) => void): number[] {
  let steps: number[]
  if (Array.isArray(schedule)) {
    steps = schedule
  } else if ('linear' in schedule) {
    const {from, to, steps: n} = schedule.linear
    steps = Array.from({length: n}, (_, i) => from + ((to - from) * i) / (n - 1))
  } else {
    const {from, factor, to} = schedule.exponential
    // Returning here also keeps the loop below from multiplying zero for ever.
    if (from <= 0) {
      fail([...path, 'exponential', 'from'], `expected a start above 0 %, got ${from}`)
      return []
    }
    // Counted before any is made: a factor just above 1 would make billions.
    const count = to > from ? Math.ceil(Math.log(to / from) / Math.log(factor)) + 1 : 1
    if (count > limits.maxScheduleSteps) {
      fail(
        [...path, 'exponential', 'factor'],
        `expected at most ${limits.maxScheduleSteps} steps, but a factor of ${factor} from ${from}% to ${to}% makes ${count}`,
      )
      return []
    }
    steps = []
    for (let p = from; p < to; p *= factor) steps.push(p)
    steps.push(to)
  }
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (p > 100) fail(at, `expected a weight of at most 100%, got ${p}%`)
    if (p < 1) fail(at, `expected a weight of at least 1%, got ${p}%`)
  })
  // Route 53 weights are whole numbers; the ramped set gets p and the others share 100 − p.
  steps = steps.map((p) => Math.round(p))
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (i > 0 && p <= steps[i - 1]) fail(at, `expected each step above the one before, got ${p}% after ${steps[i - 1]}%`)
  })
  return steps
}

export const ramp: ActionDefinition<RampStep, typeof rampSchema> = {
  action: 'ramp',
  schema: rampSchema,
  defaultOnFailure: 'rollback',
  title: (step) => `Ramp ${step.set}: ${step.schedule.map((p) => `${p}%`).join(' → ')}`,
  plan(step, {targets, live}) {
    const others = Object.keys(backendOf(targets).weightedSets ?? {}).filter((s) => s !== step.set)
    const lines = [`${step.set} ${step.schedule.map((p) => `${p}%`).join(' → ')} of ${backendOf(targets).weightsLabel} (the rest to ${others.join(', ')})`]
    if (live?.weights) {
      const path = step.schedule.map((p) => describeWeights(weightsAt(p, step.set, live.weights!)))
      lines.push(`weights ${describeWeights(live.weights)} → ${path.join(' → ')}, one change per step`)
    }
    return [...lines, `bake ${step.bake} s per step`, ...gatePlan(step)]
  },
  project: (step, live) => (live.weights ? {...live, weights: weightsAt(step.schedule.at(-1)!, step.set, live.weights)} : live),
  changesLive: true,
  changes: 'weights',
  resolve(raw, {common, path, fail, gate: resolveGate, backend, targets, defaults}) {
    const sets = backend.weightedSets
    // On HAProxy the sets are the ramp map's keys: backend names.
    const {noun, plural, at} = backend.sets
    if (!sets) fail(path, 'a ramp step needs a weighted DNS record (targets.dns) or a HAProxy ramp map (targets.haproxy.rampMap)')
    else if (!(raw.set in sets)) fail([...path, 'set'], `no ${noun} "${raw.set}" in ${at}; it has ${Object.keys(sets).join(', ')}`)
    else if (Object.keys(sets).length < 2) fail([...path, 'set'], `a ramp moves traffic between ${plural}: ${at} needs at least two`)
    const schedule = expandSchedule(raw.schedule, [...path, 'schedule'], fail)
    const bake = raw.bake ?? defaults.bake ?? defaultBake
    // HAProxy routes each request by the map as it is (a TTL of 0), so only a DNS record's TTL bounds the bake.
    const ttl = targets.dns?.ttl
    if (ttl !== undefined && bake < ttl && !raw.allowShortBake)
      fail(
        [...path, raw.bake === undefined ? 'action' : 'bake'],
        `a bake of ${bake} s is shorter than the record's TTL of ${ttl} s, so not every client would have seen a step before it is judged; make it at least ${ttl} s, or set allowShortBake: true`,
      )
    const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
    return {...raw, ...common, schedule, bake, gate}
  },
  metricsRead: (raw) => (raw.gate ? [raw.gate.metric] : []),
  scaleTimes: (step, {seconds, gate}) => ({...step, bake: seconds(step.bake), ...(step.gate ? {gate: gate(step.gate)} : {})}),
  locks: (_step, targets) => backendOf(targets).locks.weights(),
  iam: (_step, targets) => backendOf(targets).iam.weights(),
  mutations: {
    [weightsKind]: {
      subject: (m) => `${m.resource}#${weightsKind}`,
      async settle(m, control) {
        const now = await control.weights!.readWeights()
        const pick = (w: WeightMap) => Object.fromEntries(Object.keys(w).map((k) => [k, now[k]]))
        if (sameState(pick(m.after as WeightMap), m.after)) return 'applied'
        if (sameState(pick(m.before as WeightMap), m.before)) return 'not applied'
        return null
      },
      async undo(changes, control) {
        const original = changes[0].before as WeightMap
        const last = changes.at(-1)!
        if (sameState(original, last.after)) return `the weights of ${last.resource} are back where the run found them`
        return {
          kind: weightsKind,
          resource: last.resource,
          before: last.after,
          after: original,
          describe: `set the weights of ${last.resource} back to ${describeWeights(original)}`,
          apply: () => control.weights!.applyWeights(original),
        }
      },
      async drift(changes, control) {
        const last = changes.at(-1)!
        const left = last.after as WeightMap
        const all = await control.weights!.readWeights()
        const now = Object.fromEntries(Object.keys(left).map((k) => [k, all[k]]))
        if (sameState(now, left)) return null
        return {
          subject: `the weights of ${last.resource}`,
          left: describeWeights(left),
          now: describeWeights(now),
          reapply: [
            {
              kind: weightsKind,
              resource: last.resource,
              before: now,
              after: left,
              describe: `set the weights of ${last.resource} back to ${describeWeights(left)}`,
              apply: () => control.weights!.applyWeights(left),
            },
          ],
        }
      },
    },
  },
  run,
}
